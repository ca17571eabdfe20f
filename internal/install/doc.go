// Package install is `acc install`, `acc uninstall` and the client half of
// `acc doctor` (docs/adapters.md#what-acc-install-writes,
// docs/configuration.md#acc-doctor, docs/decisions.md#9-installer-ownership).
package install
