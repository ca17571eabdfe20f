package cli

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/urfave/cli/v3"
	"mvdan.cc/sh/v3/syntax"
)

func (a *app) searchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Category:  "coordination",
		Usage:     "search the room's messages: subjects, bodies, handoffs and decisions, best match first",
		ArgsUsage: "QUERY",
		Description: "Finds the room's messages (all of them, as history shows them) holding every word of QUERY,\n" +
			"best match first, each with a snippet of where it matched, its matched words in [brackets].\n" +
			"The query language: auth token finds both words, anywhere, in any order; \"refresh flow\" those words\n" +
			"together, in that order (also text such as \"10:30\"); -draft leaves out messages holding the word (or\n" +
			"-\"a phrase\"); 'migrat*' words that begin with migrat (quote it, or your shell may expand it).\n" +
			"Words are whole (token does not find tokens); case does not matter, accents do.\n" +
			"In acc search a word with one dash is always an exclusion (-current excludes \"current\"); flags\n" +
			"take two dashes. The filters narrow the hits; --cursor continues after a previous page's last hit.\n" +
			"--json gives the page of docs/protocol.md#search-results (highlights count code points).\n\n" +
			"  acc search auth token -draft\n" +
			"  acc search '\"refresh flow\"' --from alice --since 7d\n" +
			"  acc search 'migrat*' --type decision --current",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "from", Usage: "only messages sent by participant `ID`"},
			&cli.StringFlag{Name: "to", Usage: "only messages addressed to participant `ID`"},
			&cli.StringFlag{Name: "type", Usage: "only messages of this `KIND` (note, question, request, answer, decision, handoff)"},
			&cli.BoolFlag{Name: "current", Usage: "only decisions that are current (their group's head)"},
			&cli.StringFlag{Name: "since", Usage: "only messages sent at or after `WHEN`: an RFC 3339 time, a date (2026-12-01, UTC) or an age (90m, 36h, 7d, 2w; at most 36500d)"},
			&cli.StringFlag{Name: "until", Usage: "only messages sent before `WHEN` (as --since)"},
			&cli.StringFlag{Name: "thread", Usage: "only messages of thread `ID`"},
			&cli.StringFlag{Name: "cursor", Usage: "continue after this message `ID` (a previous page's nextCursor)"},
			&cli.IntFlag{Name: "limit", DefaultText: strconv.Itoa(core.DefaultPageLimit), Usage: fmt.Sprintf("at most `N` hits, 1 to %d", core.MaxPageLimit)},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			q := core.SearchQuery{Query: strings.Join(cmd.Args().Slice(), " "), From: cmd.StringSlice("from"), To: cmd.String("to"),
				Kind: cmd.String("type"), Current: cmd.Bool("current"), Thread: cmd.String("thread"), Cursor: cmd.String("cursor"), Limit: cmd.Int("limit")}
			if cmd.IsSet("limit") && q.Limit == 0 {
				q.Limit = -1 // an explicit 0 is out of range, not "the default"
			}
			now := time.Now()
			var err error
			if q.Since, err = parseWhen("since", cmd.String("since"), now); err != nil {
				return err
			}
			if q.Until, err = parseWhen("until", cmd.String("until"), now); err != nil {
				return err
			}
			// A bad search is refused before the store is opened, so it
			// neither creates nor upgrades one.
			if err := core.CheckSearch(q); err != nil {
				return err
			}
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				page, err := r.Search(ctx, q)
				if err != nil {
					return err
				}
				return a.emit(page, func(w io.Writer) { printSearch(w, cmd, q, page) })
			})
		},
	}
}

var agePattern = regexp.MustCompile(`^([0-9]{1,6})(m|h|d|w)$`)

// maxAge bounds an age given to --since or --until: 100 years of 365
// days (36,500d), far inside what a time.Duration holds.
const maxAge = 36_500 * 24 * time.Hour

// parseWhen reads a --since or --until value: an RFC 3339 time, a date
// (midnight UTC) or an age before now (90m, 36h, 7d, 2w; at most 36,500
// days). "" is no bound. Anything else is invalid_flag_value (exit 2).
func parseWhen(flag, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", v); err == nil {
		return t, nil
	}
	if m := agePattern.FindStringSubmatch(v); m != nil {
		n, _ := strconv.Atoi(m[1])
		unit := map[string]time.Duration{"m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
		if time.Duration(n) > maxAge/unit {
			return time.Time{}, protocol.Errorf(protocol.ReasonInvalidFlagValue,
				"--%s %q is longer ago than acc reaches back (%dd); give a date instead (2020-01-01)", flag, v, maxAge/(24*time.Hour)).With("flag", flag)
		}
		return now.Add(-time.Duration(n) * unit), nil
	}
	return time.Time{}, protocol.Errorf(protocol.ReasonInvalidFlagValue,
		"--%s %q is not a time: give an RFC 3339 time (2026-12-01T09:30:00Z), a date (2026-12-01) or an age (90m, 36h, 7d, 2w)", flag, v).With("flag", flag)
}

// printSearch shows a page of hits: one line per hit as history shows a
// message, then its snippet with the matched words in [brackets]. Every
// piece of peer text is escaped as one line (docs/concepts.md#peer-text-on-the-screen).
func printSearch(w io.Writer, cmd *cli.Command, q core.SearchQuery, p *core.SearchPage) {
	defer printDamaged(w, p.Damaged)
	if len(p.Items) == 0 {
		fmt.Fprintln(w, "no messages match")
		return
	}
	for _, h := range p.Items {
		m := h.Message
		line := fmt.Sprintf("%s  %s from %s at %s: %s", m.MessageID, m.Kind, m.FromParticipantID, m.SentAt, protocol.EscapeText(m.Subject, protocol.TextLine))
		if st := m.DecisionStatus; st != nil {
			line += "  [" + decisionText(st) + "]"
		}
		fmt.Fprintln(w, line)
		fmt.Fprintf(w, "    %s: %s\n", h.Snippet.Field, markSnippet(h.Snippet))
	}
	if p.NextCursor != nil {
		fmt.Fprintf(w, "more: %s --cursor %s\n", searchAgain(cmd, q), *p.NextCursor)
	}
}

// markSnippet renders a snippet on one line: each piece escaped, the
// highlighted words between [ and ].
func markSnippet(s core.Snippet) string {
	var b strings.Builder
	runes := []rune(s.Text)
	at := 0
	for _, h := range s.Highlights {
		if h[0] < at || h[1] > len(runes) || h[0] > h[1] {
			continue
		}
		b.WriteString(protocol.EscapeText(string(runes[at:h[0]]), protocol.TextLine))
		b.WriteString("[" + protocol.EscapeText(string(runes[h[0]:h[1]]), protocol.TextLine) + "]")
		at = h[1]
	}
	b.WriteString(protocol.EscapeText(string(runes[at:]), protocol.TextLine))
	return b.String()
}

// searchAgain is the command line that asks for the next page: the
// global --cwd and --workspace when given, the query quoted for a POSIX
// shell, and the filters as given, but --since and --until as the times
// they stood for, so that an age (7d) does not move between pages.
func searchAgain(cmd *cli.Command, q core.SearchQuery) string {
	quote := func(v string) string {
		if !utf8.ValidString(v) {
			return strconv.Quote(v)
		}
		if s, err := syntax.Quote(v, syntax.LangPOSIX); err == nil {
			return s
		}
		return strconv.Quote(v)
	}
	parts := []string{"acc"}
	for _, name := range []string{"cwd", "workspace"} {
		if v := cmd.String(name); v != "" {
			parts = append(parts, "--"+name, quote(v))
		}
	}
	parts = append(parts, "search", quote(q.Query))
	for _, f := range q.From {
		parts = append(parts, "--from", quote(f))
	}
	for _, f := range []struct{ name, v string }{{"to", q.To}, {"type", q.Kind}, {"thread", q.Thread}} {
		if f.v != "" {
			parts = append(parts, "--"+f.name, quote(f.v))
		}
	}
	for _, f := range []struct {
		name string
		t    time.Time
	}{{"since", q.Since}, {"until", q.Until}} {
		if !f.t.IsZero() {
			parts = append(parts, "--"+f.name, protocol.FormatTime(f.t))
		}
	}
	if q.Current {
		parts = append(parts, "--current")
	}
	if cmd.IsSet("limit") {
		parts = append(parts, "--limit", strconv.Itoa(cmd.Int("limit")))
	}
	return strings.Join(parts, " ")
}

// searchValueFlags are acc search's flags (and the global ones) that take
// a value.
var searchValueFlags = map[string]bool{"from": true, "to": true, "type": true, "since": true, "until": true, "thread": true,
	"cursor": true, "limit": true, "cwd": true, "workspace": true}

// searchArgs lets a query's exclusions stand unquoted: in `acc search
// tokens -draft`, -draft is a query term, not an unknown flag. In acc
// search a token of one dash is always a query word (-current excludes
// "current"; it is not --current), except -h, which asks for help; a
// token of two dashes is always a flag, so a mistyped one is still refused
// by name. When there is such a word, the words move after a --, in their
// order, and the flags (with their values) stay before it.
func searchArgs(args []string) []string {
	i := firstWordIndex(args)
	var flags, words []string
	moved := false
	for j := i + 1; j < len(args); j++ {
		tok := args[j]
		if tok == "--" {
			words = append(words, args[j+1:]...)
			moved = true
			break
		}
		if !strings.HasPrefix(tok, "-") || tok == "-" {
			words = append(words, tok)
			continue
		}
		name, _, inline := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		switch {
		case !strings.HasPrefix(tok, "--") && tok != "-h":
			words = append(words, tok)
			moved = true
		case searchValueFlags[name]:
			flags = append(flags, tok)
			if !inline && j+1 < len(args) {
				j++
				flags = append(flags, args[j])
			}
		default:
			flags = append(flags, tok)
		}
	}
	if !moved {
		return args
	}
	out := append(slices.Clone(args[:i+1]), flags...)
	return append(append(out, "--"), words...)
}
