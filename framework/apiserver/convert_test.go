package apiserver

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/converge-dev/converge/framework/api"
)

// countingConverter converts example.com Widgets by rewriting apiVersion and
// counts the calls of Convert and ConvertList.
type countingConverter struct {
	mu       sync.Mutex
	single   int
	lists    [][]string // names of each ConvertList call
	failList error
}

func (c *countingConverter) convert(obj map[string]any, to api.GroupVersion) (map[string]any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.single++
	obj["apiVersion"] = to.String()
	obj["converted"] = true
	return obj, nil
}

func (c *countingConverter) convertList(objs []map[string]any, to api.GroupVersion) ([]map[string]any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	for _, o := range objs {
		names = append(names, api.NestedString(o, "metadata", "name"))
	}
	c.lists = append(c.lists, names)
	if c.failList != nil {
		return nil, c.failList
	}
	for _, o := range objs {
		o["apiVersion"] = to.String()
		o["converted"] = true
	}
	return objs, nil
}

func widgetObject(t *testing.T, name, apiVersion string, rv int64) *cachedObject {
	t.Helper()
	b, err := encodeStored(map[string]any{"apiVersion": apiVersion, "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": "default"}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := buildCachedObject("/registry/example.com/widgets/default/"+name, b, rv, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestRenderAll(t *testing.T) {
	t.Parallel()
	c := &countingConverter{}
	gv := api.GroupVersion{Group: "example.com", Version: "v1"}
	v := view{version: gv.String(), gv: gv, convert: c.convert, convertList: c.convertList}
	objs := []*cachedObject{
		widgetObject(t, "a", "example.com/v2", 2),
		widgetObject(t, "b", "example.com/v1", 3), // already in v1
		widgetObject(t, "c", "example.com/v2", 4),
	}
	// One object already rendered in v1 by the single-object path.
	if _, err := objs[2].dataFor(v); err != nil || c.single != 1 {
		t.Fatalf("dataFor: %v, %d single conversions", err, c.single)
	}
	objs = append(objs, widgetObject(t, "d", "example.com/v2", 5))

	if err := v.renderAll(objs); err != nil {
		t.Fatal(err)
	}
	if len(c.lists) != 1 || strings.Join(c.lists[0], ",") != "a,d" {
		t.Fatalf("ConvertList calls %v, want one with a,d", c.lists)
	}
	// Every read now comes from the per-version cache: no more conversions.
	for _, o := range objs {
		data, err := o.dataFor(v)
		if err != nil {
			t.Fatal(err)
		}
		m, err := api.DecodeMap(data)
		if err != nil {
			t.Fatal(err)
		}
		if m["apiVersion"] != "example.com/v1" || (o.name != "b" && m["converted"] != true) {
			t.Errorf("%s: %s", o.name, data)
		}
		if m["metadata"].(map[string]any)["resourceVersion"] == nil {
			t.Errorf("%s: no resourceVersion: %s", o.name, data)
		}
		f, err := frameBytes(o, api.EventAdded, v)
		if err != nil || !strings.HasPrefix(string(f), `{"type":"ADDED","object":`) || !strings.Contains(string(f), string(data)) {
			t.Errorf("%s: frame %s, %v", o.name, f, err)
		}
	}
	if c.single != 1 || len(c.lists) != 1 {
		t.Errorf("%d single conversions and %d list conversions after reads, want 1 and 1", c.single, len(c.lists))
	}
	// A second list converts nothing.
	if err := v.renderAll(objs); err != nil || len(c.lists) != 1 {
		t.Errorf("second renderAll: %v, %d list conversions", err, len(c.lists))
	}
}

func TestRenderAllFailure(t *testing.T) {
	t.Parallel()
	c := &countingConverter{failList: errors.New("conversion webhook for example.com/v2, Kind=Widget failed: boom")}
	gv := api.GroupVersion{Group: "example.com", Version: "v1"}
	v := view{version: gv.String(), gv: gv, convert: c.convert, convertList: c.convertList}
	objs := []*cachedObject{widgetObject(t, "a", "example.com/v2", 2), widgetObject(t, "b", "example.com/v2", 3)}
	if err := v.renderAll(objs); err == nil || err.Error() != c.failList.Error() {
		t.Fatalf("error %v, want %v", err, c.failList)
	}
	// Nothing was remembered: the next list asks again.
	c.failList = nil
	if err := v.renderAll(objs); err != nil || len(c.lists) != 2 || len(c.lists[1]) != 2 {
		t.Fatalf("retry: %v, calls %v", err, c.lists)
	}
}

func TestRenderAllWithoutConvertList(t *testing.T) {
	t.Parallel()
	c := &countingConverter{}
	gv := api.GroupVersion{Group: "example.com", Version: "v1"}
	v := view{version: gv.String(), gv: gv, convert: c.convert}
	objs := []*cachedObject{widgetObject(t, "a", "example.com/v2", 2), widgetObject(t, "b", "example.com/v2", 3)}
	if err := v.renderAll(objs); err != nil || c.single != 0 {
		t.Fatalf("renderAll: %v, %d conversions", err, c.single)
	}
	for _, o := range objs {
		if _, err := o.dataFor(v); err != nil {
			t.Fatal(err)
		}
	}
	if c.single != 2 {
		t.Errorf("%d single conversions, want 2 (one per object)", c.single)
	}
	// Identity views do nothing.
	if err := (view{}).renderAll(objs); err != nil {
		t.Fatal(err)
	}
}
