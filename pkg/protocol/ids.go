package protocol

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// ID kinds used as prefixes of generated identifiers (docs/protocol.md#generated-ids).
const (
	KindSession     = "session"
	KindGeneration  = "generation"
	KindClaim       = "claim"
	KindMessage     = "message"
	KindEvent       = "event"
	KindWorkspace   = "workspace"
	KindClient      = "client" // generated clientMessageId (docs/decisions.md#18-details-the-original-left-open)
	KindTransaction = "transaction"
)

// NewID returns "<kind>_" followed by 22 base64url characters encoding 128
// random bits from crypto/rand (docs/protocol.md#generated-ids). It panics only if the
// operating system's random source fails, which Go's crypto/rand never
// reports on Linux or macOS.
func NewID(kind string) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("protocol: crypto/rand failed: " + err.Error())
	}
	return kind + "_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// IsGeneratedID reports whether s has the exact shape NewID(kind) produces.
func IsGeneratedID(kind, s string) bool {
	rest, ok := strings.CutPrefix(s, kind+"_")
	if !ok || len(rest) != 22 {
		return false
	}
	// Strict decoding also refuses a last character whose four padding bits
	// are set: NewID never produces one.
	_, err := base64.RawURLEncoding.Strict().DecodeString(rest)
	return err == nil
}

// DerivedWorkspaceID returns "workspace_" + the first 32 lowercase hex digits
// of SHA-256 over the canonical absolute path (docs/protocol.md#generated-ids,
// docs/protocol.md#workspace-discovery).
func DerivedWorkspaceID(canonicalPath string) string {
	sum := sha256.Sum256([]byte(canonicalPath))
	return "workspace_" + hex.EncodeToString(sum[:])[:32]
}

var windowsDeviceNames = map[string]bool{"con": true, "prn": true, "aux": true, "nul": true}

func init() {
	for _, p := range []string{"com", "lpt"} {
		for i := '1'; i <= '9'; i++ {
			windowsDeviceNames[p+string(i)] = true
		}
	}
}

// IsPortableID reports whether s is a portable id: 1–200 characters from
// [A-Za-z0-9._-], starting alphanumeric, not ending with '.', and not a
// Windows device name alone or followed by '.' (docs/protocol.md#identifiers-and-text-fields).
func IsPortableID(s string) bool {
	if len(s) == 0 || len(s) > 200 || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	head, _, _ := strings.Cut(s, ".")
	return !windowsDeviceNames[strings.ToLower(head)]
}

// SanitiseParticipantID turns free text (ACC_PARTICIPANT) into a portable id:
// trimmed, every run of characters outside [A-Za-z0-9._-] replaced by '-',
// cut to 60 characters (docs/protocol.md#generated-ids). It returns "" when nothing
// portable is left.
func SanitiseParticipantID(s string) string {
	s = strings.TrimSpace(s)
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := r < 128 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		if ok {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	out := b.String()
	if len(out) > 60 {
		out = out[:60]
	}
	out = strings.TrimLeft(out, "._-")
	out = strings.TrimRight(out, ".")
	if !IsPortableID(out) {
		return ""
	}
	return out
}

// ReceiptID returns "<messageId>--<recipientParticipantId>".
func ReceiptID(messageID, recipient string) string { return messageID + "--" + recipient }
