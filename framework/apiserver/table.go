package apiserver

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Server-side printing (WIRE.md §4): a meta.k8s.io/v1 Table whose rows carry the
// object's metadata as PartialObjectMetadata (or the whole object with
// includeObject=Object), so kubectl can print NAMESPACE and labels.

var defaultPrinterColumns = []registry.Column{
	{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
	{Name: "Created At", Type: "date", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
}

func (s *Server) printer(q *request) *registry.Printer {
	if q.res.Printer != nil {
		return q.res.Printer
	}
	return &registry.Printer{Columns: defaultPrinterColumns, Row: func(obj map[string]any, _ time.Time) ([]any, error) {
		return []any{api.NestedString(obj, "metadata", "name"), api.NestedString(obj, "metadata", "creationTimestamp")}, nil
	}}
}

func (s *Server) tableRow(q *request, p *registry.Printer, o *cachedObject, now time.Time) (map[string]any, error) {
	obj, err := objectMap(o, viewOf(q.res))
	if err != nil {
		return nil, internalError("%v", err)
	}
	cells, err := p.Row(obj, now)
	if err != nil {
		return nil, internalError("print %s: %v", o.name, err)
	}
	row := map[string]any{"cells": cells}
	switch q.query.Get("includeObject") {
	case "None":
	case "Object":
		row["object"] = obj
	default:
		row["object"] = map[string]any{
			"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"],
		}
	}
	return row, nil
}

func (s *Server) table(q *request, objs []*cachedObject, headers bool) (map[string]any, error) {
	p := s.printer(q)
	now := time.Now()
	rows := make([]any, 0, len(objs))
	for _, o := range objs {
		row, err := s.tableRow(q, p, o, now)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	t := map[string]any{"kind": "Table", "apiVersion": "meta.k8s.io/v1", "rows": rows}
	if headers {
		t["columnDefinitions"] = p.Columns
	} else {
		t["columnDefinitions"] = []any{}
	}
	return t, nil
}

// tableFrame renders one watch event whose object is a one-row Table.
func (s *Server) tableFrame(q *request, o *cachedObject, typ string, headers bool) []byte {
	t, err := s.table(q, []*cachedObject{o}, headers)
	if err != nil {
		b, _ := json.Marshal(map[string]any{"type": "ERROR", "object": map[string]any{
			"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": err.Error(), "code": 500}})
		return append(b, '\n')
	}
	t["metadata"] = map[string]any{"resourceVersion": fmt.Sprint(o.rv)}
	b, _ := json.Marshal(map[string]any{"type": typ, "object": t})
	return append(b, '\n')
}
