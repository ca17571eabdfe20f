package install

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/tailscale/hujson"
)

// JSON editing that keeps every byte acc did not write
// (docs/decisions.md#9-installer-ownership, docs/adapters.md#what-acc-install-writes). Files are parsed with tailscale/hujson, which
// keeps comments, whitespace and key order, and edited with JSON Patch
// operations on that tree; only the bytes of the entry acc adds (and the
// containers it creates) are new, and removing them gives the old bytes
// back exactly.

// jsonDoc is one JSON (or JWCC: comments, trailing commas) document.
type jsonDoc struct {
	v      hujson.Value
	indent string // the file's indent unit, measured ("  " by default)
	eol    string // the file's line ending: "\r\n" when it uses CRLF
}

// maxDepth bounds the nesting acc parses (hujson recurses per level; a
// file nested millions deep would exhaust the stack). No client
// configuration comes near it.
const maxDepth = 10000

// parseJSON parses src; an empty or blank src is an empty object.
func parseJSON(src []byte) (*jsonDoc, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		src = []byte("{}\n")
	}
	if depth(src) > maxDepth {
		return nil, fmt.Errorf("it nests deeper than %d levels", maxDepth)
	}
	v, err := hujson.Parse(src)
	if err != nil {
		return nil, err
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, fmt.Errorf("the top level is not an object")
	}
	eol := "\n"
	if bytes.Contains(src, []byte("\r\n")) {
		eol = "\r\n"
	}
	return &jsonDoc{v: v, indent: measureIndent(src), eol: eol}, nil
}

// depth is the deepest nesting of objects and arrays in src, strings and
// comments aside (approximately: a bracket inside a comment counts, which
// only errs on the safe side).
func depth(src []byte) int {
	d, max, inStr, esc := 0, 0, false, false
	for _, c := range src {
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			d++
			if d > max {
				max = d
			}
		case c == '}' || c == ']':
			d--
		}
	}
	return max
}

// measureIndent returns the whitespace of the first indented line: a tab,
// or the run of spaces; two spaces when no line is indented.
func measureIndent(src []byte) string {
	for _, line := range bytes.Split(src, []byte("\n"))[1:] {
		trimmed := bytes.TrimLeft(line, " \t")
		if len(trimmed) == 0 || len(trimmed) == len(line) {
			continue
		}
		ws := line[:len(line)-len(trimmed)]
		if ws[0] == '\t' {
			return "\t"
		}
		return string(bytes.TrimRight(ws, "\t"))
	}
	return "  "
}

func (d *jsonDoc) bytes() []byte { return d.v.Pack() }

func pointerOf(keys []string) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(k))
	}
	return b.String()
}

// find returns the value at keys, or nil.
func (d *jsonDoc) find(keys []string) *hujson.Value {
	if len(keys) == 0 {
		return &d.v
	}
	return d.v.Find(pointerOf(keys))
}

// elements returns the array at keys (nil when absent); an existing value
// that is not an array is an error.
func (d *jsonDoc) elements(keys []string) ([]hujson.Value, error) {
	v := d.find(keys)
	if v == nil {
		return nil, nil
	}
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		return nil, fmt.Errorf("%s is not an array", strings.Join(keys, "."))
	}
	return arr.Elements, nil
}

// equalJSON compares two JSON texts (JWCC allowed) as values.
func equalJSON(a, b []byte) bool {
	var x, y any
	if standardJSON(a, &x) != nil || standardJSON(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func standardJSON(src []byte, out *any) error {
	v, err := hujson.Parse(src)
	if err != nil {
		return err
	}
	v.Standardize()
	return json.Unmarshal(v.Pack(), out)
}

// indexOf returns the index of the element equal to value in the array at
// keys, or -1.
func (d *jsonDoc) indexOf(keys []string, value []byte) (int, error) {
	elems, err := d.elements(keys)
	if err != nil {
		return -1, err
	}
	for i := range elems {
		if equalJSON(elems[i].Pack(), value) {
			return i, nil
		}
	}
	return -1, nil
}

// appendEntry appends value to the array at keys, creating the missing
// objects and the array, laid out in the file's indent at its depth. It
// returns the containers it created, outermost first. An entry already
// present is left as it is (created is nil, added false).
func (d *jsonDoc) appendEntry(keys []string, value []byte) (created [][]string, added bool, err error) {
	if i, err := d.indexOf(keys, value); err != nil || i >= 0 {
		return nil, false, err
	}
	// The deepest existing container.
	depth := 0
	for depth < len(keys) {
		v := d.find(keys[:depth+1])
		if v == nil {
			break
		}
		if depth+1 < len(keys) {
			if _, ok := v.Value.(*hujson.Object); !ok {
				return nil, false, fmt.Errorf("%s is not an object", strings.Join(keys[:depth+1], "."))
			}
		}
		depth++
	}
	var raw any
	if err := json.Unmarshal(value, &raw); err != nil {
		return nil, false, err
	}
	// Wrap the value in what is missing: [value], then {key: …} outward.
	var wrapped any = raw
	if depth < len(keys) {
		wrapped = []any{raw}
		for i := len(keys) - 1; i > depth; i-- {
			wrapped = map[string]any{keys[i]: wrapped}
		}
		for i := depth + 1; i <= len(keys); i++ {
			created = append(created, append([]string(nil), keys[:i]...))
		}
	}
	// The new value is laid out at the depth it lands at, and put on its
	// own line; it goes into the tree as parsed, so its layout is kept.
	level := len(keys) + 1
	if depth < len(keys) {
		level = depth + 1
	}
	prefix := strings.Repeat(d.indent, level)
	text, err := json.MarshalIndent(wrapped, prefix, d.indent)
	if err != nil {
		return nil, false, err
	}
	if d.eol != "\n" {
		text = bytes.ReplaceAll(text, []byte("\n"), []byte(d.eol))
	}
	nv, err := hujson.Parse(text)
	if err != nil {
		return nil, false, err
	}
	nv.BeforeExtra = hujson.Extra(d.eol + prefix)
	// A trailing comma (JWCC) stays a trailing comma: hujson marks it by a
	// non-nil AfterExtra on the last value, which the new last value takes
	// over; the old last value keeps its own, so removing the new one later
	// restores the comma.
	if depth == len(keys) {
		arr := d.find(keys).Value.(*hujson.Array)
		if n := len(arr.Elements); n > 0 && arr.Elements[n-1].AfterExtra != nil {
			nv.AfterExtra = hujson.Extra{}
		}
		arr.Elements = append(arr.Elements, nv)
	} else {
		parent := d.find(keys[:depth]).Value.(*hujson.Object)
		name := hujson.Value{BeforeExtra: nv.BeforeExtra, Value: hujson.String(keys[depth])}
		nv.BeforeExtra = hujson.Extra(" ")
		if n := len(parent.Members); n > 0 && parent.Members[n-1].Value.AfterExtra != nil {
			nv.AfterExtra = hujson.Extra{}
		}
		parent.Members = append(parent.Members, hujson.ObjectMember{Name: name, Value: nv})
	}
	// A container that existed keeps its own closing layout, so removing
	// the entry later gives its bytes back exactly.
	return created, true, nil
}

// removeEntry removes the element equal to value from the array at keys.
// It reports whether the element was there.
func (d *jsonDoc) removeEntry(keys []string, value []byte) (bool, error) {
	i, err := d.indexOf(keys, value)
	if err != nil || i < 0 {
		return false, err
	}
	return true, d.remove(keys, i)
}

// remove deletes member or element i of the container at keys, with the
// whitespace and comments before it (the exact inverse of appendEntry,
// which adds one with its own leading layout). When it was the last one
// and carried a trailing comma, the new last one carries it, so the file's
// bytes come back exactly.
func (d *jsonDoc) remove(keys []string, i int) error {
	switch c := d.find(keys).Value.(type) {
	case *hujson.Array:
		trailing := i == len(c.Elements)-1 && c.Elements[i].AfterExtra != nil
		c.Elements = slices.Delete(c.Elements, i, i+1)
		if n := len(c.Elements); trailing && n > 0 && c.Elements[n-1].AfterExtra == nil {
			c.Elements[n-1].AfterExtra = hujson.Extra{}
		}
	case *hujson.Object:
		trailing := i == len(c.Members)-1 && c.Members[i].Value.AfterExtra != nil
		c.Members = slices.Delete(c.Members, i, i+1)
		if n := len(c.Members); trailing && n > 0 && c.Members[n-1].Value.AfterExtra == nil {
			c.Members[n-1].Value.AfterExtra = hujson.Extra{}
		}
	default:
		return fmt.Errorf("%s is not a container", strings.Join(keys, "."))
	}
	return nil
}

// prune removes each container of created that is empty, deepest first,
// so that the containers acc created go when nothing is left in them.
func (d *jsonDoc) prune(created [][]string) error {
	sorted := slices.Clone(created)
	slices.SortStableFunc(sorted, func(a, b []string) int { return len(b) - len(a) })
	for _, c := range sorted {
		v := d.find(c)
		if len(c) == 0 || v == nil || !emptyContainer(v) {
			continue
		}
		parent := d.find(c[:len(c)-1]).Value.(*hujson.Object)
		idx := slices.IndexFunc(parent.Members, func(m hujson.ObjectMember) bool {
			return m.Name.Value.(hujson.Literal).String() == c[len(c)-1]
		})
		if err := d.remove(c[:len(c)-1], idx); err != nil {
			return err
		}
	}
	return nil
}

func emptyContainer(v *hujson.Value) bool {
	switch x := v.Value.(type) {
	case *hujson.Object:
		return len(x.Members) == 0
	case *hujson.Array:
		return len(x.Elements) == 0
	}
	return false
}

// shimMarker is in every hook command acc writes (the shim's file name).
const shimMarker = "acc-hook-shim"

// accEntries counts the elements of the array at keys that are acc's,
// edited or not: with identity (Kimi's plugin "id"), those whose member
// identity equals value's; otherwise those holding a string that runs acc's
// shim. Strings are compared decoded, so quoting and JSON escapes of the
// data home's path do not matter.
func (d *jsonDoc) accEntries(keys []string, value []byte, identity string) (int, error) {
	elems, err := d.elements(keys)
	if err != nil {
		return 0, err
	}
	var want any
	if identity != "" {
		var w map[string]any
		if json.Unmarshal(value, &w) == nil {
			want = w[identity]
		}
	}
	n := 0
	for i := range elems {
		var v any
		if standardJSON(elems[i].Pack(), &v) != nil {
			continue
		}
		if identity != "" {
			if m, ok := v.(map[string]any); ok && want != nil && m[identity] == want {
				n++
			}
			continue
		}
		if holdsString(v, shimMarker) {
			n++
		}
	}
	return n, nil
}

func holdsString(v any, sub string) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, sub)
	case map[string]any:
		for _, e := range x {
			if holdsString(e, sub) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if holdsString(e, sub) {
				return true
			}
		}
	}
	return false
}

// checkKeys refuses (exit 5) an object on the path to keys that names one
// key twice: JSON readers keep the last, so acc's entry in the first would
// never be read.
func (d *jsonDoc) checkKeys(keys []string, path string) error {
	v := &d.v
	for depth := 0; ; depth++ {
		obj, ok := v.Value.(*hujson.Object)
		if !ok {
			return nil
		}
		seen := map[string]bool{}
		for _, m := range obj.Members {
			name := m.Name.Value.(hujson.Literal).String()
			if seen[name] {
				return protocol.Errorf(protocol.ReasonInstallConflict, "%s names %q twice in one object; the client reads only the last, so acc cannot add its entries there — merge them, then run acc install again", path, name).With("path", path)
			}
			seen[name] = true
		}
		if depth == len(keys) {
			return nil
		}
		next := d.find(keys[:depth+1])
		if next == nil {
			return nil
		}
		v = next
	}
}
