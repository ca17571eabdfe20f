package certify

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// adoptOrphans makes this process adopt what a client leaves behind when
// it detaches from its process group (a relaunched child, a daemon), so
// endOrphans can end it. Only acc certify calls it.
func adoptOrphans() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// endOrphans kills every process this one adopted — whatever a client
// left running after it was reaped — and reaps it, so nothing of a client
// outlives its run or writes into the temporary HOME after it is removed.
func endOrphans() {
	self := os.Getpid()
	for range 5 {
		found := false
		entries, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, e := range entries {
			b, err := os.ReadFile(e)
			if err != nil {
				continue
			}
			i := strings.LastIndexByte(string(b), ')')
			f := strings.Fields(string(b[i+1:]))
			if len(f) < 2 {
				continue
			}
			if ppid, _ := strconv.Atoi(f[1]); ppid == self {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(e)))
				_ = syscall.Kill(pid, syscall.SIGKILL)
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(pid, &ws, 0, nil)
				found = true
			}
		}
		if !found {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
