package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// The tool tables of docs/mcp.md sit between these markers and are
// rendered from the registry by toolTables.
const (
	toolsBegin = "<!-- BEGIN generated tool tables: ACC_UPDATE=1 go test ./internal/mcpserver/ -run TestToolTablesAreCurrent; do not edit by hand -->"
	toolsEnd   = "<!-- END generated tool tables -->"
)

// argName is one argument as the tables show it: bold when required.
func argName(k string, required bool) string {
	if required {
		return "**`" + k + "`**"
	}
	return "`" + k + "`"
}

// argWords is one argument with what its schema bounds: an enum's values,
// an integer's range, an array's length.
func argWords(k string, s *jsonschema.Schema, required bool) string {
	w := argName(k, required)
	switch {
	case s.Const != nil:
		w += fmt.Sprintf(" `%v`", *s.Const)
	case len(s.Enum) > 0:
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			vals[i] = fmt.Sprint(e)
		}
		w += " " + strings.Join(vals, "\\|")
	case s.Type == "integer" && s.Minimum != nil && s.Maximum != nil:
		w += fmt.Sprintf(" %d–%d", int64(*s.Minimum), int64(*s.Maximum))
	case s.Type == "integer" && s.Minimum != nil:
		w += fmt.Sprintf(" ≥ %d", int64(*s.Minimum))
	case s.Type == "array" && s.MinItems != nil && s.MaxItems != nil:
		w += fmt.Sprintf(" (%d–%d ids)", *s.MinItems, *s.MaxItems)
	case s.Type == "array":
		w += " (list)"
	}
	return w
}

// shapeWords says what one alternative of a oneOf requires: the constants
// it selects on and the fields it needs.
func shapeWords(alt *jsonschema.Schema) string {
	var parts []string
	for _, k := range sortedKeys(alt.Properties) {
		if c := alt.Properties[k].Const; c != nil {
			parts = append(parts, fmt.Sprintf("`%s` %v", k, *c))
		}
	}
	var need []string
	for _, k := range alt.Required {
		need = append(need, "`"+k+"`")
	}
	if len(need) > 0 {
		if len(parts) > 0 {
			parts = append(parts, "with "+strings.Join(need, " + "))
		} else {
			parts = append(parts, strings.Join(need, " + "))
		}
	}
	return strings.Join(parts, " ")
}

// toolTables renders the tool table (arguments and what each tool does)
// and the annotations table (what each call does to the room, and why)
// from the registry.
func toolTables() string {
	var b strings.Builder
	b.WriteString(toolsBegin + "\n\n")
	b.WriteString("| Tool | Arguments (required in bold) | Does |\n|---|---|---|\n")
	tools := make([]tool, 0, len(registry))
	for _, mk := range registry {
		tools = append(tools, mk())
	}
	for _, t := range tools {
		s := t.def.InputSchema.(*jsonschema.Schema)
		req := map[string]bool{}
		var args []string
		for _, k := range s.Required {
			req[k] = true
			args = append(args, argWords(k, s.Properties[k], true))
		}
		rest := sortedKeys(s.Properties)
		sort.Strings(rest)
		for _, k := range rest {
			if !req[k] {
				args = append(args, argWords(k, s.Properties[k], false))
			}
		}
		words := strings.Join(args, ", ")
		if words == "" {
			words = "none"
		}
		if len(s.OneOf) > 0 {
			alts := make([]string, len(s.OneOf))
			for i, alt := range s.OneOf {
				alts[i] = shapeWords(alt)
			}
			words += "; exactly one of: " + strings.Join(alts, "; or ")
		}
		if s.Not != nil && len(s.Not.AnyOf) > 0 {
			pairs := make([]string, len(s.Not.AnyOf))
			for i, p := range s.Not.AnyOf {
				pairs[i] = "`" + strings.Join(p.Required, "` + `") + "`"
			}
			words += "; never " + strings.Join(pairs, " nor ")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", t.def.Name, words, t.does)
	}
	b.WriteString("\nEach tool's annotations (`tools/list`) say what a call does to the room; every tool has\n" +
		"`openWorldHint: false`, since it acts on the room's store and nothing else. Like every call, a\n" +
		"read-only one resolves the connection's session (attaching it on the first call, refreshing its\n" +
		"heartbeat after); that is not counted as a change.\n\n")
	b.WriteString("| Tool | readOnlyHint | destructiveHint | idempotentHint | Why |\n|---|---|---|---|---|\n")
	for _, t := range tools {
		a := t.effect.annotations()
		fmt.Fprintf(&b, "| `%s` | %v | %v | %v | %s |\n", t.def.Name, a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, t.effect.why)
	}
	b.WriteString("\n" + toolsEnd)
	return b.String()
}

// TestToolTablesAreCurrent keeps docs/mcp.md's tool tables equal to what
// the registry renders; ACC_UPDATE=1 rewrites them in place.
func TestToolTablesAreCurrent(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "mcp.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	i, j := strings.Index(text, toolsBegin), strings.Index(text, toolsEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/mcp.md lacks the markers %q … %q", toolsBegin, toolsEnd)
	}
	got, want := text[i:j+len(toolsEnd)], toolTables()
	if os.Getenv("ACC_UPDATE") == "1" && got != want {
		text = text[:i] + want + text[j+len(toolsEnd):]
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Fatal("docs/mcp.md's tool tables are out of date with the registry; run `ACC_UPDATE=1 go test ./internal/mcpserver/ -run TestToolTablesAreCurrent`")
	}
}
