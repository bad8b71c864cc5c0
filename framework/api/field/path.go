package field

import (
	"strconv"
	"strings"
)

// Path is a field path such as spec.containers[0].image. The zero value (nil)
// is the root, rendered as "<nil>" like Kubernetes does.
type Path struct {
	name   string
	index  string
	parent *Path
}

// NewPath returns the path of name and its optional children.
func NewPath(name string, more ...string) *Path {
	p := &Path{name: name}
	for _, m := range more {
		p = p.Child(m)
	}
	return p
}

// Child returns the path of a named child (".name").
func (p *Path) Child(name string, more ...string) *Path {
	c := &Path{name: name, parent: p}
	for _, m := range more {
		c = c.Child(m)
	}
	return c
}

// Index returns the path of a list element ("[i]").
func (p *Path) Index(i int) *Path { return &Path{index: strconv.Itoa(i), parent: p} }

// Key returns the path of a map entry ("[key]").
func (p *Path) Key(k string) *Path { return &Path{index: k, parent: p} }

// String renders the path.
func (p *Path) String() string {
	if p == nil {
		return "<nil>"
	}
	var parts []*Path
	for c := p; c != nil; c = c.parent {
		parts = append(parts, c)
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		e := parts[i]
		if e.index != "" || (e.name == "" && e.parent != nil) {
			b.WriteString("[" + e.index + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(e.name)
	}
	return b.String()
}
