package printers

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/converge-dev/converge/framework/api"
)

// TableAccept is the Accept header that asks an API server for a Table.
const TableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

// Table is a meta.k8s.io/v1 Table as the server returns it.
type Table struct {
	Kind              string        `json:"kind,omitempty"`
	APIVersion        string        `json:"apiVersion,omitempty"`
	Metadata          api.ListMeta  `json:"metadata"`
	ColumnDefinitions []TableColumn `json:"columnDefinitions"`
	Rows              []TableRow    `json:"rows"`
}

// TableColumn describes one column.
type TableColumn struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format,omitempty"`
	Description string `json:"description,omitempty"`
	Priority    int32  `json:"priority,omitempty"`
}

// TableRow is one row: its cells and the object (usually its metadata only).
type TableRow struct {
	Cells  []any           `json:"cells"`
	Object json.RawMessage `json:"object,omitempty"`
}

// DecodeTable decodes a Table response body.
func DecodeTable(data []byte) (*Table, error) {
	var t Table
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("decode table: %w", err)
	}
	if t.Kind != "Table" {
		return nil, fmt.Errorf("decode table: the server answered a %q, not a Table", t.Kind)
	}
	return &t, nil
}

// Namespace returns the namespace of the row's object, "" if unknown.
func (r TableRow) Namespace() string {
	var o struct {
		Metadata struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(r.Object, &o)
	return o.Metadata.Namespace
}

// TableOptions control table printing.
type TableOptions struct {
	// Wide includes the columns of priority > 0.
	Wide bool
	// WithNamespace adds a leading NAMESPACE column (all-namespaces listings).
	WithNamespace bool
	// NoHeaders omits the header line.
	NoHeaders bool
	// KindPrefix, when set, is prepended to the name column as "PREFIX/NAME"
	// (kubectl does this when several resource types are printed).
	KindPrefix string
}

// TablePrinter prints Tables; see the package doc for its contract.
type TablePrinter struct {
	opts          TableOptions
	columns       []int // indices of the printed columns, set by the first table with columns
	headers       []string
	nameCol       int
	headerPrinted bool
}

// NewTablePrinter returns a printer with opts.
func NewTablePrinter(opts TableOptions) *TablePrinter {
	return &TablePrinter{opts: opts, nameCol: -1}
}

// Print writes t's rows (and the header the first time) to w. A table without
// column definitions (a watch event after the first) reuses the last columns.
func (p *TablePrinter) Print(w io.Writer, t *Table) error {
	if len(t.ColumnDefinitions) > 0 {
		p.columns, p.headers, p.nameCol = nil, nil, -1
		for i, c := range t.ColumnDefinitions {
			if c.Priority > 0 && !p.opts.Wide {
				continue
			}
			if p.nameCol < 0 && (c.Format == "name" || strings.EqualFold(c.Name, "name")) {
				p.nameCol = i
			}
			p.columns = append(p.columns, i)
			p.headers = append(p.headers, strings.ToUpper(c.Name))
		}
	}
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	if !p.headerPrinted && !p.opts.NoHeaders && len(t.Rows) > 0 {
		h := p.headers
		if p.opts.WithNamespace {
			h = append([]string{"NAMESPACE"}, h...)
		}
		fmt.Fprintln(tw, strings.Join(h, "\t"))
		p.headerPrinted = true
	}
	for _, r := range t.Rows {
		var cells []string
		if p.opts.WithNamespace {
			cells = append(cells, r.Namespace())
		}
		for _, i := range p.columns {
			var v any
			if i < len(r.Cells) {
				v = r.Cells[i]
			}
			s := FormatCell(v)
			if i == p.nameCol && p.opts.KindPrefix != "" {
				s = p.opts.KindPrefix + "/" + s
			}
			cells = append(cells, s)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// FormatCell renders one table cell like kubectl: nil is "<none>", integral
// numbers have no decimals, lists are comma-separated, objects are JSON.
func FormatCell(v any) string {
	switch x := v.(type) {
	case nil:
		return "<none>"
	case string:
		return x
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = FormatCell(e)
		}
		return strings.Join(parts, ",")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
