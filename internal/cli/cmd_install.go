package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/internal/install"
	"github.com/acc-go/acc/internal/probe"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/workspace"
	"github.com/urfave/cli/v3"
)

// installEnv resolves where an install happens: the data home (record and
// shim), the home (--home, else HOME) and the binaries the hooks and Grok
// run (beside this acc, else on PATH; ACC_HOOK_BINARY overrides acc-hook).
func (a *app) installEnv(cmd *cli.Command) (*install.Env, error) {
	rt, err := workspace.ResolveRuntimeEnv(runtime.GOOS, a.env.Getenv)
	if err != nil {
		return nil, err
	}
	home, given := cmd.String("home"), cmd.IsSet("home")
	if given {
		if !filepath.IsAbs(home) {
			if wd, err := a.env.Getwd(); err == nil {
				home = filepath.Join(wd, home)
			}
		}
	} else if home = a.env.Getenv("HOME"); home == "" {
		return nil, protocol.Errorf(protocol.ReasonHomeMissing, "HOME is not set; pass --home DIR")
	}
	adapters := clients.Installers()
	hookBin := a.env.Getenv("ACC_HOOK_BINARY")
	if hookBin == "" {
		hookBin = siblingBinary("acc-hook")
	} else if !filepath.IsAbs(hookBin) {
		if wd, err := a.env.Getwd(); err == nil {
			hookBin = filepath.Join(wd, hookBin) // the shim runs from anywhere
		}
	}
	return &install.Env{DataHome: rt.DataHome, Home: filepath.Clean(home), HomeGiven: given, Getenv: a.env.Getenv,
		HookBinary: hookBin, MCPBinary: siblingBinary("acc-mcp"), AccVersion: Version(), Adapters: adapters}, nil
}

// siblingBinary is name beside the running acc when it is there, else the
// one on PATH, else the path beside acc (the shim then falls back to PATH
// at hook time, and fails open).
func siblingBinary(name string) string {
	var beside string
	if self, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		beside = filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(beside); err == nil && !st.IsDir() {
			return beside
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return beside
}

var installFlags = []cli.Flag{
	&cli.StringSliceFlag{Name: "adapter", Usage: "only this client `ID` (claude, codex, copilot, droid, gemini, grok, kilo, kimi, opencode, pi, qwen); repeat for several"},
	&cli.StringFlag{Name: "home", DefaultText: "$HOME", Usage: "the home `DIR` whose client configuration to change (given, it makes client directory variables such as CODEX_HOME ignored)"},
	&cli.BoolFlag{Name: "dry-run", Usage: "print every path that would change, and change nothing"},
}

func (a *app) installCommand() *cli.Command {
	return &cli.Command{
		Name:     "install",
		Category: "setup",
		Usage:    "wire acc into the coding clients on this machine, so every session they start joins the room",
		Description: "install finds each supported client (its program on PATH, its version, its configuration directory),\n" +
			"plans the exact edits, prints them and applies them: hooks that run acc-hook through a shim in acc's data\n" +
			"home, and a short instructions file for the client's agent. Every byte of your own configuration is kept;\n" +
			"what acc wrote is recorded (installs.json in the data home) so that acc uninstall removes exactly that.\n" +
			"--dry-run lists every path the run would create or change, acc's own in the data home included (the\n" +
			"record, the install lock, the shim and the directories they need: the shared: lines).\n" +
			"A file that does not parse is refused and left untouched (exit 4); a file of someone else's in acc's way\n" +
			"is refused (exit 5). Running install again changes nothing. Restart the clients afterwards; Codex also\n" +
			"needs you to trust acc's hooks in /hooks.\n\n" +
			"A client that is no npm package is asked `<client> --version` up to twice, each time for at most\n" +
			fmt.Sprintf("ACC_PROBE_TIMEOUT_MS milliseconds (%d by default); the clients are asked at once, so all together take\n", probe.DefaultTimeout.Milliseconds()) +
			"about twice that at most. A version still unknown is printed with the reason.\n\n" +
			"--delivery lets peers wake your idle Claude Code or Codex sessions (live push): an addressed message the\n" +
			"policy admits starts a model turn at once, at your expense in tokens. actionable admits questions, requests,\n" +
			"answers, decisions and addressed handoffs; all admits notes too; off (the default) leaves every message for\n" +
			"the next turn and the inbox. It is recorded for you on this machine only; doctor says what is in effect.\n\n" +
			"While your agent works through a long turn, a peer's message can reach it after its next tool call\n" +
			"(--mid-turn), or hold it once when it is about to stop with a message to answer (--end-of-turn),\n" +
			"where the client's version has that proven. The room's acc.workspace.json (policy.midTurn,\n" +
			"policy.endOfTurn) decides, on for actionable messages by default; these flags narrow it for one client\n" +
			"on this machine (off turns it off; without the flag the recorded value stays; none recorded: the room\n" +
			"decides). acc-hook reads them at every call, so changing them needs no restart.\n\n" +
			"  acc install --dry-run\n  acc install --adapter claude --adapter codex\n  acc install --adapter claude --delivery actionable\n" +
			"  acc install --adapter codex --mid-turn off --end-of-turn off   # leave Codex's turns alone; next turn only",
		Flags: append(installFlags,
			&cli.StringFlag{Name: "delivery", Usage: "the live-push `POLICY` for these clients: off, actionable or all (without the flag the recorded policy stays; off at first); a pushed message starts a model turn in your session, spending your tokens"},
			&cli.StringFlag{Name: "mid-turn", Usage: "which messages reach a busy session after a tool call, for these clients: `POLICY` off, actionable or all (narrows the room's policy.midTurn; without the flag the recorded value stays)"},
			&cli.StringFlag{Name: "end-of-turn", Usage: "whether an agent about to stop with an unread message to it that is not a note, or a reply it owes, is held once, for these clients: `POLICY` off or actionable (narrows the room's policy.endOfTurn; without the flag the recorded value stays)"}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			env, err := a.installEnv(cmd)
			if err != nil {
				return err
			}
			if env.ProbeTimeout, err = probe.Timeout(a.env.Getenv, probe.DefaultTimeout); err != nil {
				return err
			}
			rep, err := env.Install(ctx, install.Options{Adapters: cmd.StringSlice("adapter"), DryRun: cmd.Bool("dry-run"), Delivery: cmd.String("delivery"),
				MidTurn: cmd.String("mid-turn"), EndOfTurn: cmd.String("end-of-turn")})
			if err != nil {
				return err
			}
			return a.emit(rep, func(w io.Writer) { printInstall(w, rep, "installed", livePushCheck(env), env.HomeArg()) })
		},
	}
}

func (a *app) uninstallCommand() *cli.Command {
	return &cli.Command{
		Name:     "uninstall",
		Category: "setup",
		Usage:    "remove what acc install wrote, and only what is still as acc wrote it",
		Description: "uninstall works from acc's record (installs.json in the data home): each file, hook entry and\n" +
			"managed block acc wrote is removed while it is still exactly as acc wrote it; anything you changed is\n" +
			"kept and reported. A file acc created goes whole once acc's part is out of it and nothing else is in\n" +
			"it, and so does each directory acc created that is then empty; the report lists them. A client's own\n" +
			"records (Codex's hook trust) are never touched. Without --adapter, every recorded client is unwired.\n" +
			"With the last client, acc's own files in the data home go too (the record, the install lock, the shim)\n" +
			"and every directory install created for them that is then empty. acc certify's evidence records and\n" +
			"the rooms' stores stay: an uninstall that leaves no installation ends by naming them and\n" +
			"docs/adapters.md, which says how to remove them once no session uses a room.\n\n" +
			"  acc uninstall --dry-run\n  acc uninstall --adapter gemini",
		Flags: installFlags,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			env, err := a.installEnv(cmd)
			if err != nil {
				return err
			}
			rep, err := env.Uninstall(ctx, install.Options{Adapters: cmd.StringSlice("adapter"), DryRun: cmd.Bool("dry-run")})
			if err != nil {
				return err
			}
			return a.emit(rep, func(w io.Writer) { printInstall(w, rep, "uninstalled", nil, env.HomeArg()) })
		},
	}
}

// livePushOn says whether --delivery actionable would turn live push on for
// a client at version, and if not, why (install.LiveDelivery: a live
// transport on this platform and live push proven for the version).
type livePushOn func(adapterID, version string) (ok bool, why string)

// livePushCheck answers for the clients of env.
func livePushCheck(env *install.Env) livePushOn {
	return func(id, version string) (bool, string) {
		a, ok := env.Adapters[id]
		if !ok {
			return false, ""
		}
		effective, why := install.LiveDelivery(a, version, env.DataHome, "actionable")
		return effective != "off", why
	}
}

// printInstall prints install's or uninstall's report; canPush (nil for
// uninstall) says for a client with live push off whether --delivery would
// turn it on (docs/delivery.md).
func printInstall(w io.Writer, rep *install.Report, done string, canPush livePushOn, home string) {
	verb := map[string]string{"create": "create", "update": "update", "unchanged": "unchanged", "remove": "remove", "kept": "KEPT", "missing": "missing"}
	if rep.DryRun {
		fmt.Fprintln(w, "dry run: nothing was written")
	}
	if len(rep.Clients) == 0 && !slices.ContainsFunc(rep.Shared, func(ch install.Change) bool { return ch.Op != "unchanged" }) {
		fmt.Fprintln(w, "nothing to do")
	}
	for _, c := range rep.Clients {
		version := c.Version
		if version == "" {
			version = "version unknown"
		}
		if c.Action == "skip" {
			fmt.Fprintf(w, "%s: skipped — %s\n", c.DisplayName, c.Reason)
			continue
		}
		state := done
		if rep.DryRun {
			state = "would be " + done
		}
		fmt.Fprintf(w, "%s (%s): %s\n", c.DisplayName, version, state)
		if c.VersionUnknown != "" {
			fmt.Fprintf(w, "  version unknown: %s\n", c.VersionUnknown)
		}
		for _, ch := range c.Changes {
			path := ch.Path
			if ch.Kind == "directory" {
				path += "/"
			}
			line := fmt.Sprintf("  %-9s %s", verb[ch.Op], path)
			switch {
			case ch.Op == "remove" && ch.Kind == "json-entry":
				// acc's entry goes; the file stays.
				line = fmt.Sprintf("  %-9s acc's %s entry from %s", verb[ch.Op], ch.Detail, ch.Path)
			case ch.Op == "remove" && ch.Kind == "toml-block":
				line = fmt.Sprintf("  %-9s acc's block from %s", verb[ch.Op], ch.Path)
			case ch.Detail != "":
				line += "  (" + ch.Detail + ")"
			}
			fmt.Fprintln(w, line)
		}
		if c.DeliveryPolicy != "" {
			fmt.Fprintf(w, "  live push: %s\n", livePushWords(c.Adapter, c.Version, c.DeliveryPolicy, c.EffectiveDelivery, c.DeliveryReason, canPush, home))
		}
		if td := c.TurnDelivery; td != nil {
			fmt.Fprintf(w, "  mid-turn: %s\n", td.MidTurnWords)
			fmt.Fprintf(w, "  end of turn: %s\n", td.EndOfTurnWords)
		}
		// The hooks load when a session starts: only changed files need a
		// restart (the delivery policy is read at every send).
		changed := slices.ContainsFunc(c.Changes, func(ch install.Change) bool { return ch.Op != "unchanged" })
		for _, n := range c.Notes {
			if !changed && strings.HasPrefix(n, "restart ") {
				continue
			}
			fmt.Fprintf(w, "  next: %s\n", n)
		}
	}
	for _, ch := range rep.Shared {
		path := ch.Path
		if ch.Kind == "directory" {
			path += "/"
		}
		fmt.Fprintf(w, "shared: %s %s\n", verb[ch.Op], path)
	}
	if !rep.DryRun && len(rep.Clients) > 0 {
		if _, err := os.Stat(rep.Record); err == nil {
			fmt.Fprintf(w, "record: %s\n", rep.Record)
		} else {
			fmt.Fprintln(w, "record: none left (nothing of acc's is installed)")
		}
	}
	// What stays in the data home is said only when this uninstall leaves
	// no installation (it removes acc's record): with clients still wired,
	// or nothing done, those rooms and records are as much in use as before.
	if done == "uninstalled" && slices.ContainsFunc(rep.Shared, func(ch install.Change) bool { return ch.Path == rep.Record && ch.Op == "remove" }) {
		printDataKept(w, filepath.Dir(rep.Record))
	}
}

// printDataKept ends the report of an uninstall that leaves no
// installation with what it leaves in acc's directory in the data home —
// the rooms' stores and acc certify's evidence — and where it says how to
// remove them (docs/adapters.md#in-accs-data-home). It prints no
// removal command: a room may still have live sessions, and removing it
// loses its messages for good.
func printDataKept(w io.Writer, accDir string) {
	kept := false
	for _, d := range []struct{ dir, what string }{
		{"workspaces", "the rooms (each room's messages, receipts and history)"},
		{"evidence", "acc certify's evidence"},
	} {
		p := filepath.Join(accDir, d.dir)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			fmt.Fprintf(w, "stays: %s in %s/\n", d.what, p)
			kept = true
		}
	}
	if kept {
		fmt.Fprintln(w, "uninstall never removes these: they are no part of the installation; docs/adapters.md (\"In acc's data home\") says how to remove them once no session uses a room")
	}
}

// printClients prints doctor's client section; canPush says whether
// --delivery would turn live push on (nil when that is unknown).
func printClients(w io.Writer, clients []install.ClientStatus, canPush livePushOn, home string) {
	for _, c := range clients {
		state := "not found"
		switch {
		case c.Present && c.Binary == "":
			state = "configuration found" // its program is not on PATH
		case c.Present:
			state = "present"
			if c.Version != "" {
				state += " " + c.Version
			} else if c.VersionUnknown != "" {
				state += ", version unknown (" + c.VersionUnknown + ")"
			}
		}
		// Whether acc is wired into the client, not whether the client
		// itself is installed (that is state, above).
		inst := "acc not installed for it"
		if c.Installed {
			inst = "acc installed"
			if c.InstallState != "installed" {
				inst = "acc's install " + c.InstallState
			}
		}
		var bad []string
		for _, f := range c.Files {
			if f.Status != "intact" {
				where := f.Path
				if f.Detail != "" {
					where += " (" + f.Detail + ")"
				}
				bad = append(bad, f.Status+" "+where)
			}
		}
		files := ""
		if c.Installed {
			files = "; files intact"
			if len(bad) > 0 {
				files = "; " + strings.Join(bad, ", ")
			}
		}
		// Live push: whether it is proven for the version found, then
		// whether it is on, and how to turn it on where it can be (where
		// it is not proven, that says why it is off).
		live := "live push not proven, "
		if c.Capabilities.LivePush {
			live = "live push proven, " + livePushWords(c.Adapter, c.Version, c.DeliveryPolicy, c.EffectiveDelivery, c.DeliveryReason, canPush, home)
		} else {
			live += livePushWords(c.Adapter, c.Version, c.DeliveryPolicy, c.EffectiveDelivery, c.DeliveryReason, nil, home)
		}
		fmt.Fprintf(w, "  client %s: %s; %s%s; %s; %s\n", c.Adapter, state, inst, files, c.Proof, live)
		// Delivery inside a busy turn: proven or not for this version,
		// and the fallback when not.
		fmt.Fprintf(w, "    %s mid-turn: %s; end of turn: %s\n", c.Adapter, c.TurnDelivery.MidTurnWords, c.TurnDelivery.EndOfTurnWords)
	}
}

// livePushWords says whether live push (docs/delivery.md) is on for a
// client, naming whole commands (doctor has no --delivery of its own):
// "on for actionable messages (acc install --adapter claude --delivery off
// turns it off)"; "off, though all was requested:
// <why>"; "off (acc install --adapter claude --delivery actionable turns it
// on; docs/delivery.md)" where that would work; else "off", with why it
// cannot be turned on when that is known. home is install.Env.HomeArg's: the --home
// the commands need to change the same clients.
func livePushWords(id, version, requested, effective, reason string, canPush livePushOn, home string) string {
	switch {
	case reason != "":
		return fmt.Sprintf("off, though %s was requested: %s", requested, reason)
	case effective != "off" && effective != "":
		return fmt.Sprintf("on for %s messages (acc install%s --adapter %s --delivery off turns it off)", effective, home, id)
	case canPush == nil:
		return "off"
	}
	if ok, why := canPush(id, version); ok {
		return fmt.Sprintf("off (acc install%s --adapter %s --delivery actionable turns it on; docs/delivery.md)", home, id)
	} else if why != "" {
		return "off; acc install --delivery cannot turn it on: " + why
	}
	return "off"
}
