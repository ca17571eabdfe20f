package mcpserver

import (
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaType is the one JSON type a schema names, ignoring the "null"
// jsonschema-go adds for a slice.
func schemaType(s *jsonschema.Schema) string {
	if s.Type != "" {
		return s.Type
	}
	for _, t := range s.Types {
		if t != "null" {
			return t
		}
	}
	return ""
}

func sortedKeys(m map[string]*jsonschema.Schema) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Each tool's argument struct and its hand-written input schema say the same
// thing: the schema inferred from the struct (jsonschema.ForType) has
// exactly the schema's properties, each of the same JSON type (an array's
// items too), and the struct's fields without omitempty are exactly the
// schema's required ones. The hand-written schema stays the source of what
// clients see (enums, bounds and the oneOf/not shapes, which a struct
// cannot carry); this keeps the decoding side from drifting away from it.
func TestArgsStructsMatchSchemas(t *testing.T) {
	for _, mk := range registry {
		tl := mk()
		name := tl.def.Name
		if tl.args == nil {
			t.Errorf("%s: no argument struct registered", name)
			continue
		}
		inferred, err := jsonschema.ForType(reflect.TypeOf(tl.args), nil)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		listed := tl.def.InputSchema.(*jsonschema.Schema)
		if got, want := sortedKeys(inferred.Properties), sortedKeys(listed.Properties); !slices.Equal(got, want) {
			t.Errorf("%s: struct fields %v, schema properties %v", name, got, want)
		}
		for k, ls := range listed.Properties {
			is, ok := inferred.Properties[k]
			if !ok {
				continue
			}
			if schemaType(is) != schemaType(ls) {
				t.Errorf("%s.%s: struct type %q, schema type %q", name, k, schemaType(is), schemaType(ls))
			}
			if ls.Items != nil && (is.Items == nil || schemaType(is.Items) != schemaType(ls.Items)) {
				t.Errorf("%s.%s: struct items %v, schema items %q", name, k, is.Items, schemaType(ls.Items))
			}
		}
		got, want := slices.Sorted(slices.Values(inferred.Required)), slices.Sorted(slices.Values(listed.Required))
		if !slices.Equal(got, want) {
			t.Errorf("%s: fields without omitempty %v, schema requires %v", name, got, want)
		}
	}
}
