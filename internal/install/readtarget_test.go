package install

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// A file that vanished between two looks (an uninstall running at the same
// time removed it) is planned as absent; a symlink that leads nowhere is
// still in the way.
func TestReadTargetGoneMeanwhileIsAbsent(t *testing.T) {
	dir := t.TempDir()
	removed := filepath.Join(dir, "settings.json")
	if !gone(removed, fs.ErrNotExist) {
		t.Fatal("a path that is gone is not reported gone")
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(filepath.Join(dir, "nowhere.json"), link); err != nil {
		t.Fatal(err)
	}
	if gone(link, fs.ErrNotExist) {
		t.Fatal("a dangling symlink is reported gone")
	}
	if gone(removed, fs.ErrPermission) {
		t.Fatal("a permission error is reported gone")
	}
	if _, err := readTarget(link); !protocol.IsReason(err, protocol.ReasonInstallConflict) {
		t.Fatalf("a dangling symlink: %v, want install_conflict", err)
	}
	f, err := readTarget(removed)
	if err != nil || f.existed {
		t.Fatalf("a missing file: %+v, %v", f, err)
	}
}
