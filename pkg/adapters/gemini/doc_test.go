package gemini

import (
	"regexp"
	"testing"
)

func TestIDIsTheShortClientName(t *testing.T) {
	if !regexp.MustCompile(`^[a-z]+$`).MatchString(ID) || ID != "gemini" {
		t.Fatalf("adapter id %q must be the module's short client name", ID)
	}
	if DisplayName == "" {
		t.Fatal("adapter needs a display name")
	}
}
