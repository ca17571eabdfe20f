// Package install is `acc install`, `acc uninstall` and the client half of
// `acc doctor` (reference/adapters.md §6, §3.7; SPEC decision 9).
package install
