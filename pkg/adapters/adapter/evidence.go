package adapter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// LoadEvidence reads every evidence/<version>.json record from fsys (an
// adapter module's embedded files), lowest version first. A record must
// decode strictly into [Evidence], name the version of its file name, and
// say by which test and when it was recorded; anything else is an error, so
// a broken record is caught by the adapter's tests rather than read as
// "nothing proven". The payloads a record rests on live beside it in
// evidence/<version>/.
func LoadEvidence(fsys fs.FS) ([]Evidence, error) {
	entries, err := fs.ReadDir(fsys, "evidence")
	if err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	var out []Evidence
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".json" {
			continue
		}
		name := path.Join("evidence", e.Name())
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		var ev Evidence
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ev); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, fmt.Errorf("%s: data after the record", name)
		}
		switch {
		case strings.TrimSuffix(e.Name(), ".json") != ev.Version:
			return nil, fmt.Errorf("%s: records version %q, not the file's", name, ev.Version)
		case !validVersion(ev.Version):
			return nil, fmt.Errorf("%s: version %q is not dotted numbers", name, ev.Version)
		case strings.TrimSpace(ev.Test) == "" || strings.TrimSpace(ev.Recorded) == "":
			return nil, fmt.Errorf("%s: says neither which test proved it nor when", name)
		}
		out = append(out, ev)
	}
	slices.SortFunc(out, func(a, b Evidence) int { return compareVersions(a.Version, b.Version) })
	for i := 1; i < len(out); i++ {
		if compareVersions(out[i-1].Version, out[i].Version) == 0 {
			return nil, fmt.Errorf("evidence: two records for version %s", out[i].Version)
		}
	}
	return out, nil
}

func validVersion(v string) bool {
	_, ok := parseVersion(v)
	return ok
}
