package workspace

import (
	"net/url"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
)

// EnvStoreURL names the PostgreSQL server of every room a process opens,
// overriding storeUrl of the workspace config
// (docs/configuration.md#rooms-on-postgresql).
const EnvStoreURL = "ACC_STORE_URL"

// maxStoreURLBytes bounds a store URL; a real one is under a hundred bytes.
const maxStoreURLBytes = 2048

// passwordSources is how a store URL's refusal names the places a password
// belongs instead, all read by the PostgreSQL client library acc uses.
const passwordSources = "PGPASSWORD, ~/.pgpass (or the file PGPASSFILE names), a service file entry (PGSERVICE) or a client certificate (sslcert/sslkey)"

// StoreURLExample is the shape of a store URL, for messages and help.
const StoreURLExample = "postgres://acc@db.example:5432/acc?sslmode=verify-full"

// ParseStoreURL checks raw as a PostgreSQL store URL: postgres:// or
// postgresql://, naming a host, at most 2048 bytes, no control characters.
// It returns the URL with any password removed (safe to show) and whether
// one was present, in the userinfo or as a password= (or sslpassword=, the
// client key's) parameter; or, for a
// URL it cannot use, problem completes "<where it came from> …" and never
// holds the password.
func ParseStoreURL(raw string) (shown string, hasPassword bool, problem string) {
	if raw == "" {
		return "", false, "is empty"
	}
	if len(raw) > maxStoreURLBytes || strings.ContainsFunc(raw, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", false, "is not one line of at most 2048 bytes"
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's message repeats the input, password and all.
		return "", false, "is not a URL"
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return "", false, "must start with postgres:// or postgresql:// (a room lives in SQLite, the default, or on PostgreSQL)"
	}
	if u.Host == "" && u.Query().Get("host") == "" {
		return "", false, "names no server"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			hasPassword = true
			u.User = url.User(u.User.Username())
		}
	}
	// sslpassword unlocks the client key (sslkey): a secret as much as the
	// role's password.
	if q := u.Query(); q.Has("password") || q.Has("sslpassword") {
		hasPassword = true
		q.Del("password")
		q.Del("sslpassword")
		u.RawQuery = q.Encode()
	}
	return u.String(), hasPassword, ""
}

// StoreURLEnv returns ACC_STORE_URL, "" when unset. A value that is no
// usable PostgreSQL URL is env_invalid (exit 2); a password in it is
// allowed (the variable is the user's own), and no message shows it.
func StoreURLEnv(getenv func(string) string) (string, error) {
	v := getenv(EnvStoreURL)
	if v == "" {
		return "", nil
	}
	if _, _, problem := ParseStoreURL(v); problem != "" {
		return "", protocol.Errorf(protocol.ReasonEnvInvalid, "%s %s; set it to a URL such as %s, or unset it to use the workspace config's storeUrl or SQLite",
			EnvStoreURL, problem, StoreURLExample).With("variable", EnvStoreURL)
	}
	return v, nil
}

// checkConfigStoreURL is the storeUrl rule of ValidateConfig: a store URL
// (ParseStoreURL) that carries no password, since the file is committed.
// A password is store_url_has_password (exit 4), naming where it belongs.
func checkConfigStoreURL(raw, name string) error {
	shown, hasPassword, problem := ParseStoreURL(raw)
	if problem != "" {
		return protocol.Errorf(protocol.ReasonConfigInvalid, "%s: storeUrl %s; give a URL such as %s", name, problem, StoreURLExample).
			With("file", name).With("field", "storeUrl")
	}
	if hasPassword {
		return protocol.Errorf(protocol.ReasonStoreURLHasPassword,
			"%s: storeUrl carries a password, and the file is committed; remove it (the URL without it is %s) and give the password through %s",
			name, shown, passwordSources).With("file", name).With("field", "storeUrl")
	}
	return nil
}
