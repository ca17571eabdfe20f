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

// spared are the children this process had before certify started
// anything, by pid and start time: they are the caller's, not a client's —
// the reader of `acc certify 2> >(tee log)`, which bash makes a child of
// acc — and endOrphans never touches them.
var spared map[int]string

// adoptOrphans makes this process adopt what a client leaves behind when
// it detaches from its process group (a relaunched child, a daemon), so
// endOrphans can end it, and notes the children it already has, which
// endOrphans leaves alone. Only acc certify calls it, before it starts
// anything.
func adoptOrphans() {
	spared = map[int]string{}
	for pid, start := range children() {
		spared[pid] = start
	}
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// children lists this process's children: pid to start time (in clock
// ticks since boot, so a reused pid is a different process).
func children() map[int]string {
	self := os.Getpid()
	out := map[int]string{}
	entries, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		// After the command's closing parenthesis: state (field 3), ppid
		// (4), …, starttime (22).
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 20 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == self {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(e)))
			out[pid] = f[19]
		}
	}
	return out
}

// endOrphans kills every child this process has that it did not have
// before certify started — whatever a client left running after it was
// reaped, adopted or not — and reaps it, so nothing of a client outlives
// its run or writes into the temporary HOME after it is removed.
func endOrphans() {
	for range 5 {
		found := false
		for pid, start := range children() {
			if s, ok := spared[pid]; ok && s == start {
				continue
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, 0, nil)
			found = true
		}
		if !found {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
