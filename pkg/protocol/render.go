package protocol

import (
	"fmt"
	"strings"
)

// RenderExitCodesMarkdown renders the exit-code table and the reason-code
// table as the Markdown of docs/exit-codes.md. The file is generated from
// ExitCodes and Reasons only; a test in this package fails when the checked-in
// file differs and rewrites it when ACC_UPDATE=1 is set.
func RenderExitCodesMarkdown() string {
	var b strings.Builder
	b.WriteString("# Exit codes and reason codes\n\n")
	b.WriteString("<!-- Generated from pkg/protocol/errors.go by protocol.RenderExitCodesMarkdown; do not edit.\n")
	b.WriteString("     Regenerate with: ACC_UPDATE=1 go test ./pkg/protocol/ -->\n\n")
	b.WriteString("Every `acc`, `acc-hook` and `acc-mcp` refusal ends with one of these exit codes. With `--json`,\n")
	b.WriteString("the one envelope on stdout carries the same number in `error.code` and a stable\n")
	b.WriteString("`error.details.reasonCode`:\n\n")
	b.WriteString("```json\n")
	fmt.Fprintf(&b, "{\"envelope_version\":%d,\"ok\":false,\"error\":{\"code\":5,\"message\":\"…\",\"details\":{\"reasonCode\":\"claim_conflict\"}}}\n", EnvelopeVersion)
	b.WriteString("```\n\n")

	b.WriteString("## Exit codes\n\n")
	b.WriteString("| Code | Name | Meaning |\n|---:|---|---|\n")
	for _, e := range ExitCodes {
		fmt.Fprintf(&b, "| %d | `%s` | %s |\n", e.Code, e.Name, mdCell(e.Meaning))
	}

	b.WriteString("\n## Reason codes\n\n")
	b.WriteString("A reason code fixes its exit code. Codes are never renamed or reused; new ones may be added.\n\n")
	b.WriteString("| Reason code | Exit | Meaning |\n|---|---:|---|\n")
	for _, e := range ExitCodes {
		for _, r := range Reasons {
			if r.Code == e.Code {
				fmt.Fprintf(&b, "| `%s` | %d %s | %s |\n", r.Reason, r.Code, r.Code.Name(), mdCell(r.Meaning))
			}
		}
	}
	return b.String()
}

// mdCell makes s safe inside one Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
