// Package e2e holds acc's end-to-end tests and benchmarks. It has no
// non-test code: everything here drives the built binaries (acc, acc-hook,
// acc-mcp) as real processes against real Git repositories and worktrees,
// then inspects the resulting store through pkg/storage.
//
// # Isolation
//
// TestMain builds the three binaries once into a temporary directory. Every
// test gets its own data home (ACC_DATA_HOME) and HOME under t.TempDir, and
// every child process runs with an environment built from scratch (PATH,
// HOME, ACC_DATA_HOME, TMPDIR, LANG and GIT_CONFIG_NOSYSTEM=1): no ACC_*
// credentials, no client session variables and no GIT_* or XDG_* settings
// of the developer's shell can reach it.
//
// # What is proven here
//
// The main loop (concurrent writers, kill -9 and failpoint crashes, rooms
// across worktrees and clones, lazy materialisation), claims racing across
// processes and real leases, and acc-hook as a real process on every
// adapter's captured payloads: attach and resume, projection marked offered
// only when stdout took it, the write guard with its bypass classes, and
// failing open (hook_*_test.go).
//
// # Sizes
//
// The heavy loads run in the default test command at a size that leaves the
// suite quick beside every other package on two shared cores (concurrent
// senders 8 x 100, 200 crash trials), and as a soak when ACC_STRESS=1
// (`make stress`: 8 x 800 sends, 800 trials). Measured times are logged,
// never asserted. Tests that mostly wait on timers and child processes
// run in parallel.
//
// # Benchmarks
//
// bench_test.go measures whole `acc message` and `acc inbox` processes and
// core's inbox page over 10,000 and 100,000 messages; bench_claims_test.go
// whole `acc claim`, `acc status` and `acc sync --scope history` processes;
// bench_hook_test.go whole `acc-hook` processes per event. The seeded rooms are
// cached under os.TempDir (acc-e2e-bench-<version>-<n>) and rebuilt when
// they no longer open.
package e2e
