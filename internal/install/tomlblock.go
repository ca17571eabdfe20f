package install

import (
	"bytes"

	toml "github.com/pelletier/go-toml/v2"
)

// acc's managed block in a user's TOML file (docs/adapters.md#what-acc-install-writes):
// the file is never parsed and written back; acc's lines sit between two
// marker lines at the end of the file, where a table header of acc's
// cannot capture the user's last table.
const (
	blockBegin = "# >>> agents-can-communicate (managed by acc install; acc uninstall removes it)"
	blockEnd   = "# <<< agents-can-communicate"
)

// blockText is the whole managed block for body, marker lines included.
func blockText(body []byte) []byte {
	var b bytes.Buffer
	b.WriteString(blockBegin + "\n")
	b.Write(body)
	if len(body) > 0 && body[len(body)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(blockEnd + "\n")
	return b.Bytes()
}

// tomlRegion is where a managed block sits in a file: src[start:end],
// including the newline acc added before it when the file lacked one
// (sep).
type tomlRegion struct {
	start, end int
	block      []byte // the block's own bytes, markers included
	closed     bool   // its end marker is there
}

// findBlocks returns every managed block in src. An unterminated begin
// marker runs to the end of the file, so no stray table of acc's is left.
func findBlocks(src []byte) []tomlRegion {
	var out []tomlRegion
	pos := 0
	for {
		i := indexLine(src, pos, blockBegin)
		if i < 0 {
			return out
		}
		end, closed := len(src), false
		if j := indexLine(src, i, blockEnd); j >= 0 {
			end, closed = j+len(blockEnd), true
			if end < len(src) && src[end] == '\n' {
				end++
			}
		}
		out = append(out, tomlRegion{start: i, end: end, block: src[i:end], closed: closed})
		pos = end
	}
}

// indexLine finds line as a whole line of src at or after from.
func indexLine(src []byte, from int, line string) int {
	for from <= len(src) {
		k := bytes.Index(src[from:], []byte(line))
		if k < 0 {
			return -1
		}
		at := from + k
		after := at + len(line)
		if (at == 0 || src[at-1] == '\n') && (after == len(src) || src[after] == '\n' || src[after] == '\r') {
			return at
		}
		from = after
	}
	return -1
}

// addBlock returns src with its managed blocks replaced by one block for
// body at the end, and whether acc had to add a newline to end the user's
// last line first.
func addBlock(src, body []byte) (out []byte, sep bool) {
	rest := stripBlocks(src, false)
	sep = len(rest) > 0 && rest[len(rest)-1] != '\n'
	out = append([]byte(nil), rest...)
	if sep {
		out = append(out, '\n')
	}
	return append(out, blockText(body)...), sep
}

// stripBlocks removes every managed block; sep also removes the newline
// acc added before the last one.
func stripBlocks(src []byte, sep bool) []byte {
	regions := findBlocks(src)
	if len(regions) == 0 {
		return src
	}
	var out []byte
	pos := 0
	for _, r := range regions {
		out = append(out, src[pos:r.start]...)
		pos = r.end
	}
	out = append(out, src[pos:]...)
	if sep && len(out) > 0 && out[len(out)-1] == '\n' && regions[len(regions)-1].end == len(src) {
		out = out[:len(out)-1]
	}
	return out
}

// checkTOML reports whether src parses as TOML 1.0 (the file is refused,
// and left alone, when it does not). pelletier/go-toml is strict where
// clients are: an inline table cannot be extended by a later [table].
func checkTOML(src []byte) error {
	var v map[string]any
	return toml.Unmarshal(src, &v)
}

// tomlHasTable reports whether src (outside acc's blocks) defines the
// table named by keys, e.g. mcp_servers.acc: acc then refuses to add its
// own, since a duplicate table makes the client reject the whole file.
func tomlHasTable(src []byte, keys ...string) bool {
	var v map[string]any
	if err := toml.Unmarshal(stripBlocks(src, false), &v); err != nil {
		return false
	}
	var cur any = v
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[k]; !ok {
			return false
		}
	}
	return true
}

// runsShim reports whether src, a TOML file with no block of acc's, still
// names shim, the hook shim every command acc installs runs
// (adapter.InstallEnv.HookCommand): acc's lines outlived their marker
// lines, as when a client writes its configuration back from what it
// parsed (docs/adapters.md#kimi-code).
func runsShim(src []byte, shim string) bool {
	return shim != "" && bytes.Contains(src, []byte(shim))
}
