package cli

import (
	"io"

	"github.com/acc-go/acc/pkg/protocol"
)

// screen is where acc's text (not JSON) output goes: everything written
// through it is shown by the one display rule, protocol.EscapeText in
// TextBlock mode (docs/concepts.md#peer-text-on-the-screen). Lines and
// tabs stay; a control character, a C1 control, a line or paragraph
// separator, a bidirectional formatting character or a byte that is not
// UTF-8 is written as a visible escape, so text a peer wrote (a subject, a
// body, an intent, a claim reason, a path, an error message quoting input)
// can never move the cursor, rewrite a line or reorder what a person
// reads. acc's own words contain none of these, so they pass unchanged.
// Each Write is escaped on its own: callers write whole texts (fmt does).
type screen struct{ w io.Writer }

func (s screen) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, protocol.EscapeText(string(p), protocol.TextBlock)); err != nil {
		return 0, err
	}
	return len(p), nil
}
