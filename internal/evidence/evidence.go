// Package evidence is what `acc certify` proved on this machine
// (docs/certify.md): one record per client and exact version, in the data home,
// beside the evidence built into the adapters
// (docs/decisions.md#6-measured-capabilities). A record proves
// what it says for its exact version only; a capability it reports not
// proven is not assumed for that version either, whatever the built-in
// evidence carries forward.
package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// Record is one local proof: the adapter's evidence shape, plus where it
// was made and why each capability is or is not proven.
type Record struct {
	adapter.Evidence
	// Local is always true: proven on this machine by acc certify.
	Local bool `json:"local"`
	// Binary is the client program that was run.
	Binary string `json:"binary"`
	// Why says, per capability, what the run observed.
	Why map[string]string `json:"why"`
	// Kept names the capabilities (adapter.Capabilities JSON names, e.g.
	// "sessionEnd") that Proven holds true without this machine's run
	// having seen them: kept from acc's own evidence of the same version,
	// because certify's headless run cannot observe them (Kimi Code fires
	// its session end only interactively; docs/certify.md). Empty for
	// everything measured here.
	Kept []string `json:"kept,omitempty"`
}

// RealClientTest begins the test field of every record acc's own
// real-client tests write (internal/realclient, ACC_UPDATE_EVIDENCE): such
// a record rests on acc running the real client, not on someone else's
// captures (docs/adapters.md#capabilities-and-their-evidence).
const RealClientTest = "internal/realclient "

// Path is where the record of adapterID at version lives:
// <data home>/acc/evidence/<adapter>/<version>.json.
func Path(dataHome, adapterID, version string) string {
	return filepath.Join(dataHome, "acc", "evidence", adapterID, version+".json")
}

// Read returns the local record of adapterID at version, nil when there is
// none. A record that does not decode is an error naming the file.
func Read(dataHome, adapterID, version string) (*Record, error) {
	if dataHome == "" || version == "" {
		return nil, nil
	}
	b, err := os.ReadFile(Path(dataHome, adapterID, version))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil || r.Version != version || r.Recorded == "" {
		return nil, fmt.Errorf("%s is not a certification record of version %s; run acc certify --adapter %s again", Path(dataHome, adapterID, version), version, adapterID)
	}
	return &r, nil
}

// Write stores r as the local record of adapterID (atomically: a reader
// sees the old record or the new one) and returns its path.
func Write(dataHome, adapterID string, r Record) (string, error) {
	r.Local = true
	path := Path(dataHome, adapterID, r.Version)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".record-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return path, os.Rename(tmp.Name(), path)
}

// List returns the versions of adapterID that acc certify recorded in
// dataHome, lowest first by name ("" entries and files that are not
// records are skipped; an unreadable directory is none).
func List(dataHome, adapterID string) []string {
	entries, err := os.ReadDir(filepath.Join(dataHome, "acc", "evidence", adapterID))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if v, ok := strings.CutSuffix(e.Name(), ".json"); ok && v != "" && !e.IsDir() {
			out = append(out, v)
		}
	}
	return out
}

// For is what is proven for a at version on this machine: the local
// record of that exact version when there is one (local is then set) —
// for what it measured; live push, which acc certify does not measure,
// stays the built-in evidence's — else what the built-in evidence proves
// (adapter.CapabilitiesFor). An unreadable local record counts as none.
func For(a adapter.Adapter, version, dataHome string) (caps adapter.Capabilities, ev *adapter.Evidence, local *Record) {
	if r, err := Read(dataHome, a.ID(), version); err == nil && r != nil {
		e := r.Evidence
		caps = r.Proven
		// acc certify runs clients headless and does not measure live push
		// (a record says so by having no reason for it): that stays what
		// the built-in evidence proves.
		if _, measured := r.Why["livePush"]; !measured {
			builtIn, _ := adapter.CapabilitiesFor(a, version)
			caps.LivePush = builtIn.LivePush
		}
		return caps, &e, r
	}
	caps, ev = adapter.CapabilitiesFor(a, version)
	return caps, ev, nil
}
