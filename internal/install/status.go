package install

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/acc-go/acc/internal/evidence"
	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// FileStatus is how one recorded artifact stands now.
type FileStatus struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	// Status is intact (as acc wrote it), modified (a person changed it)
	// or missing.
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// ClientStatus is one client as `acc doctor` reports it
// (docs/configuration.md#acc-doctor; docs/decisions.md#6-measured-capabilities).
type ClientStatus struct {
	Detection
	// Installed: the record holds an installation of this client;
	// InstallState is its state (installed, or pending when a run did not
	// finish).
	Installed    bool         `json:"installed"`
	InstallState string       `json:"installState,omitempty"`
	Files        []FileStatus `json:"files"`
	// Capabilities are those proven for the running version (carried
	// forward from the newest proof not above it).
	Capabilities adapter.Capabilities `json:"capabilities"`
	// ProvenAt is the version whose proof applies ("" when none does);
	// NewestProven the newest version acc holds a proof for.
	ProvenAt     string `json:"provenAt"`
	NewestProven string `json:"newestProven"`
	// ProvenHere is when acc certify proved this version on this machine
	// ("" when it did not); its record then decides the capabilities.
	ProvenHere string `json:"provenHere,omitempty"`
	// CertifiedHere are the versions acc certify recorded a proof of on
	// this machine, whichever is installed (a run with --client proves a
	// program that need not be on PATH).
	CertifiedHere []string `json:"certifiedHere,omitempty"`
	// Proof says it in words: "proven at X, running Y".
	Proof             string `json:"proof"`
	Guarded           bool   `json:"guarded"`
	DeliveryPolicy    string `json:"deliveryPolicy"`
	EffectiveDelivery string `json:"effectiveDelivery"`
	DeliveryReason    string `json:"deliveryReason,omitempty"`
	// TurnDelivery is the client's delivery inside a busy turn (turn.go):
	// what is proven for the version found and what the installation
	// records.
	TurnDelivery TurnDelivery `json:"turnDelivery"`
	Remediation  []string     `json:"remediation"`
}

// Clients reports every client, sorted by id: detection, the installed
// files checked against the record, the proven capabilities and the
// delivery policy, with the next command for anything to fix. Read-only.
//
// An install record that cannot be read is returned as the error, with
// every client still detected (but none shown installed).
func (e *Env) Clients(ctx context.Context) ([]ClientStatus, error) {
	rec, recErr := loadRecord(e.DataHome)
	if recErr != nil {
		rec = &Record{}
	}
	out := []ClientStatus{}
	dets := e.detectAll(ctx, e.ids())
	for _, id := range e.ids() {
		a := e.Adapters[id]
		st := ClientStatus{Detection: dets[id], Files: []FileStatus{}, Remediation: []string{}, DeliveryPolicy: "off", EffectiveDelivery: "off"}
		caps, ev, local := evidence.For(a, st.Version, e.DataHome)
		st.Capabilities, st.Guarded = caps, caps.Guarded()
		st.TurnDelivery = turnDelivery(a, st.Version, st.Binary != "", caps, "", "")
		if _, err := evidence.Read(e.DataHome, id, st.Version); err != nil {
			// Counted as none (the built-in evidence applies); say so.
			st.Remediation = append(st.Remediation, err.Error())
		}
		all := a.Evidence()
		if len(all) > 0 {
			st.NewestProven = all[len(all)-1].Version
		}
		if ev != nil {
			st.ProvenAt = ev.Version
		}
		switch {
		case local != nil:
			when := local.Recorded[:min(10, len(local.Recorded))]
			if when == "" {
				when = "an unknown date"
			}
			here, kept := caps, adapter.Capabilities{}
			if slices.Contains(local.Kept, "sessionEnd") {
				// Certify's headless run did not see it; the record kept
				// it from acc's own run of this version (docs/certify.md).
				here.SessionEnd, kept.SessionEnd = false, caps.SessionEnd
			}
			st.Proof = fmt.Sprintf("proven here on %s for %s by acc certify: %s", when, st.Version, provenList(here))
			if kept != (adapter.Capabilities{}) {
				st.Proof += "; kept from acc's own run of " + st.Version + ": " + provenList(kept)
			}
			if missing := unprovenList(caps); missing != "" {
				st.Proof += "; not proven: " + missing
			}
			st.ProvenHere = local.Recorded
		case len(all) == 0:
			st.Proof = "no capability of " + a.DisplayName() + " is proven yet; its sessions are advisory"
		case st.Version == "" && st.Binary == "":
			st.Proof = fmt.Sprintf("no %s on PATH; proven at %s", a.Binary(), st.NewestProven)
		case st.Version == "":
			st.Proof = fmt.Sprintf("version unreadable, so nothing is assumed; proven at %s", st.NewestProven)
		case ev == nil:
			st.Proof = fmt.Sprintf("running %s, older than the first proof (%s): no capability assumed", st.Version, all[0].Version)
		case st.Version != st.NewestProven && ev.Version == st.NewestProven:
			st.Proof = fmt.Sprintf("proven at %s, running %s (newer: capabilities carried forward from %s; %s)", ev.Version, st.Version, ev.Version, proofDetail(a, *ev))
		default:
			st.Proof = fmt.Sprintf("proven at %s, running %s (%s)", ev.Version, st.Version, proofDetail(a, *ev))
		}
		if st.CertifiedHere = evidence.List(e.DataHome, id); local == nil && len(st.CertifiedHere) > 0 {
			st.Proof += "; acc certify proved here: " + strings.Join(st.CertifiedHere, ", ")
		}
		if in := rec.find(id); in != nil {
			st.Installed, st.InstallState = true, in.State
			// What acc can honour is judged now, for the version running now.
			st.DeliveryPolicy = in.DeliveryPolicy
			st.EffectiveDelivery, st.DeliveryReason = liveDelivery(a, st.Version, caps.LivePush, in.DeliveryPolicy)
			st.TurnDelivery = turnDelivery(a, st.Version, st.Binary != "", caps, in.MidTurnPolicy, in.EndOfTurnPolicy)
			changed := false
			for _, ra := range in.Artifacts {
				fs := checkArtifact(ra, e.shimPath())
				changed = changed || fs.Status != "intact"
				st.Files = append(st.Files, fs)
			}
			if in.State != "installed" {
				st.Remediation = append(st.Remediation, fmt.Sprintf("acc install%s --adapter %s   # a previous install did not finish", e.HomeArg(), id))
			} else if changed {
				// A changed file first: install refuses to overwrite it, so
				// "put it back" can only work once it is dealt with.
				modified := slices.ContainsFunc(st.Files, func(f FileStatus) bool { return f.Status == "modified" })
				for _, f := range st.Files {
					switch {
					case f.Status == "modified":
						st.Remediation = append(st.Remediation, fmt.Sprintf("acc's %s in %s was changed by hand: put it back or remove it, then run acc install%s --adapter %s", what(f), f.Path, e.HomeArg(), id))
					case f.Status == "missing" && !modified:
						st.Remediation = append(st.Remediation, fmt.Sprintf("acc install%s --adapter %s   # acc's %s in %s is gone; this puts it back", e.HomeArg(), id, what(f), f.Path))
					}
				}
			}
			if !st.Present {
				st.Remediation = append(st.Remediation, fmt.Sprintf("acc uninstall%s --adapter %s   # %s is no longer on this machine", e.HomeArg(), id, a.DisplayName()))
			}
			if id == "codex" {
				st.Remediation = append(st.Remediation, "in Codex, open /hooks and trust acc's hooks (acc cannot see whether you did; untrusted hooks never run)")
			}
		} else if st.Present && recErr == nil {
			st.Remediation = append(st.Remediation, fmt.Sprintf("acc install%s --adapter %s", e.HomeArg(), id))
		}
		out = append(out, st)
	}
	return out, recErr
}

// checkArtifact compares one recorded artifact with the disk.
func checkArtifact(ra RecordedArtifact, shim string) FileStatus {
	fs := FileStatus{Path: ra.Path, Kind: string(ra.Kind), Status: "missing"}
	src, existed, err := readFile(ra.Path)
	if err != nil || !existed {
		return fs
	}
	switch ra.Kind {
	case adapter.ArtifactFile:
		fs.Status = map[bool]string{true: "intact", false: "modified"}[sum(src) == ra.SHA256]
	case adapter.ArtifactTOMLBlock:
		regions := findBlocks(src)
		switch {
		case len(regions) == 1 && sum(regions[0].block) == ra.SHA256:
			fs.Status = "intact"
		case len(regions) > 0:
			fs.Status = "modified"
		}
	case adapter.ArtifactJSONEntry:
		fs.Detail = joinDots(ra.Pointer)
		doc, err := parseJSON(src)
		if err != nil {
			fs.Status, fs.Detail = "modified", "the file no longer parses: "+err.Error()
			return fs
		}
		if i, _ := doc.indexOf(ra.Pointer, ra.Value); i >= 0 {
			fs.Status = "intact"
		} else if n, _ := doc.accEntries(ra.Pointer, ra.Value, ra.Identity); n > 0 {
			fs.Status = "modified"
		}
	}
	return fs
}

func what(f FileStatus) string {
	switch f.Kind {
	case "json-entry":
		return "entry " + f.Detail
	case "toml-block":
		return "block"
	}
	return "file"
}

// hookCapabilities are the capabilities the client line of acc doctor
// names; live push, mid-turn and end of turn have words of their own.
func hookCapabilities(caps adapter.Capabilities) []struct {
	ok   bool
	name string
} {
	return []struct {
		ok   bool
		name string
	}{{caps.Attach, "attach"}, {caps.NextTurn, "next turn"}, {caps.GuardFiles, "file guard"}, {caps.GuardShell, "shell guard"}, {caps.SessionEnd, "session end"}}
}

// provenList names the capabilities caps proves, or says none is.
func provenList(caps adapter.Capabilities) string {
	var out []string
	for _, c := range hookCapabilities(caps) {
		if c.ok {
			out = append(out, c.name)
		}
	}
	if len(out) == 0 {
		return "nothing proven"
	}
	return strings.Join(out, ", ")
}

// unprovenList names the capabilities caps does not prove ("" when it
// proves all of them).
func unprovenList(caps adapter.Capabilities) string {
	var out []string
	for _, c := range hookCapabilities(caps) {
		if !c.ok {
			out = append(out, c.name)
		}
	}
	return strings.Join(out, ", ")
}

// proofDetail says where the built-in proof ev comes from and what it
// proves and does not: "upstream's captures of Kimi Code 0.36.1: attach,
// next turn, file guard, shell guard; not proven: session end". A record
// written by acc's real-client tests names them first in its test field
// (evidence.RealClientTest); one resting on someone else's captures says
// "upstream capture"; any other basis is not named
// (docs/adapters.md#capabilities-and-their-evidence).
func proofDetail(a adapter.Adapter, ev adapter.Evidence) string {
	var basis string
	switch {
	case strings.HasPrefix(ev.Test, evidence.RealClientTest):
		basis = fmt.Sprintf("acc's own run of %s %s: ", a.DisplayName(), ev.Version)
	case strings.HasPrefix(ev.Test, "upstream capture"):
		basis = fmt.Sprintf("upstream's captures of %s %s: ", a.DisplayName(), ev.Version)
	}
	out := basis + provenList(ev.Proven)
	if missing := unprovenList(ev.Proven); missing != "" {
		out += "; not proven: " + missing
	}
	return out
}
