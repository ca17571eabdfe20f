// Package buildinfo says which acc this is, for every binary alike (acc
// version, acc-mcp's serverInfo.version).
package buildinfo

import "runtime/debug"

// buildVersion is set by `make build` (-ldflags -X) from `git describe`
// when the module version is not in the build information.
var buildVersion string

// Version returns the module version from the build information
// (SPEC decision 18); for a build from a checkout, the version `make build`
// stamped from git; else "(devel)".
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	if buildVersion != "" {
		return buildVersion
	}
	return "(devel)"
}
