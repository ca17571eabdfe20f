package workspace

import (
	"os"
	"path/filepath"
	"runtime"

	"github.com/adrg/xdg"
)

// baseKind is one of the platform's per-user base directories: data, config
// or cache (docs/protocol.md#runtime-location-and-containment).
type baseKind struct {
	// xdgVar is the XDG variable that moves it outside macOS.
	xdgVar string
	// unix is its place below $HOME outside macOS, darwin on macOS.
	unix, darwin string
	// lib is adrg/xdg's answer for this process; seen is the value xdgVar
	// had when the library read the environment.
	lib  func() string
	seen string
}

// The library reads the process environment once, in its own init, which
// Go runs before this package's variables are set; so the values below are
// the ones it saw.
var (
	seenHome = os.Getenv(envHome)
	dataKind = baseKind{xdgVar: envXDGDataHome, unix: ".local/share", darwin: "Library/Application Support",
		lib: func() string { return xdg.DataHome }, seen: os.Getenv(envXDGDataHome)}
	configKind = baseKind{xdgVar: "XDG_CONFIG_HOME", unix: ".config", darwin: "Library/Application Support",
		lib: func() string { return xdg.ConfigHome }, seen: os.Getenv("XDG_CONFIG_HOME")}
	cacheKind = baseKind{xdgVar: "XDG_CACHE_HOME", unix: ".cache", darwin: "Library/Caches",
		lib: func() string { return xdg.CacheHome }, seen: os.Getenv("XDG_CACHE_HOME")}
)

// platformBase returns the platform's base directory of kind k for an
// environment already checked by acc's rules: home is getenv("HOME"), and
// is absolute unless an absolute XDG variable makes it unneeded. It is
// $XDG_…_HOME when that is absolute (never on macOS, where acc ignores the
// XDG variables on purpose), else home joined with the platform's place.
//
// fromLibrary reports that the answer is github.com/adrg/xdg's: it is, when
// the question is about this process — goos is runtime.GOOS and getenv gives
// HOME and the XDG variable the values the library read at start — and the
// library's rule agrees with acc's for those values: outside macOS when the
// XDG variable is unset or absolute (the library would silently replace a
// relative one, and expand a leading "~"), on macOS when it is unset (the
// library would honour it). Any other question (a test's environment, a
// variable changed since start) is answered by the same rule written here,
// because the library only reads the process environment.
func platformBase(goos string, getenv func(string) string, home string, k baseKind) (dir string, fromLibrary bool) {
	v := getenv(k.xdgVar)
	agrees := v == "" || (goos != "darwin" && filepath.IsAbs(v))
	if agrees && goos == runtime.GOOS && home == seenHome && v == k.seen {
		return filepath.Clean(k.lib()), true
	}
	if goos != "darwin" && v != "" && filepath.IsAbs(v) {
		return filepath.Clean(v), false
	}
	if goos == "darwin" {
		return filepath.Join(home, filepath.FromSlash(k.darwin)), false
	}
	return filepath.Join(home, filepath.FromSlash(k.unix)), false
}
