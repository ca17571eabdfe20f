// Package buildinfo says which acc this is, for every binary alike (acc
// version, acc --version, acc-mcp's serverInfo.version; docs/cli.md).
package buildinfo

import "runtime/debug"

// buildVersion is set by `make build` (-ldflags -X) from `git describe`.
var buildVersion string

// Version returns the version `make build` stamped from git, when it
// stamped one; else the module version from the build information
// (docs/decisions.md#18-details-the-original-left-open: `go install …@v1.2.3`
// gives v1.2.3); else "(devel)".
func Version() string {
	module := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		module = bi.Main.Version
	}
	return pick(buildVersion, module)
}

// pick chooses between the stamped version and the module version. The
// stamp comes first: since Go 1.24 a build in a checkout also carries a
// module version, a pseudo-version made from the commit
// (v0.0.0-20260101000000-0e04dab1dd48), which hid the tag that `make
// build` had stamped with `git describe`.
func pick(stamped, module string) string {
	switch {
	case stamped != "":
		return stamped
	case module != "" && module != "(devel)":
		return module
	}
	return "(devel)"
}
