// Package acp is what acc has proven about the ACP agents its relay
// (`acc acp -- <agent…>`) wraps, per agent family and version, in the same
// evidence records as the native adapters
// (docs/decisions.md#6-measured-capabilities): a capability
// holds from the lowest version a real-agent test proved it.
//
// A family is named by the last segment of the agentInfo.name the agent
// answers initialize with: "@agentclientprotocol/claude-agent-acp" is
// claude-agent-acp, "gemini-cli" is gemini-cli. An agent of a family acc
// does not know, or at a version older than every record, is proven
// nothing: the relay still projects and guards, but the router never
// promises its next turn.
//
// What the capabilities mean for a relayed session: Attach, the relay saw
// session/new (or load, resume) answered and bound an acc session to it;
// NextTurn, a text block the relay added to session/prompt reached the
// model's next request; SessionEnd, the session went offline when the
// agent exited or its input ended. GuardFiles and GuardShell stay false:
// the relay can refuse only writes the agent asks the editor to make
// (fs/write_text_file), and the agents measured write with their own
// tools, so relayed sessions are advisory.
package acp

import (
	"embed"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

//go:embed families
var families embed.FS

// Families lists the agent families with evidence, sorted.
func Families() []string {
	entries, _ := fs.ReadDir(families, "families")
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

// Family is the family of an agent that reports agentName in its
// initialize result: the name's last "/" segment, lower-cased ("" for an
// empty name).
func Family(agentName string) string {
	name := strings.TrimSpace(agentName)
	if name == "" {
		return ""
	}
	return strings.ToLower(path.Base(name))
}

// Evidence lists family's records, lowest version first (nil for a
// family without any). A record that does not load is an error.
func Evidence(family string) ([]adapter.Evidence, error) {
	if !slices.Contains(Families(), family) {
		return nil, nil
	}
	sub, err := fs.Sub(families, "families/"+family)
	if err != nil {
		return nil, err
	}
	if _, err := fs.Stat(sub, "evidence"); err != nil {
		return nil, nil // nothing recorded yet
	}
	return adapter.LoadEvidence(sub)
}

// Capabilities is what is proven for the agent named agentName at
// version, with the newest record that applies (nil when none does).
func Capabilities(agentName, version string) (adapter.Capabilities, *adapter.Evidence) {
	ev, err := Evidence(Family(agentName))
	if err != nil || len(ev) == 0 {
		return adapter.Capabilities{}, nil
	}
	return adapter.ProvenFor(ev, version)
}
