package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

var (
	defaultWord     = regexp.MustCompile(`(?i)\bdefault\b`)
	placeholderWord = regexp.MustCompile(`^\S*[A-Z]\S*$`)
	// defaultStyle is the one way a help line states a default: urfave/cli's
	// "(default: X)" closing the line, X as typed (not a quoted Go string).
	defaultStyle = regexp.MustCompile(` \(default: [^"\s][^"]*\)$`)
	// goDuration is a duration as Go prints it, with its zero parts (3m0s).
	goDuration = regexp.MustCompile(`\b\d+(h0m|m0s)`)
)

// TestFlagHelpLines walks the whole command tree and checks each flag's
// line as --help prints it (urfave/cli's FlagStringer):
//
//   - "default" appears at most once: urfave/cli appends "(default: …)"
//     from the flag's Go value, which contradicted a default the usage
//     states ("(default 20) (default: 0)"); such a flag hides urfave's;
//   - a default is stated in one style: "(default: X)" ending the line,
//     X unquoted and a duration without zero parts (3m, not "3m0s"), as
//     urfave/cli prints a flag's DefaultText — never "(default X)",
//     `(default: "10m")` or "exclusive (default) or shared";
//   - a flag with a Go default that takes a value states it;
//   - a flag that takes a value shows one placeholder word that names the
//     value (ID, TEXT, DIR, file:PATH), not a Go type (string, duration)
//     nor a phrase: a `backticked` span in the usage becomes the
//     placeholder, whatever it is;
//   - a flag without a value shows no placeholder at all.
//
// docs/cli.md renders the same usage strings.
func TestFlagHelpLines(t *testing.T) {
	paths, cmds := commandPaths()
	for i, path := range paths {
		for _, f := range cmds[i].Flags {
			line := cli.FlagStringer(f)
			where := "acc " + strings.Join(path, " ") + ": " + strings.ReplaceAll(line, "\t", "  ")
			names, usage, ok := strings.Cut(line, "\t")
			if !ok {
				t.Errorf("%s: no usage", where)
				continue
			}
			if n := len(defaultWord.FindAllString(usage, -1)); n > 1 {
				t.Errorf("%s: says default %d times", where, n)
			} else if n == 1 && !defaultStyle.MatchString(usage) {
				t.Errorf("%s: states its default otherwise than as \"(default: X)\" ending the line", where)
			}
			if m := defaultStyle.FindString(usage); goDuration.MatchString(m) {
				t.Errorf("%s: a default duration with zero parts", where)
			}
			df := f.(cli.DocGenerationFlag)
			if v := df.GetValue(); df.TakesValue() && v != "" && v != "0" && !defaultStyle.MatchString(usage) {
				t.Errorf("%s: its default %s is not stated", where, v)
			}
			names, _, _ = strings.Cut(names, " [ ") // a repeatable flag shows its form twice
			takesValue := df.TakesValue()
			for _, form := range strings.Split(names, ", ") {
				_, placeholder, has := strings.Cut(form, " ")
				switch {
				case takesValue && !placeholderWord.MatchString(placeholder):
					t.Errorf("%s: placeholder %q is not one word naming the value", where, placeholder)
				case !takesValue && has:
					t.Errorf("%s: takes no value but shows the placeholder %q", where, placeholder)
				}
			}
		}
	}
}
