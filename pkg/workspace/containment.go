package workspace

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
)

// containmentRoots lists every directory the data home must stay out of: the
// workspace roots and, for a Git workspace, the whole repository — its
// common directory, the main worktree and every linked worktree. A Git
// workspace's Roots hold only the caller's worktree, yet every worktree
// shares the room, so a data home inside a sibling worktree or inside .git
// would still be a store written into the workspace
// (docs/protocol.md#runtime-location-and-containment).
// Linked worktrees are read from <common>/worktrees/*/gitdir, without
// running Git.
func containmentRoots(ws *Workspace) []string {
	roots := append([]string{}, ws.Roots...)
	if ws.Source != protocol.SourceGit || ws.Git == nil || ws.Git.CommonDir == "" {
		return roots
	}
	return append(append(roots, ws.Git.CommonDir), ws.Git.WorktreeRoots()...)
}

// WorktreeRoots lists the roots of every worktree of the repository: the
// main worktree (when the common directory is a ".git" inside it) and each
// linked worktree, read from <common>/worktrees/*/gitdir without running
// Git.
func (g *GitInfo) WorktreeRoots() []string {
	if g == nil || g.CommonDir == "" {
		return nil
	}
	common := g.CommonDir
	var roots []string
	if filepath.Base(common) == ".git" {
		roots = append(roots, filepath.Dir(common))
	}
	entries, err := os.ReadDir(filepath.Join(common, "worktrees"))
	if err != nil {
		return roots
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(common, "worktrees", e.Name(), "gitdir"))
		if err != nil {
			continue
		}
		// gitdir names the worktree's ".git" file: its directory is the
		// root. Git may write it relative to its own directory
		// (worktree.useRelativePaths).
		p := strings.TrimSpace(string(b))
		if !filepath.IsAbs(p) {
			p = filepath.Join(common, "worktrees", e.Name(), p)
		}
		if filepath.Base(p) == ".git" {
			roots = append(roots, filepath.Dir(p))
		}
	}
	return roots
}
