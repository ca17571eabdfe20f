package e2e

import (
	"strings"
	"sync"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// TestRacingExclusiveClaimsHaveOneWinner starts 8 real processes that claim
// one resource exclusively at the same moment: exactly one succeeds, the
// other seven exit 5 naming the winner, and the store holds one claim.
func TestRacingExclusiveClaimsHaveOneWinner(t *testing.T) { racingClaims(t, newSandbox(t)) }

// TestRacingExclusiveClaimsHaveOneWinnerPostgres races the same processes
// with the room on the PostgreSQL test server.
func TestRacingExclusiveClaimsHaveOneWinnerPostgres(t *testing.T) { racingClaims(t, newSandboxPG(t)) }

func racingClaims(t *testing.T, sb *sandbox) {
	repo := sb.newRepo("repo")
	const racers = 8
	sessions := make([]session, racers)
	for i := range sessions {
		sessions[i] = sb.attach(repo, "p"+string(rune('a'+i)), "cli")
	}
	results := make([]result, racers)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range sessions {
		done.Add(1)
		go func(i int) {
			defer done.Done()
			start.Wait()
			results[i] = sb.as(sessions[i], "claim", "--resource", "file:race.txt", "--json")
		}(i)
	}
	start.Done()
	done.Wait()
	winner := -1
	for i, res := range results {
		switch res.code {
		case 0:
			if winner >= 0 {
				t.Fatalf("two racers won: %s and %s", sessions[winner].ParticipantID, sessions[i].ParticipantID)
			}
			winner = i
		case 5:
		default:
			t.Fatalf("racer %d exited %d, want 0 or 5:\n%s", i, res.code, res)
		}
	}
	if winner < 0 {
		t.Fatal("nobody won the race")
	}
	name := sessions[winner].ParticipantID
	for i, res := range results {
		if i != winner && (!strings.Contains(res.stdout, `"reasonCode": "claim_conflict"`) || !strings.Contains(res.stdout, name)) {
			t.Errorf("loser %d must exit 5 claim_conflict naming %s:\n%s", i, name, res)
		}
	}
	st := sb.openRoom(sessions[0].WorkspaceID)
	sb.checkStoreConsistent(t, sessions[0].WorkspaceID, st)
	var claims []protocol.Claim
	err := st.View(t.Context(), func(tx storage.ReadTx) error {
		var err error
		claims, err = tx.Claims()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != 1 || claims[0].OwnerSessionID != sessions[winner].SessionID || claims[0].Resource != "file:race.txt" {
		t.Fatalf("the store must hold exactly the winner's claim, got %+v", claims)
	}
	// Shared claims from all of them coexist; an exclusive claim from a
	// ninth process on anything inside conflicts with them.
	for _, s := range sessions {
		if res := sb.as(s, "claim", "--resource", "file:docs/**", "--mode", "shared"); res.code != 0 {
			t.Fatalf("shared claims must coexist:\n%s", res)
		}
	}
	ninth := sb.attach(repo, "pz", "cli")
	if res := sb.as(ninth, "claim", "--resource", "file:docs/x.md"); res.code != 5 {
		t.Fatalf("an exclusive claim inside shared ones must exit 5:\n%s", res)
	}
	if res := sb.as(ninth, "claim", "--resource", "file:docs/x.md", "--mode", "shared"); res.code != 0 {
		t.Fatalf("a shared claim inside shared ones must succeed:\n%s", res)
	}
}
