package protocol

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

func TestNewIDShape(t *testing.T) {
	kinds := []string{KindSession, KindGeneration, KindClaim, KindMessage, KindEvent, KindWorkspace, KindClient, KindTransaction}
	for _, kind := range kinds {
		id := NewID(kind)
		suffix, ok := strings.CutPrefix(id, kind+"_")
		if !ok {
			t.Fatalf("NewID(%q) = %q: missing prefix %q", kind, id, kind+"_")
		}
		if len(suffix) != 22 {
			t.Fatalf("NewID(%q) = %q: suffix has %d characters, want 22", kind, id, len(suffix))
		}
		raw, err := base64.RawURLEncoding.Strict().DecodeString(suffix)
		if err != nil {
			t.Fatalf("NewID(%q) = %q: suffix is not strict base64url: %v", kind, id, err)
		}
		if len(raw) != 16 {
			t.Fatalf("NewID(%q) = %q: suffix decodes to %d bytes, want 16", kind, id, len(raw))
		}
		if !IsGeneratedID(kind, id) {
			t.Errorf("IsGeneratedID(%q, %q) = false for a fresh id", kind, id)
		}
		if !IsPortableID(id) {
			t.Errorf("generated id %q is not a portable id", id)
		}
	}
}

// TestNewIDRandomness draws many ids and checks they never repeat and that
// every one of the 128 bit positions takes both values: a constant bit would
// mean fewer than 128 random bits.
func TestNewIDRandomness(t *testing.T) {
	const draws = 20000
	seen := make(map[string]bool, draws)
	var ones [128]int
	for range draws {
		id := NewID(KindMessage)
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(id, "message_"))
		if err != nil {
			t.Fatal(err)
		}
		for bit := range 128 {
			if raw[bit/8]&(1<<(bit%8)) != 0 {
				ones[bit]++
			}
		}
	}
	// Each bit is a fair coin: 10000 ± 5σ (σ ≈ 71) holds with overwhelming
	// probability for a correct generator.
	for bit, n := range ones {
		if n < draws/2-500 || n > draws/2+500 {
			t.Errorf("bit %d was set %d times in %d draws; not uniformly random", bit, n, draws)
		}
	}
}

func TestIsGeneratedID(t *testing.T) {
	good := NewID(KindClaim)
	suffix := strings.TrimPrefix(good, "claim_")
	// The 22nd character carries 2 data bits and 4 zero padding bits; a
	// character whose padding bits are set is not something NewID produces.
	badLast := suffix[:21] + "B"
	cases := []struct {
		kind, id string
		want     bool
	}{
		{KindClaim, good, true},
		{KindMessage, good, false},
		{KindClaim, "claim_" + suffix[:21], false},
		{KindClaim, "claim_" + suffix + "A", false},
		{KindClaim, "claim_" + suffix[:21] + "+", false},
		{KindClaim, "claim_" + suffix[:21] + "/", false},
		{KindClaim, "claim_" + suffix[:20] + "==", false},
		{KindClaim, "claim-" + suffix, false},
		{KindClaim, suffix, false},
		{KindClaim, "", false},
		{KindClaim, "claim_" + badLast, false},
	}
	for _, c := range cases {
		if got := IsGeneratedID(c.kind, c.id); got != c.want {
			t.Errorf("IsGeneratedID(%q, %q) = %v, want %v", c.kind, c.id, got, c.want)
		}
	}
}

func TestIsPortableID(t *testing.T) {
	long := strings.Repeat("a", 200)
	cases := []struct {
		id   string
		want bool
	}{
		{"a", true},
		{"Z", true},
		{"0", true},
		{"claude-5P8POZ", true},
		{"client_receipt_wording_1", true},
		{"a.b-c_d", true},
		{"a..b", true},
		{long, true},
		{long + "a", false},
		{"", false},
		{".a", false},
		{"-a", false},
		{"_a", false},
		{"a.", false},
		{"ab.", false},
		{"a b", false},
		{"a/b", false},
		{"a:b", false},
		{"é", false},
		{"a\x00", false},
		{"a\n", false},
		// Windows device names, alone or followed by '.', any case.
		{"con", false},
		{"CON", false},
		{"Con", false},
		{"prn", false},
		{"aux", false},
		{"nul", false},
		{"NUL.txt", false},
		{"con.", false},
		{"com1", false},
		{"COM9", false},
		{"lpt1", false},
		{"Lpt9.log", false},
		{"lpt5.a.b", false},
		// Not device names: other digits, longer words, other separators.
		{"com0", true},
		{"com10", true},
		{"lpt0", true},
		{"console", true},
		{"con-1", true},
		{"con_x", true},
		{"nula", true},
		{"xcon", true},
		{"auxiliary.txt", true},
	}
	for _, c := range cases {
		if got := IsPortableID(c.id); got != c.want {
			t.Errorf("IsPortableID(%q) = %v, want %v", c.id, got, c.want)
		}
		err := CheckPortableID("f", c.id)
		if (err == nil) != c.want {
			t.Errorf("CheckPortableID(%q) = %v, want ok=%v", c.id, err, c.want)
		}
		if err != nil && CodeOf(err) != ExitData {
			t.Errorf("CheckPortableID(%q) exit %d, want %d", c.id, CodeOf(err), ExitData)
		}
	}
}

func TestSanitiseParticipantID(t *testing.T) {
	cases := []struct{ in, want string }{
		{"alice", "alice"},
		{"  alice  ", "alice"},
		{"Alice Smith", "Alice-Smith"},
		{"a  \t b", "a-b"}, // one run, one dash
		{"a - b", "a---b"}, // '-' is kept, the runs around it become dashes
		{"a/b:c@d", "a-b-c-d"},
		{"héllo wörld", "h-llo-w-rld"}, // a multi-byte character is one run
		{"日本語", ""},                    // nothing portable left
		{"", ""},
		{"   ", ""},
		{"--alice", "alice"}, // a portable id starts alphanumeric
		{"alice.", "alice"},  // and does not end with '.'
		{"con", ""},          // device names are never ids
		{"con.txt", ""},
		{strings.Repeat("x", 80), strings.Repeat("x", 60)},
		{strings.Repeat("x", 59) + " y", strings.Repeat("x", 59) + "-"},
		{strings.Repeat("x", 59) + ".y", strings.Repeat("x", 59)},
	}
	for _, c := range cases {
		got := SanitiseParticipantID(c.in)
		if got != c.want {
			t.Errorf("SanitiseParticipantID(%q) = %q, want %q", c.in, got, c.want)
		}
		if got != "" && !IsPortableID(got) {
			t.Errorf("SanitiseParticipantID(%q) = %q, not a portable id", c.in, got)
		}
		if len(got) > 60 {
			t.Errorf("SanitiseParticipantID(%q) has %d characters, more than 60", c.in, len(got))
		}
	}
}

func TestDerivedWorkspaceID(t *testing.T) {
	sum := sha256.Sum256([]byte("/repo"))
	id := DerivedWorkspaceID("/repo")
	if want := "workspace_" + hex.EncodeToString(sum[:16]); id != want {
		t.Fatalf("DerivedWorkspaceID = %q, want %q", id, want)
	}
	if !strings.HasPrefix(id, "workspace_") || len(id) != len("workspace_")+32 {
		t.Fatalf("DerivedWorkspaceID = %q, want workspace_ + 32 hex digits", id)
	}
	if strings.ToLower(id) != id || !IsPortableID(id) {
		t.Fatalf("DerivedWorkspaceID = %q, want lowercase portable id", id)
	}
	if DerivedWorkspaceID("/repo") != id || DerivedWorkspaceID("/repo2") == id {
		t.Fatal("DerivedWorkspaceID is not a function of its path")
	}
}

func TestReceiptID(t *testing.T) {
	if got := ReceiptID("message_x", "codex-abc"); got != "message_x--codex-abc" {
		t.Fatalf("ReceiptID = %q", got)
	}
}
