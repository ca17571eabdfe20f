package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/core"
)

// TestDoctorHeadlineIsDocumented: every first line doctor prints in a room
// matches one of the forms docs/cli.md gives for it (its Text output row),
// with <sessions> one of the documented session counts, <n> a number and
// <level> a word.
func TestDoctorHeadlineIsDocumented(t *testing.T) {
	var row string
	for _, line := range strings.Split(RenderReference(), "\n") {
		if strings.HasPrefix(line, "| `doctor` |") {
			row = line
		}
	}
	if row == "" {
		t.Fatal("docs/cli.md has no Text output row for doctor")
	}
	var heads, counts []string
	for _, m := range regexp.MustCompile("`([^`]*)`").FindAllStringSubmatch(row, -1) {
		span := m[1]
		switch {
		case strings.HasPrefix(span, "store ") || strings.HasPrefix(span, "no store"):
			heads = append(heads, span)
		case strings.Contains(span, "session") && !strings.Contains(span, ";") && span != "<sessions>":
			counts = append(counts, span)
		}
	}
	toRegexp := func(form string) string {
		q := regexp.QuoteMeta(form)
		q = strings.ReplaceAll(q, "<n>", "[0-9]+")
		return strings.ReplaceAll(q, "<level>", "[a-z]+")
	}
	var countREs []string
	for _, c := range counts {
		countREs = append(countREs, toRegexp(c))
	}
	var headREs []*regexp.Regexp
	for _, h := range heads {
		re := strings.ReplaceAll(toRegexp(h), "<sessions>", "(?:"+strings.Join(countREs, "|")+")")
		headREs = append(headREs, regexp.MustCompile("^"+re+"$"))
	}
	t.Logf("documented: %q with <sessions> one of %q", heads, counts)

	schema := 2
	session := func(presence string) core.AttachedSession {
		return core.AttachedSession{SessionID: "s", ParticipantID: "p", Harness: "cli", Presence: presence}
	}
	online, stale := session(core.PresenceOnline), session(core.PresenceStale)
	for _, c := range []struct {
		store    core.DoctorStore
		sessions []core.AttachedSession
	}{
		{core.DoctorStore{Exists: true, Healthy: true, SchemaVersion: &schema}, nil},
		{core.DoctorStore{Exists: true, Healthy: true, SchemaVersion: &schema}, []core.AttachedSession{online}},
		{core.DoctorStore{Exists: true, Healthy: true, SchemaVersion: &schema}, []core.AttachedSession{online, online}},
		{core.DoctorStore{Exists: true, Healthy: true, SchemaVersion: &schema}, []core.AttachedSession{online, stale}},
		{core.DoctorStore{Exists: true, Healthy: true, SchemaVersion: &schema}, []core.AttachedSession{online, online, online, stale}},
		{core.DoctorStore{Exists: true, Healthy: true, SchemaVersion: &schema}, []core.AttachedSession{stale}},
		{core.DoctorStore{Healthy: true}, nil},
		{core.DoctorStore{Exists: true}, nil},
	} {
		rep := &core.DoctorReport{DoctorRoom: &core.DoctorRoom{Protection: "none", Store: c.store, Sessions: c.sessions}}
		var out bytes.Buffer
		printDoctor(&out, &doctorReport{DoctorReport: rep})
		head, _, _ := strings.Cut(out.String(), "\n")
		documented := false
		for _, re := range headREs {
			documented = documented || re.MatchString(head)
		}
		if !documented {
			t.Errorf("doctor's first line %q is none of the documented forms", head)
		}
	}
}
