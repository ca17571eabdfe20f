package install

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// RecordSchemaVersion is the installs.json schema this acc reads and writes.
const RecordSchemaVersion = 1

// Record is the ownership record, <data home>/acc/installs.json
// (docs/decisions.md#9-installer-ownership; docs/adapters.md#in-accs-data-home): every file and entry acc wrote
// into a client's configuration, with what it wrote, so that uninstall
// removes exactly that and nothing a person changed.
type Record struct {
	SchemaVersion int `json:"schemaVersion"`
	// Shim is the hook shim every installed hook runs.
	Shim *RecordedFile `json:"shim,omitempty"`
	// Installs has one entry per adapter, sorted by adapter id.
	Installs []Install `json:"installs"`
	// DataDirectories are the directories install created in the data home
	// for its own files (the lock, this record, the shim): acc's directory
	// and any missing parents, and acc/bin — also those a run cut short
	// made and the lock file lists (installLock). Once no installation
	// remains, uninstall removes each one that is then empty
	// (docs/adapters.md).
	DataDirectories []string `json:"dataDirectories,omitempty"`
}

// RecordedFile is a whole file acc wrote.
type RecordedFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Install is one client's installation.
type Install struct {
	AdapterID string `json:"adapterId"`
	// State is "pending" while the files are being written and
	// "installed" once every one was; uninstall treats both alike.
	State         string `json:"state"`
	ClientVersion string `json:"clientVersion"`
	AccVersion    string `json:"accVersion"`
	InstalledAt   string `json:"installedAt"`
	Home          string `json:"home"`
	ConfigDir     string `json:"configDir"`
	// DeliveryPolicy is the live-delivery policy the person asked for
	// (off, actionable, all); EffectiveDelivery what acc can honour now.
	DeliveryPolicy    string `json:"deliveryPolicy"`
	EffectiveDelivery string `json:"effectiveDelivery"`
	DeliveryReason    string `json:"deliveryReason,omitempty"`
	// MidTurnPolicy and EndOfTurnPolicy are the turn-delivery policies the
	// person set for this client (acc install --mid-turn, --end-of-turn);
	// "" when not set, so the room's policy decides (ReadPolicies).
	MidTurnPolicy   string             `json:"midTurnPolicy,omitempty"`
	EndOfTurnPolicy string             `json:"endOfTurnPolicy,omitempty"`
	Artifacts       []RecordedArtifact `json:"artifacts"`
	// CreatedDirectories are directories the install made, removed on
	// uninstall when empty.
	CreatedDirectories []string `json:"createdDirectories"`
}

// RecordedArtifact is one artifact as written.
type RecordedArtifact struct {
	Kind adapter.ArtifactKind `json:"kind"`
	Path string               `json:"path"`
	// SHA256 is the hex hash of a file's bytes, or of a TOML block's text
	// (markers included).
	SHA256 string `json:"sha256,omitempty"`
	// Pointer and Value locate a JSON entry: the value acc appended to the
	// array at pointer.
	Pointer []string        `json:"pointer,omitempty"`
	Value   json.RawMessage `json:"value,omitempty"`
	// CreatedContainers are the objects and arrays acc created for the
	// entry; uninstall removes them once empty.
	CreatedContainers [][]string `json:"createdContainers,omitempty"`
	// CreatedFile: the file did not exist before acc wrote it; uninstall
	// deletes it when nothing but acc's seed is left.
	CreatedFile bool `json:"createdFile,omitempty"`
	// Seed is what acc created a JSON file with, besides its entries.
	Seed json.RawMessage `json:"seed,omitempty"`
	// Separator: acc added a newline to end the user's last line before
	// its TOML block.
	Separator bool `json:"separator,omitempty"`
	// Identity names the member that identifies the entry (see
	// adapter.Artifact.Identity).
	Identity string `json:"identity,omitempty"`
	// Original is a blank file's bytes (only whitespace) from before acc
	// filled it, given back when acc's entries go.
	Original *string `json:"original,omitempty"`
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// recordPath is <data home>/acc/installs.json.
func recordPath(dataHome string) string { return filepath.Join(dataHome, "acc", "installs.json") }

// loadRecord reads the record; a missing one is empty, also when a file
// stands where a directory on its path goes (no record can be there). One
// that does not parse, or has another schema version, is refused (exit 4):
// treating it as empty would orphan every file acc wrote.
func loadRecord(dataHome string) (*Record, error) {
	path := recordPath(dataHome)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return &Record{SchemaVersion: RecordSchemaVersion, Installs: []Install{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var r Record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, protocol.Errorf(protocol.ReasonInstallRecordInvalid, "%s is not a valid install record (%v); restore it from a backup, or move it away and remove acc's entries by hand", path, err).With("path", path)
	}
	if r.SchemaVersion != RecordSchemaVersion {
		return nil, protocol.Errorf(protocol.ReasonInstallRecordInvalid, "%s has schema version %d; this acc reads version %d — use the acc that wrote it", path, r.SchemaVersion, RecordSchemaVersion).With("path", path)
	}
	if r.Installs == nil {
		r.Installs = []Install{}
	}
	return &r, nil
}

// save writes the record atomically; an empty record (no installs, no
// shim) removes the file instead.
func (r *Record) save(dataHome string) error {
	path := recordPath(dataHome)
	if len(r.Installs) == 0 && r.Shim == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	slices.SortFunc(r.Installs, func(a, b Install) int {
		switch {
		case a.AdapterID < b.AdapterID:
			return -1
		case a.AdapterID > b.AdapterID:
			return 1
		}
		return 0
	})
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := accDir(filepath.Dir(path)); err != nil {
		return err
	}
	return writeAtomic(path, append(b, '\n'), 0o600)
}

func (r *Record) find(id string) *Install {
	for i := range r.Installs {
		if r.Installs[i].AdapterID == id {
			return &r.Installs[i]
		}
	}
	return nil
}

func (r *Record) put(in Install) {
	if cur := r.find(in.AdapterID); cur != nil {
		*cur = in
		return
	}
	r.Installs = append(r.Installs, in)
}

// adopt adds directories to DataDirectories, once each, outermost first,
// and reports whether any was new.
func (r *Record) adopt(dirs ...string) bool {
	added := false
	for _, d := range dirs {
		if !slices.Contains(r.DataDirectories, d) {
			r.DataDirectories = append(r.DataDirectories, d)
			added = true
		}
	}
	slices.SortStableFunc(r.DataDirectories, func(a, b string) int { return len(a) - len(b) })
	return added
}

// adoptLock records the directories lk created and those the lock file
// lists (a run cut short made them; see installLock) that still exist, and
// lists the record's directories in the lock file, so that an uninstall
// cut short after removing the record leaves them listed too. When the
// record exists the new ones are saved at once: a run can find nothing
// else to change (another run, which took the lock first, installed the
// same), and the directories must not then be nobody's.
func (r *Record) adoptLock(dataHome string, lk *installLock) error {
	lk.note(r.DataDirectories...)
	if !r.adopt(existing(union(lk.created, lk.listed))...) {
		return nil
	}
	if _, err := os.Lstat(recordPath(dataHome)); err != nil {
		return nil // the run's first save writes them
	}
	return r.save(dataHome)
}

func (r *Record) drop(id string) {
	r.Installs = slices.DeleteFunc(r.Installs, func(in Install) bool { return in.AdapterID == id })
}

// ReadPolicies reads dataHome's installation record once and returns the
// delivery policies it holds per client installation, for
// core.OpenOptions.ReadInstall (docs/delivery.md#where-delivery-is-decided):
// LivePush gives off, actionable or all (the --delivery policy;
// docs/delivery.md#live-push-waking-an-idle-session), off for a client acc
// did not install; Turn gives the --mid-turn and --end-of-turn policies,
// "" for each that is not set (the room's policy.midTurn and
// policy.endOfTurn, narrowed by these with router.Narrower, are what the
// router and the client's hooks apply; docs/delivery.md#mid-turn). A
// missing or unreadable record records nothing: off, and "". The record
// is read when a policy is first asked for, and only then, so a room
// whose process never asks (a guard hook) pays nothing for it.
func ReadPolicies(dataHome string) core.InstallPolicies {
	load := sync.OnceValues(func() (*Record, error) { return loadRecord(dataHome) })
	find := func(adapter string) *Install {
		rec, err := load()
		if err != nil {
			return nil
		}
		return rec.find(adapter)
	}
	return core.InstallPolicies{
		LivePush: func(adapter string) string {
			if in := find(adapter); in != nil && in.DeliveryPolicy != "" {
				return in.DeliveryPolicy
			}
			return "off"
		},
		Turn: func(adapter string) (midTurn, endOfTurn string) {
			if in := find(adapter); in != nil {
				return in.MidTurnPolicy, in.EndOfTurnPolicy
			}
			return "", ""
		},
	}
}

// accDir creates acc's directory in the data home readable by everyone
// (0755): the hook shim inside must be readable by whoever runs the
// clients, also when root installs for another user (its owner then
// follows the data home's). The record itself stays 0600.
func accDir(dir string) error {
	return mkdirAll(dir)
}
