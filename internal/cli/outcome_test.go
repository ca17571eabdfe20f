package cli

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/google/go-cmp/cmp"
)

// TestCommandLinePastesBack: the retry command an outcome_unknown error
// prints, once shown through the display rule, is one line that a shell
// turns back into exactly the arguments the first run had — CR, line
// breaks, C1 controls, bidi overrides and bytes that are not UTF-8
// included — so the retry carries the same content under the same key.
func TestCommandLinePastesBack(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found: cannot check the pasted line")
	}
	args := []string{"message", "--to", "bob", "--subject", "it's a \"test\" \\ of $HOME",
		"--body", "evil\rsafe\ntext\tand \u009b2J \u202eabc\u2028 caf\u00e9 \xff\xfe end",
		"--client-message-id", "client_abc"}
	line := commandLine(args)
	if shown := protocol.EscapeText(line, protocol.TextLine); shown != line {
		t.Fatalf("the retry line changes on the screen:\n%q\n%q", line, shown)
	}
	out, err := exec.Command(bash, "-c", "printf '%s\\0' "+strings.TrimPrefix(line, "acc ")).Output()
	if err != nil {
		t.Fatalf("bash -c %q: %v", line, err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if diff := cmp.Diff(args, got); diff != "" {
		t.Errorf("pasting %s gives other arguments (-want +got):\n%s", line, diff)
	}
	if bytes.ContainsAny([]byte(line), "\r\n") {
		t.Errorf("the retry line spans lines: %q", line)
	}
}
