package cli

import (
	"fmt"
	"strings"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/urfave/cli/v3"
)

// retryAdvice completes an outcome_unknown error — the store failed while
// committing, so the write may or may not be recorded — with what to run
// next (docs/delivery.md#when-acc-cannot-tell-whether-a-write-landed):
// the exact command line to run again, in the message and as the detail
// retry. A send (message, request, reply, finish) repeats with the
// clientMessageId it used, which core put in the detail clientMessageId:
// the repeat records it once either way. The other writes say what their
// repeat does.
func (a *app) retryAdvice(cmd *cli.Command, err error) error {
	pe := protocol.AsError(err)
	key, _ := pe.Details["clientMessageId"].(string)
	args := a.args
	if key != "" && !cmd.IsSet("client-message-id") {
		args = append(append([]string{}, args...), "--client-message-id", key)
	}
	retry := commandLine(args)
	var advice string
	switch cmd.Name {
	case "message", "request", "reply", "finish":
		what := "returns the first message if it was"
		switch cmd.Name {
		case "reply":
			what = "returns the first reply if it was; either way the original ends acknowledged"
		case "finish":
			what = "returns the first handoff if it was, even though that closed the session"
		}
		advice = fmt.Sprintf("it used clientMessageId %s: run `%s`, which records it if it was not and %s", key, retry, what)
	case "ack":
		advice = fmt.Sprintf("run `%s` again: acknowledging twice changes nothing", retry)
	case "claim":
		advice = fmt.Sprintf("run `%s` again: from the same session it takes the claim, or renews the one the first run took (one claim either way); `acc status` shows the room's claims", retry)
	case "release":
		advice = fmt.Sprintf("run `%s` again: it releases the claim, or answers claim_not_found (exit 5) when the first run already did", retry)
	case "attach":
		sid, _ := pe.Details["sessionId"].(string)
		// A new session needs neither the reopened id nor its proof.
		fresh := commandLine(withoutFlag(withoutFlag(a.args, "session"), "generation"))
		advice = fmt.Sprintf("`acc status` shows whether session %s is open now. If it is not, nothing was recorded: run `%s`. "+
			"If it is, it was opened but its generation is lost with this failure: run `%s` for a new session (%s turns stale after three missed heartbeats; a new session holds no claims, a reopened one keeps its claims until their leases run out)",
			sid, retry, fresh, sid)
	default:
		advice = fmt.Sprintf("check with `acc status` or `acc sync` whether it took effect before running `%s` again", retry)
	}
	cp := *pe
	cp.Details = map[string]any{}
	for k, v := range pe.Details {
		cp.Details[k] = v
	}
	cp.Message = pe.Message + "; " + advice
	return cp.With("retry", retry)
}

// commandLine is `acc` with args, each quoted for a POSIX shell where it
// needs it (core.ShellWord): an argument holding a character the display
// rule escapes (a body with CR or a line break, say) is written in ANSI-C
// quotes, $'…' with \r, \n, \xNN escapes, so the line stays one printable
// line that survives the terminal escaping unchanged, and pasting it passes
// the exact bytes again — so the retry carries the same content under the
// same clientMessageId.
func commandLine(args []string) string {
	words := make([]string, 0, len(args)+1)
	words = append(words, "acc")
	for _, a := range args {
		words = append(words, core.ShellWord(a))
	}
	return strings.Join(words, " ")
}

// withoutFlag returns args without the flag name and its value, in any
// spelling urfave/cli parses (--name V, --name=V, -name V, -name=V).
func withoutFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		tok := args[i]
		if tok == "--" {
			return append(out, args[i:]...)
		}
		flag, _, inline := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(tok, "-"), "-"), "=")
		if strings.HasPrefix(tok, "-") && flag == name {
			if !inline {
				i++
			}
			continue
		}
		out = append(out, tok)
	}
	return out
}
