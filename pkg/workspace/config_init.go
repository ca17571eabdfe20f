package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/acc-go/acc/pkg/protocol"
)

// ConfigValidation is what `acc config validate` learns of the config that
// governs a directory (docs/protocol.md#configuration-file;
// docs/decisions.md#19-workspace-config). File is nil and Config holds the
// defaults when no acc.workspace.json governs the directory. Valid is true
// whenever ValidateConfigAt returns one: a broken config is its error.
type ConfigValidation struct {
	Valid   bool    `json:"valid"`
	Present bool    `json:"present"`
	File    *string `json:"file"`
	Config  any     `json:"config"`
	// Dir is the canonical selected directory (text output only).
	Dir string `json:"-"`
}

// DefaultConfigView is what applies when no acc.workspace.json governs a
// directory: the schema defaults, with no workspace id (the id is then
// derived from Git or the directory).
type DefaultConfigView struct {
	SchemaVersion    int      `json:"schemaVersion"`
	WorkspaceID      *string  `json:"workspaceId"`
	Roots            []string `json:"roots"`
	Policy           Policy   `json:"policy"`
	RequiredAdapters []string `json:"requiredAdapters"`
}

// ValidateConfigAt validates the acc.workspace.json that governs dir: the
// first one found walking up from dir (docs/decisions.md#19-workspace-config), or exactly
// explicit when that is set (--workspace; relative to dir). It reads nothing
// but the directories walked and that one file; it needs no data home and no
// store, and writes nothing.
//
// A config that governs is checked as Discover would use it: every rule of
// docs/protocol.md#configuration-file (LoadConfig), and each root must name
// an existing directory.
//
// Errors: workspace_unresolvable (exit 2) when dir cannot be resolved;
// config_invalid or config_unknown_key (exit 4) naming the file and the
// field or keys.
func ValidateConfigAt(dir, explicit string) (*ConfigValidation, error) {
	start, err := canonicalDir(dir)
	if err != nil {
		return nil, err
	}
	res := &ConfigValidation{Valid: true, Dir: start}
	var path string
	if explicit != "" {
		if !filepath.IsAbs(explicit) {
			explicit = filepath.Join(start, explicit)
		}
		d, err := filepath.EvalSymlinks(filepath.Dir(explicit))
		if err != nil {
			return nil, protocol.Errorf(protocol.ReasonWorkspaceUnresolvable,
				"cannot resolve the directory of workspace config %s: %s; pass the path of an existing acc.workspace.json", explicit, errText(err)).
				With("file", explicit).Wrap(err)
		}
		path = filepath.Join(d, filepath.Base(explicit))
	} else if path, err = FindConfig(start); err != nil {
		return nil, err
	}
	if path == "" {
		res.Config = DefaultConfigView{SchemaVersion: ConfigSchemaVersion, Roots: []string{"."},
			Policy: DefaultPolicy(), RequiredAdapters: []string{}}
		return res, nil
	}
	cfg, err := LoadConfig(path)
	if err != nil {
		return nil, err
	}
	if err := (&Workspace{}).applyConfig(cfg, path); err != nil {
		return nil, err
	}
	res.Present, res.File, res.Config = true, &path, cfg
	return res, nil
}

// canonicalDir resolves dir (absolute) through its symlinks and requires a
// directory.
func canonicalDir(dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err == nil {
		var info os.FileInfo
		if info, err = os.Stat(real); err == nil && !info.IsDir() {
			err = syscall.ENOTDIR
		}
	}
	if err != nil {
		return "", protocol.Errorf(protocol.ReasonWorkspaceUnresolvable,
			"cannot resolve the directory %s: %s; pass %s an existing directory", dir, errText(err), protocol.Field("cwd")).
			With("path", dir).Wrap(err)
	}
	return real, nil
}

// ConfigInitPlan is what `acc config init` would write
// (docs/protocol.md#configuration-file): the file directly inside the
// selected directory and its exact bytes. The same bytes are previewed and
// written.
type ConfigInitPlan struct {
	Dir     string
	File    string
	Preview []byte
	Config  *Config
}

// PlanConfigInit renders the config `acc config init` writes into dir (no
// upward walk): schemaVersion 1, a new random workspace id
// (workspace_ + 22 base64url characters), displayName the directory's base
// name (left out when that is not a valid one-line name), roots ["."], the
// default policy and no required adapters, as two-space JSON with a final
// newline. It writes nothing.
//
// Errors: workspace_unresolvable (exit 2) when dir is not an existing
// directory; config_exists (exit 5) when anything already has the config's
// name there (acc never overwrites it).
func PlanConfigInit(dir string) (*ConfigInitPlan, error) {
	d, err := canonicalDir(dir)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(d, ConfigFileName)
	if _, err := os.Lstat(file); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return nil, configExists(file)
	}
	name := baseName(d)
	if protocol.CheckLine("displayName", name, protocol.MaxLineText) != nil {
		name = ""
	}
	cfg := NewConfig(protocol.NewID(protocol.KindWorkspace), name)
	b, err := protocol.MarshalIndent(cfg)
	if err != nil {
		return nil, err
	}
	b = append(b, '\n')
	// The file must pass the rules it will be read with.
	if _, err := ValidateConfig(b); err != nil {
		return nil, fmt.Errorf("config init rendered a config that does not validate: %w", err)
	}
	return &ConfigInitPlan{Dir: d, File: file, Preview: b, Config: cfg}, nil
}

// SetStoreURL puts the room on the PostgreSQL server url
// (docs/configuration.md#choosing-the-server): storeUrl is set and the
// preview rendered again. url must pass the storeUrl rule of
// ValidateConfig — a postgres:// URL without a password: the file is
// committed. Errors: config_invalid or store_url_has_password (exit 4);
// the plan is then unchanged.
func (p *ConfigInitPlan) SetStoreURL(url string) error {
	if err := checkConfigStoreURL(url, ConfigFileName); err != nil {
		return err
	}
	cfg := *p.Config
	cfg.StoreURL = url
	b, err := protocol.MarshalIndent(&cfg)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := ValidateConfig(b); err != nil {
		return fmt.Errorf("config init rendered a config that does not validate: %w", err)
	}
	p.Config, p.Preview = &cfg, b
	return nil
}

// CheckRoom refuses a config that could not make a room: its directory
// holds acc's data (the data home's acc directory, or ACC_CONFIG_HOME's or
// ACC_CACHE_HOME's when set; your home directory, say) or lies inside acc's
// data. Written, such a file would turn every directory under it into a
// workspace that refuses every command (runtime_inside_workspace;
// docs/configuration.md#no-room-here). An environment that does not
// resolve is not judged here: every room command reports it.
//
// Errors: runtime_inside_workspace (exit 2) naming which of acc's
// directories lies there and the fix.
func (p *ConfigInitPlan) CheckRoom(getenv func(string) string, goos string) error {
	if goos == "" {
		goos = runtime.GOOS
	}
	env, err := ResolveRuntimeEnv(goos, getenv)
	if err != nil {
		return nil
	}
	cerr := env.CheckContainment(&Workspace{Source: protocol.SourceConfig, Roots: []string{p.Dir}, Start: p.Dir})
	if cerr == nil {
		return nil
	}
	nr := env.WhyNoRoom(p.Dir, protocol.AsError(cerr))
	// The fix runs config init elsewhere, after moving acc's data out when
	// a variable put it there; the step is named once, so the details list
	// it once.
	format := "%[1]s cannot be a room because %[2]s, so %[4]s does not write %[3]s; run %[4]s in your project's directory (or pass %[5]s DIR)"
	if nr.Move != "" {
		format = "%[1]s cannot be a room because %[2]s, so %[4]s does not write %[3]s; %[6]s; or run %[4]s in your project's directory (or pass %[5]s DIR)"
	}
	return protocol.Errorf(protocol.ReasonRuntimeInsideWorkspace, format,
		p.Dir, nr.Why, p.File, protocol.Step{Command: protocol.StepConfigInit}, protocol.Field("cwd"), nr.Move).
		With("file", p.File).With("dataDir", nr.Dir).With("root", p.Dir)
}

func configExists(file string) error {
	return protocol.Errorf(protocol.ReasonConfigExists,
		"%s already exists; acc never overwrites it: edit it by hand, or remove it first to start over", file).
		With("file", file)
}

// Write creates p.File with exactly p.Preview, mode 0644 (before the umask):
// the bytes go to a new temporary file beside it, are synced, and are then
// linked to the final name, which fails if the name exists by then — so a
// concurrent init or editor is never overwritten and no reader ever sees a
// half-written config. Where the file system has no hard links it falls back
// to O_CREAT|O_EXCL on the final name.
//
// Errors: config_exists (exit 5) when the name was taken meanwhile;
// directory_unwritable (exit 2) when the directory refuses the file.
func (p *ConfigInitPlan) Write() error {
	tmp, f, err := createExclusive(p.Dir, "."+ConfigFileName+".tmp-")
	if err != nil {
		return p.unwritable(err)
	}
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if err := writeSync(f, p.Preview); err != nil {
		return p.unwritable(err)
	}
	if err := os.Link(tmp, p.File); err != nil {
		switch {
		case errors.Is(err, fs.ErrExist):
			return configExists(p.File)
		case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.EXDEV), errors.Is(err, syscall.EMLINK):
			os.Remove(tmp)
			ok = true
			return p.writeExclusive()
		default:
			return p.unwritable(err)
		}
	}
	os.Remove(tmp)
	ok = true
	syncDir(p.Dir)
	return nil
}

// writeExclusive is the fallback of Write: O_CREAT|O_EXCL on the final name.
func (p *ConfigInitPlan) writeExclusive() error {
	f, err := os.OpenFile(p.File, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return configExists(p.File)
		}
		return p.unwritable(err)
	}
	if err := writeSync(f, p.Preview); err != nil {
		os.Remove(p.File)
		return p.unwritable(err)
	}
	syncDir(p.Dir)
	return nil
}

func (p *ConfigInitPlan) unwritable(err error) error {
	return protocol.Errorf(protocol.ReasonDirectoryUnwritable,
		"cannot write %s: %s; pass %s a directory you can write to", p.File, errText(err), protocol.Field("cwd")).
		With("file", p.File).Wrap(err)
}

// createExclusive creates a new file named prefix+random in dir with mode
// 0644 (before the umask).
func createExclusive(dir, prefix string) (string, *os.File, error) {
	for i := 0; ; i++ {
		name := filepath.Join(dir, prefix+strings.TrimPrefix(protocol.NewID("t"), "t_"))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_CLOEXEC, 0o644)
		if err == nil || !errors.Is(err, fs.ErrExist) || i == 9 {
			return name, f, err
		}
	}
}

func writeSync(f *os.File, b []byte) error {
	_, err := f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes a new directory entry durable; failure only weakens
// durability, so it is ignored.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
