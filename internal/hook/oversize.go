package hook

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

// maxFieldBytes bounds one top-level key or scalar value scanFields keeps,
// in bytes as written in the JSON text; a longer one is skipped. Session
// ids, directories, event and tool names are far shorter.
const maxFieldBytes = 64 << 10

// scanFields reads a JSON object from r to its end and calls found with
// each top-level key whose value is a scalar (string, number, true, false,
// null), decoded by encoding/json; objects and arrays are skipped. Unlike
// json.Decoder, which holds a whole string token in memory, it keeps at
// most maxFieldBytes of any one field, so a payload of any size is read in
// memory bounded by that and its buffer: the time is linear in the payload
// and the caller bounds it by not waiting. It returns true when the object
// was read to its closing brace, false when r ended or the text stopped
// being JSON before that (what was found until then stays found).
func scanFields(r io.Reader, found func(key string, value any)) bool {
	s := &fieldScanner{r: bufio.NewReaderSize(r, 64<<10)}
	if c, ok := s.next(); !ok || c != '{' {
		return false
	}
	for {
		c, ok := s.next()
		switch {
		case !ok:
			return false
		case c == '}':
			return true
		case c == ',':
			continue
		case c != '"':
			return false
		}
		key, keyFits, ok := s.str()
		if !ok {
			return false
		}
		if c, ok := s.next(); !ok || c != ':' {
			return false
		}
		c, ok = s.next()
		if !ok {
			return false
		}
		var raw []byte
		fits := false
		switch c {
		case '{', '[':
			if !s.skipNested() {
				return false
			}
			continue
		case '"':
			raw, fits, ok = s.str()
		default:
			raw, fits, ok = s.literal(c)
		}
		if !ok {
			return false
		}
		if !keyFits || !fits {
			continue
		}
		var k string
		if json.Unmarshal(key, &k) != nil {
			return false
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return false
		}
		found(k, v)
	}
}

type fieldScanner struct {
	r *bufio.Reader
}

// next is the next byte that is not JSON white space.
func (s *fieldScanner) next() (byte, bool) {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return 0, false
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, true
		}
	}
}

// str reads a string whose opening quote was read; raw is its text with
// both quotes while it fits in maxFieldBytes (fits false after that). The
// text between quotes and backslashes is passed over a buffer at a time,
// not a byte at a time: a tool input of many megabytes is mostly such text.
func (s *fieldScanner) str() (raw []byte, fits, ok bool) {
	raw, fits = []byte{'"'}, true
	keep := func(b []byte) {
		if fits && len(raw)+len(b) <= maxFieldBytes {
			raw = append(raw, b...)
			return
		}
		fits, raw = false, nil
	}
	for {
		if _, err := s.r.Peek(1); err != nil {
			return nil, false, false
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		// The plain run ends at the first quote before the first backslash.
		end := bytes.IndexByte(buf, '\\')
		if end < 0 {
			end = len(buf)
		}
		if q := bytes.IndexByte(buf[:end], '"'); q >= 0 {
			end = q
		}
		keep(buf[:end])
		_, _ = s.r.Discard(end)
		if end == len(buf) {
			continue
		}
		c, err := s.r.ReadByte()
		if err != nil {
			return nil, false, false
		}
		keep([]byte{c})
		if c == '"' {
			return raw, fits, true
		}
		// A backslash: the byte after it is part of the string.
		c, err = s.r.ReadByte()
		if err != nil {
			return nil, false, false
		}
		keep([]byte{c})
	}
}

// literal reads a number, true, false or null whose first byte is first.
func (s *fieldScanner) literal(first byte) (raw []byte, fits, ok bool) {
	raw = []byte{first}
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return nil, false, false
		}
		switch c {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			_ = s.r.UnreadByte()
			return raw, len(raw) <= maxFieldBytes, true
		}
		if len(raw) <= maxFieldBytes {
			raw = append(raw, c)
		}
	}
}

// skipNested reads past an object or array whose opening bracket was read.
func (s *fieldScanner) skipNested() bool {
	for depth := 1; depth > 0; {
		c, err := s.r.ReadByte()
		if err != nil {
			return false
		}
		switch c {
		case '"':
			if _, _, ok := s.str(); !ok {
				return false
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
	}
	return true
}
