package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/acc-go/acc/pkg/protocol"
)

// retryAdvice completes an outcome_unknown error — the store failed while
// committing, so the write may or may not be recorded — with the call to
// make next
// (docs/delivery.md#when-acc-cannot-tell-whether-a-write-landed): the detail
// retry holds the tool's name and the arguments to call it with. A send repeats
// with the clientMessageId it used (core put it in the detail clientMessageId),
// which records it once either way.
func retryAdvice(tool string, raw json.RawMessage, err error) error {
	pe := protocol.AsError(err)
	args := map[string]any{}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &args) // validated before the call ran
	}
	key, _ := pe.Details["clientMessageId"].(string)
	var advice string
	switch {
	case key != "":
		args["clientMessageId"] = key
		advice = fmt.Sprintf("it used clientMessageId %q: call %s again with the same arguments and that clientMessageId; it records the write if it was not and returns the first one if it was", key, tool)
	case tool == "acc_ack":
		advice = "call acc_ack again: acknowledging twice changes nothing"
	case tool == "acc_claim":
		advice = "call acc_claim again: it takes the claim, or renews the one the first call took (one claim either way)"
	case tool == "acc_release":
		advice = "call acc_release again: it releases the claim, or answers claim_not_found when the first call already did"
	default:
		advice = fmt.Sprintf("call acc_status or acc_sync to see whether it took effect before calling %s again", tool)
	}
	cp := *pe
	cp.Details = map[string]any{}
	for k, v := range pe.Details {
		cp.Details[k] = v
	}
	cp.Message = pe.Message + "; " + advice
	return cp.With("retry", map[string]any{"tool": tool, "arguments": args})
}
