package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/acc-go/acc/internal/install"
	"github.com/acc-go/acc/internal/probe"
	"github.com/acc-go/acc/internal/wording"
	acpfam "github.com/acc-go/acc/pkg/adapters/acp"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/urfave/cli/v3"
)

// doctorCommand is `acc doctor` (docs/protocol.md#doctor-and-repair,
// docs/configuration.md#acc-doctor).
func (a *app) doctorCommand() *cli.Command {
	return &cli.Command{
		Name:     "doctor",
		Category: "setup",
		Usage:    "check the store's health, the workspace, live sessions and required adapters, and name the next commands",
		Description: "doctor reads the workspace's store without changing it: schema version, workspace identity,\n" +
			"SQLite's integrity check, file sizes and row counts; then protection, live sessions and the adapters\n" +
			"acc.workspace.json requires. Each finding comes with the next command to run. A workspace without a\n" +
			"store yet is healthy (the first attach creates it; doctor never does). A corrupt, foreign or\n" +
			"unknown-version store exits 4 after printing the report (with --json, the report is in error.details).\n" +
			"It also reports acc's data home (its path and whether it exists; a broken symlink or a file there is a\n" +
			"problem: the report says what it is, then doctor exits 2, data_home_unusable) and each coding client on this machine:\n" +
			"found or not, its version (asked as acc install asks, within ACC_PROBE_TIMEOUT_MS), whether acc is\n" +
			"installed for it and whether acc's files are still as acc wrote them, the capabilities proven for that\n" +
			"version (\"proven at X, running Y\"), whether live push is on (and the command that turns it on), and\n" +
			"what is proven for the ACP agents acc acp relays. docs/concepts.md explains these words.\n\n" +
			"Outside any room — a directory in no Git repository and under no acc.workspace.json that holds acc's\n" +
			"data, such as your home directory — doctor says that no room is selected and why, reports the data home\n" +
			"and the clients, and exits 0 (with --json, noRoom is set and the room's fields are absent). A Git or\n" +
			"config workspace whose root holds acc's data is a misconfiguration: the report prints, then doctor exits 2\n" +
			"(runtime_inside_workspace).\n\n" +
			"  acc doctor --json\n  acc doctor --cwd ~/src/project",
		Flags: []cli.Flag{&cli.StringFlag{Name: "home", DefaultText: "$HOME", Usage: "look for the clients' configuration under this home `DIR`"}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			dir, err := a.cwd(cmd)
			if err != nil {
				return err
			}
			probeTimeout, err := probe.Timeout(a.env.Getenv, probe.DefaultTimeout)
			if err != nil {
				return err
			}
			// The clients first: which adapters acc install has installed
			// decides whether a required one is missing. Their version
			// probes have their own bound (ACC_PROBE_TIMEOUT_MS), not the
			// store's.
			clients := []install.ClientStatus{}
			var clientNotes []string
			var canPush livePushOn
			var homeArg string
			if ienv, ierr := a.installEnv(cmd); ierr == nil {
				canPush, homeArg = livePushCheck(ienv), ienv.HomeArg()
				ienv.ProbeTimeout = probeTimeout
				cs, cerr := ienv.Clients(ctx)
				clients = cs
				if cerr != nil {
					clientNotes = append(clientNotes, protocol.AsError(wording.CLIError(cerr)).Message)
				}
			}
			installed := func(id string) bool {
				for _, c := range clients {
					if c.Adapter == id && c.Installed {
						return true
					}
				}
				return false
			}
			ctx, cancel := context.WithTimeout(ctx, StoreWait)
			defer cancel()
			rep, err := core.Doctor(ctx, core.DoctorOptions{OpenOptions: core.OpenOptions{Cwd: dir, ConfigPath: cmd.String("workspace"), Getenv: a.env.Getenv}, Installed: installed})
			if rep == nil {
				return err
			}
			if rep.NoRoom != nil && rep.NoRoom.Refusal != nil {
				rep.NoRoom.Message = protocol.AsError(wording.CLIError(rep.NoRoom.Refusal)).Message
			}
			full := &doctorReport{DoctorReport: rep, Clients: clients, ACPAgents: acpAgents(), canPush: canPush, homeArg: homeArg}
			for _, c := range clients {
				rep.Remediation = append(rep.Remediation, c.Remediation...)
			}
			rep.Remediation = append(rep.Remediation, clientNotes...)
			if err != nil {
				// Unhealthy: the report still prints; the refusal follows,
				// carrying the whole report (the clients and ACP agents
				// too) in its details (docs/configuration.md#acc-doctor).
				if !a.jsonMode {
					printDoctor(screen{a.env.Stdout}, full)
				}
				return protocol.AsError(err).With("report", full)
			}
			return a.emit(full, func(w io.Writer) { printDoctor(w, full) })
		},
	}
}

// doctorReport is the workspace report with the clients of this machine
// and what is proven for the ACP agents acc acp relays.
type doctorReport struct {
	*core.DoctorReport
	Clients   []install.ClientStatus `json:"clients"`
	ACPAgents []acpAgentStatus       `json:"acpAgents"`
	// canPush says whether --delivery would turn live push on for a
	// client (text only).
	canPush livePushOn
	// homeArg is the --home the commands it names need (install.Env.HomeArg).
	homeArg string
}

// acpAgentStatus is one ACP agent family and the newest version its
// evidence proves something for (pkg/adapters/acp).
type acpAgentStatus struct {
	Family     string `json:"family"`
	ProvenAt   string `json:"provenAt"`
	Attach     bool   `json:"attach"`
	NextTurn   bool   `json:"nextTurn"`
	SessionEnd bool   `json:"sessionEnd"`
}

func acpAgents() []acpAgentStatus {
	out := []acpAgentStatus{}
	for _, f := range acpfam.Families() {
		ev, err := acpfam.Evidence(f)
		if err != nil || len(ev) == 0 {
			continue
		}
		newest := ev[len(ev)-1]
		caps, _ := adapter.ProvenFor(ev, newest.Version)
		out = append(out, acpAgentStatus{Family: f, ProvenAt: newest.Version, Attach: caps.Attach, NextTurn: caps.NextTurn, SessionEnd: caps.SessionEnd})
	}
	return out
}

// sessionCounts heads doctor's report with the sessions it lists below:
// "2 sessions online", "1 session online, 1 stale", "no live session".
func sessionCounts(sessions []core.AttachedSession) string {
	online, stale := 0, 0
	for _, p := range sessions {
		if p.Presence == core.PresenceStale {
			stale++
		} else {
			online++
		}
	}
	switch {
	case online == 0 && stale == 0:
		return "no live session"
	case online == 0:
		return fmt.Sprintf("no session online, %d stale", stale)
	case stale == 0:
		return plural(int64(online), "session") + " online"
	}
	return fmt.Sprintf("%s online, %d stale", plural(int64(online), "session"), stale)
}

// plural writes n with the noun in the number it takes: "1 event",
// "2 events".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// printServer is the server line of a room on PostgreSQL.
func printServer(w io.Writer, srv *core.DoctorServer) {
	if !srv.Reachable {
		fmt.Fprintf(w, "  server %s (from %s): not reachable\n", srv.URL, srv.From)
		return
	}
	tls := "TLS"
	if !srv.TLS {
		tls = "no TLS"
	}
	fmt.Fprintf(w, "  server %s (from %s): PostgreSQL %s, %s (sslmode %s), round trip %.2f ms, clock %+d ms from this machine's\n",
		srv.URL, srv.From, srv.Version, tls, srv.SSLMode, srv.LatencyMs, srv.ClockOffsetMs)
}

func printDoctor(w io.Writer, full *doctorReport) {
	rep := full.DoctorReport
	if rep.NoRoom != nil {
		printNoRoom(w, full)
		return
	}
	s := rep.Store
	switch {
	case rep.DataHome.Problem != "":
		fmt.Fprintf(w, "acc's data home cannot be used; no store; protection %s\n", rep.Protection)
	case s.Healthy && !s.Exists:
		fmt.Fprintf(w, "no store yet (nothing wrong); %s; protection %s\n", sessionCounts(rep.Sessions), rep.Protection)
	case s.Healthy:
		fmt.Fprintf(w, "store healthy; %s; protection %s\n", sessionCounts(rep.Sessions), rep.Protection)
	default:
		fmt.Fprintf(w, "store unhealthy; live sessions unknown; protection %s\n", rep.Protection)
	}
	config := "no acc.workspace.json"
	if rep.Workspace.ConfigPath != nil {
		config = "config " + *rep.Workspace.ConfigPath
	}
	fmt.Fprintf(w, "  workspace %s from %s; %s\n", rep.WorkspaceID, rep.Source, config)
	printDataHome(w, rep.DataHome)
	if srv := s.Server; srv != nil {
		printServer(w, srv)
	}
	switch {
	case s.Engine == "postgresql" && s.Healthy && s.Exists:
		fmt.Fprintf(w, "  room %s on %s: schema %d, identity ok; %s, %s, %s\n",
			s.Server.Schema, s.Path, *s.SchemaVersion, plural(s.Counts.Messages, "message"), plural(s.Counts.Events, "event"), plural(int64(s.Counts.Sessions), "session"))
	case s.Engine == "postgresql" && !s.Healthy:
		for _, p := range s.Problems {
			fmt.Fprintf(w, "  problem %s: %s\n", p.ReasonCode, p.Message)
		}
	case !s.Exists:
		note := s.Note
		if note == "" {
			note = core.NoStoreNote
		}
		fmt.Fprintf(w, "  %s (%s)\n", note, s.Path)
	case s.Healthy && s.Note != "":
		fmt.Fprintf(w, "  store %s: %s\n", s.Path, s.Note)
	case s.Healthy:
		fmt.Fprintf(w, "  store %s: schema %d, identity ok, integrity ok; %s, %s, %s; db %d B, wal %d B, shm %d B\n",
			s.Path, *s.SchemaVersion, plural(s.Counts.Messages, "message"), plural(s.Counts.Events, "event"), plural(int64(s.Counts.Sessions), "session"),
			s.Sizes.DB, s.Sizes.WAL, s.Sizes.SHM)
	case s.NotAFile != "":
		fmt.Fprintf(w, "  store %s: %s, not a file\n", s.Path, s.NotAFile)
		for _, p := range s.Problems {
			fmt.Fprintf(w, "  problem %s: %s\n", p.ReasonCode, p.Message)
		}
	default:
		fmt.Fprintf(w, "  store %s: db %d B, wal %d B, shm %d B\n", s.Path, s.Sizes.DB, s.Sizes.WAL, s.Sizes.SHM)
		for _, p := range s.Problems {
			fmt.Fprintf(w, "  problem %s: %s\n", p.ReasonCode, p.Message)
		}
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	for _, p := range rep.Sessions {
		fmt.Fprintf(w, "  session %s (%s) %s  %s\n", p.ParticipantID, p.Harness, p.Presence, p.SessionID)
	}
	for _, ad := range rep.Adapters {
		fmt.Fprintf(w, "  adapter %s: required, %s\n", ad.Adapter, ad.Status)
	}
	printMachine(w, full)
}

// printNoRoom is the report outside a room: why no room is selected, then
// what doctor knows without one.
func printNoRoom(w io.Writer, full *doctorReport) {
	rep := full.DoctorReport
	switch {
	case rep.NoRoom.ReasonCode == protocol.ReasonNoRoom && rep.DataHome.Problem != "":
		fmt.Fprintln(w, "no room selected, and acc's data home cannot be used; this machine's clients and data home follow")
	case rep.NoRoom.ReasonCode == protocol.ReasonNoRoom:
		fmt.Fprintln(w, "no room selected (nothing wrong); this machine's clients and data home follow")
	default:
		fmt.Fprintf(w, "no usable room (%s); this machine's clients and data home follow\n", rep.NoRoom.ReasonCode)
	}
	fmt.Fprintf(w, "  %s\n", rep.NoRoom.Message)
	printDataHome(w, rep.DataHome)
	printMachine(w, full)
}

// printDataHome says of the data home and acc's directory in it whether
// each exists; when a path on the way is no usable directory, what it is
// ("a broken symlink to …", "a file, not a directory"), and for the paths
// below it that they cannot be created.
func printDataHome(w io.Writer, d core.DoctorDataHome) {
	state := func(path string, ok bool) string {
		switch {
		case ok:
			return "exists"
		case d.ProblemPath == path:
			return strings.TrimPrefix(d.Problem, d.ProblemPath+" is ")
		case d.ProblemPath != "" && strings.HasPrefix(path, d.ProblemPath+"/"):
			return "cannot be created: " + d.Problem
		}
		return "not created yet"
	}
	fmt.Fprintf(w, "  data home %s (%s); acc's data %s (%s)\n", d.Path, state(d.Path, d.Exists), d.AccDir, state(d.AccDir, d.AccDirExists))
}

// printMachine prints what belongs to this machine rather than to a room:
// the clients, the ACP agents and the next steps.
func printMachine(w io.Writer, full *doctorReport) {
	rep := full.DoctorReport
	printClients(w, full.Clients, full.canPush, full.homeArg)
	for _, ag := range full.ACPAgents {
		var proven []string
		for _, c := range []struct {
			ok   bool
			name string
		}{{ag.Attach, "attach"}, {ag.NextTurn, "next turn"}, {ag.SessionEnd, "session end"}} {
			if c.ok {
				proven = append(proven, c.name)
			}
		}
		fmt.Fprintf(w, "  acp agent %s (acc acp): proven at %s: %s; advisory\n", ag.Family, ag.ProvenAt, strings.Join(proven, ", "))
	}
	fmt.Fprintf(w, "  %s\n", doctorLegend(rep.NoRoom == nil))
	for _, r := range rep.Remediation {
		fmt.Fprintf(w, "next: %s\n", r)
	}
}

// doctorLegend points to where the report's words are explained
// (docs/concepts.md#words-in-acc-status-and-acc-doctor); outside a room
// there is no protection to explain.
func doctorLegend(room bool) string {
	if room {
		return "protection (none, advisory, guarded), \"proven at X, running Y\" and live push are explained in docs/concepts.md"
	}
	return "\"proven at X, running Y\" and live push are explained in docs/concepts.md"
}
