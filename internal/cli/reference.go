package cli

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/urfave/cli/v3"
)

// RenderReference renders the command reference (docs/cli.md) from the
// command tree itself, so the documentation cannot drift from the flags.
func RenderReference() string {
	a := &app{env: Env{Stdout: io.Discard, Stderr: io.Discard}}
	root := a.rootCommand()
	var b strings.Builder
	b.WriteString("# acc command reference\n\n")
	b.WriteString("<!-- Generated from the command tree by `ACC_UPDATE=1 go test ./internal/cli/ -run TestReferenceIsCurrent`; do not edit by hand. -->\n\n")
	b.WriteString("Every command accepts the global flags below, before or after its name. With `--json` a command prints\n")
	b.WriteString("exactly one envelope on stdout — `{\"envelope_version\":1,\"ok\":true,\"data\":…}` or\n")
	b.WriteString("`{\"envelope_version\":1,\"ok\":false,\"error\":{\"code\":N,\"message\":…,\"details\":{\"reasonCode\":…}}}` —\n")
	b.WriteString("also when the command line itself is wrong. Without it, results go to stdout as short text and an\n")
	b.WriteString("error is one line on stderr that names the fix. Exit codes are listed in [exit-codes.md](exit-codes.md).\n\n")
	b.WriteString("Commands that act as a session take `--session ID --generation G` (or `ACC_SESSION` and\n")
	b.WriteString("`ACC_GENERATION`); a pair is never made of one flag and one variable, so `--generation` needs\n")
	b.WriteString("`--session` beside it even when `ACC_SESSION` is set, and `--session` outranks both variables.\n")
	b.WriteString("A session id alone (`--session`, or `ACC_SESSION` without `ACC_GENERATION`) acts as that session only\n")
	b.WriteString("when the environment proves it: the client's own session id is in it and matches that session's hook\n")
	b.WriteString("binding; otherwise exit 2 `generation_required` (a session id is public, the generation is the proof;\n")
	b.WriteString("see [concepts.md](concepts.md#acting-as-a-session)). Naming no session, acc looks for the caller in this\n")
	b.WriteString("order: the client's own session id in the environment matching one live hook binding; the one live\n")
	b.WriteString("session whose checkout is this worktree; the one live session of the room. When that leaves none or\n")
	b.WriteString("several, the command stops with exit 2 and names the candidates.\n\n")
	writeRefusalDetails(&b)
	b.WriteString("## Command-line syntax\n\n")
	b.WriteString("A flag takes its value as `--name value` or `--name=value`. acc refuses with exit 2, changing nothing:\n")
	b.WriteString("a positional argument where the command takes none, a flag the command does not have, a flag whose\n")
	b.WriteString("value is missing or empty, and a flag given twice unless it is one of the repeatable ones. A value may\n")
	b.WriteString("start with `--` (a diff as `--body`), unless it is exactly one of the command's own flags: then the\n")
	b.WriteString("value counts as missing, so write `--subject=--body` to mean that text. A value such as `--help`\n")
	b.WriteString("that is no flag of the command stays text.\n\n")
	b.WriteString("## Global flags\n\n")
	writeFlags(&b, root.Flags)
	groups := map[string][]*cli.Command{}
	var order []string
	for _, c := range root.Commands {
		if c.Hidden {
			continue
		}
		cat := c.Category
		if cat == "" {
			cat = "other"
		}
		if _, ok := groups[cat]; !ok {
			order = append(order, cat)
		}
		groups[cat] = append(groups[cat], c)
	}
	for _, cat := range order {
		fmt.Fprintf(&b, "## %s\n\n", strings.ToUpper(cat[:1])+cat[1:])
		for _, c := range groups[cat] {
			fmt.Fprintf(&b, "### `acc %s`\n\n%s.\n\n", c.Name, strings.TrimSuffix(c.Usage, "."))
			if c.Description != "" {
				b.WriteString(descriptionMarkdown(c.Description))
			}
			if len(c.Flags) > 0 {
				writeFlags(&b, c.Flags)
			}
			for _, sub := range c.Commands {
				if sub.Hidden || sub.Name == "help" {
					continue
				}
				fmt.Fprintf(&b, "#### `acc %s %s`\n\n%s.\n\n", c.Name, sub.Name, strings.TrimSuffix(sub.Usage, "."))
				if sub.Description != "" {
					b.WriteString(descriptionMarkdown(sub.Description))
				}
				if len(sub.Flags) > 0 {
					writeFlags(&b, sub.Flags)
				}
			}
		}
	}
	b.WriteString("## Text output\n\n")
	b.WriteString("| command | prints |\n|---|---|\n")
	for _, row := range [][2]string{
		{"attach", "`<sessionId> <generation>` alone on stdout, and the line to paste on stderr: `# to act as this session from this shell:` then `export ACC_SESSION=<sessionId> ACC_GENERATION=<generation>`; with `--shell`, only the export line, on stdout"},
		{"heartbeat", "`heartbeat recorded for <participant> (<session>) at <time>`, then what it buys, from the session's presence right after it: `  it counts as online until <three cadences> pass without another heartbeat (three cadences of <cadence>, set when it attached), then stale; offline once 30m pass without one (no process is recorded)` (with a process recorded: `offline as soon as process <pid> exits, or once 24h pass without one`; a process recorded on another host or in another PID namespace counts as none, and the parenthesis says `(its process runs on another host or in another PID namespace, so only heartbeats count here)`; when three cadences do not end before that limit: `… then offline, never stale: …`); when the recorded process has exited: `  it counts as offline all the same: its recorded process <pid> has exited, and a heartbeat cannot change that; attach again to be online (…)`"},
		{"detach", "`closed <sessionId>`"},
		{"status", "`<n> live; <n> claims; protection <level>` (`1 claim`; `<n> claims (<n> orphaned claims); …` when some live claims are orphaned), then a line saying so when the room is a plain directory of its own (`this directory is a room of its own …`), then one line per session (`<participant> (<client>, guarded or advisory) <presence> on <branch> in <checkout>  <session>`), claim (`claim <resource> <mode> <enforcement> by <participant> until <time>`, or for an orphaned one `claim <resource> <mode> <enforcement> by <participant> orphaned: process <pid> gone, last seen <time> (grace <duration>); blocks nothing, the next claim on it takes it over`) and attention item"},
		{"claim", "`claimed <resource>` or `renewed <resource>`, then `  <claimId> <mode> <enforcement> until <time>`, then per orphaned claim it took over `  took over <resource> from <participant> (session <session>, claim <claimId>): process <pid> gone, last seen <time>; they were told in message <messageId>`"},
		{"message, request", "`recorded <messageId>`, `  sent as <participant> (<session>)`, then one line per way the message travels, `  <recipients>: <outcome>; <who reads it and how>` (for example `  bob, carol: queued; CLI sessions read it with acc inbox`; recipients reached the same way share the line, and `--json` has each one's outcome); a room message has `  room message: it waits in the inbox of <participants>, …` instead, or `  room message: no other participant has a session open, so it reaches no inbox; it stays in the room's history (acc sync --scope history)`; a repeat with the same `--client-message-id` says whom it reached when it was recorded: `  room message: it reached <participant>'s inbox when it was recorded (this is a repeat of that send)`"},
		{"reply", "as message, then `acknowledged <originalId>`"},
		{"ack", "`acknowledged <messageId>`"},
		{"inbox", "one line per pending message (`<id>  <receipt> <kind> from <participant> at <time>: <subject>`), then `more: acc inbox --cursor <id>` when a page is full and `read one: acc inbox --message ID`; `no pending messages` when empty; first, when no `--session` or `ACC_SESSION` named the session, `inbox of <participant> (<session>), found automatically: no --session or ACC_SESSION`"},
		{"inbox --message", "the header lines, the receipt state and the body between `--- body of <id> (untrusted peer content) ---` and `--- end of <id> ---` (the id is assigned at record time, so a body cannot forge the closing line)"},
		{"finish", "as message, then `released <claimId>` per claim and `closed <sessionId>`"},
		{"sync", "nothing when you are alone in the room; else `<n> attention; <n> session(s); cursor <sequence>` (`--scope full` adds a `snapshot:` line of record counts)"},
		{"sync --scope history", "one line per message (`<id>  <kind> from <participant> at <time>: <subject>`, decisions followed by `[<state>, head, conflicted: <n> heads]`), then `more: acc sync --scope history … --cursor <id>` when a page is full; `no messages` when empty"},
		{"sync --scope history --message", "the header lines, `supersedes`/`withdraws` and `decision:` lines for decisions, `receipt <participant>: <state> at <time>` per recipient, and the body in the same frame as `inbox --message`"},
		{"search", "`no messages match`, or per hit the line history shows (`<id>  <kind> from <participant> at <time>: <subject>`) and `    <field>: <snippet>` with the matched words in `[brackets]`, peer text escaped; then, when a page is full, `more: acc search <query> … --cursor <id>` with `--cwd`/`--workspace` as given and `--since`/`--until` as the RFC 3339 times they meant, so an age does not move between pages"},
		{"config init", "the preview (the exact file), then `written: <file>`; on a terminal without --yes the question `Write <file>? [y/N]`, and `not written: <file>` for no"},
		{"config validate", "`valid: <file>` and one line of the settings; `no acc.workspace.json governs <dir>; defaults apply` without one"},
		{"doctor", "`store healthy; <sessions>; protection <level>`, `no store yet (nothing wrong); <sessions>; protection <level>` or `store unhealthy; live sessions unknown; protection <level>`, where `<sessions>` counts the sessions listed below it: `1 session online`, `<n> sessions online`, `1 session online, <n> stale`, `<n> sessions online, <n> stale`, `no session online, <n> stale` or `no live session`; then indented lines for the workspace, the data home, the store, each live session, each required adapter, each client and each ACP agent, a line naming docs/concepts.md for the words protection, `proven at X, running Y` and live push, and `next: <command or step>` per remediation. Outside a room the first line is `no room selected (nothing wrong); this machine's clients and data home follow` (or `no usable room (<reason>); …`)"},
		{"version", "`acc <version>`"},
	} {
		fmt.Fprintf(&b, "| `%s` | %s |\n", row[0], row[1])
	}
	fmt.Fprintf(&b, "\nExit codes: %s.\n", exitCodeLine())
	_ = protocol.EnvelopeVersion
	return b.String()
}

func descriptionMarkdown(d string) string {
	var out strings.Builder
	var prose []string
	flush := func() {
		if len(prose) > 0 {
			out.WriteString(strings.Join(prose, " ") + "\n\n")
			prose = nil
		}
	}
	for _, line := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(line, "  "):
			flush()
			fmt.Fprintf(&out, "```sh\n%s\n```\n\n", strings.TrimSpace(line))
		case strings.TrimSpace(line) == "":
			flush()
		default:
			prose = append(prose, strings.TrimSpace(line))
		}
	}
	flush()
	return out.String()
}

// writeFlags renders flags as a table, each meaning as --help prints it
// (urfave/cli's FlagStringer, so the default reads "(default: X)" in both;
// TestFlagHelpLines holds every line to that), with "(required)" and
// "(repeatable)" before the default.
func writeFlags(b *strings.Builder, flags []cli.Flag) {
	b.WriteString("| flag | meaning |\n|---|---|\n")
	for _, f := range flags {
		name := "--" + f.Names()[0]
		_, usage, _ := strings.Cut(cli.FlagStringer(f), "\t")
		dflt := ""
		if m := defaultSuffix.FindStringIndex(usage); m != nil {
			usage, dflt = usage[:m[0]], usage[m[0]:]
		}
		if rf, ok := f.(cli.RequiredFlag); ok && rf.IsRequired() {
			usage += " (required)"
		}
		if _, ok := f.(*cli.StringSliceFlag); ok {
			usage += " (repeatable)"
		}
		fmt.Fprintf(b, "| `%s` | %s |\n", name, strings.ReplaceAll(usage+dflt, "|", "\\|"))
	}
	b.WriteString("\n")
}

// defaultSuffix is the "(default: X)" urfave/cli ends a flag's help with.
var defaultSuffix = regexp.MustCompile(` \(default: [^()]*(\([^()]*\)[^()]*)*\)$`)

// writeRefusalDetails documents the structured half of a refusal: the
// fields and next steps core names as data (protocol.Field, protocol.Step)
// and this surface words (internal/wording).
func writeRefusalDetails(b *strings.Builder) {
	b.WriteString("## Refusal details\n\n")
	b.WriteString("A refusal's `details` always hold `reasonCode`, and the facts of the case (ids, resources, the holder\n")
	b.WriteString("of a claim). When the rule behind it is about a flag, or it suggests what to do next, the details say\n")
	b.WriteString("so as data, the same on every surface, while the message words it for the surface that refused:\n\n")
	b.WriteString("- `fields`: the fields the refusal is about, by neutral name — acc-mcp's argument names. Here `kind` is\n")
	b.WriteString("  `--type`, `messageId` is `--message`, `clientMessageId` is `--client-message-id`, and any other name\n")
	b.WriteString("  `x` is `--x`.\n")
	b.WriteString("- `nextSteps`: the steps the message suggests, in its order, each `{\"command\":…,\"args\":{…}}`; `args`\n")
	b.WriteString("  holds what the step needs (`to` for `message`, `messageId` for `reply`, `resource` for `wait-release`,\n")
	b.WriteString("  `variable` — the environment variable that chose the directory — for `start-in-directory` and `run-in-project`).\n")
	b.WriteString("  The commands are " + codeList(protocol.StepCommands) + ".\n\n")
	b.WriteString("For example, `acc reply` to a message addressed to someone else is refused with\n")
	b.WriteString("`details.nextSteps: [{\"command\":\"message\",\"args\":{\"to\":\"alice\"}}]` and a message ending\n")
	b.WriteString("``send a new message with `acc message --to alice` ``; acc-mcp words the same refusal with\n")
	b.WriteString("`acc_message {to: [\"alice\"]}` ([mcp.md](mcp.md#refusal-details)).\n\n")
}

// codeList spells names as `a`, `b` and `c`.
func codeList(names []string) string {
	out := ""
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			out += " and "
		default:
			out += ", "
		}
		out += "`" + n + "`"
	}
	return out
}
