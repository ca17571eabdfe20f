package workspace

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// platformAnswer is what a child process reports of its own platform
// directories (see TestPlatformChild).
type platformAnswer struct {
	Data, Config, Cache                      string
	DataFromLib, ConfigFromLib, CacheFromLib bool
	Err                                      string
}

// TestPlatformChild is not a test of its own: run by
// TestPlatformDirectoriesAreTheLibrarysForThisProcess with
// ACC_TEST_PLATFORM_CHILD=1 and a chosen environment, it prints what this
// package answers for the process's own environment.
func TestPlatformChild(t *testing.T) {
	if os.Getenv("ACC_TEST_PLATFORM_CHILD") != "1" {
		t.Skip("run by TestPlatformDirectoriesAreTheLibrarysForThisProcess")
	}
	var a platformAnswer
	data, err := ResolveDataHome(runtime.GOOS, os.Getenv)
	if err != nil {
		a.Err = err.Error()
	}
	e, err := ResolveRuntimeEnv(runtime.GOOS, os.Getenv)
	if err != nil && a.Err == "" {
		a.Err = err.Error()
	}
	home := os.Getenv("HOME")
	a.Data = data
	_, a.DataFromLib = platformBase(runtime.GOOS, os.Getenv, home, dataKind)
	if e != nil {
		a.Config, a.Cache = e.ConfigHome, e.CacheHome
	}
	_, a.ConfigFromLib = platformBase(runtime.GOOS, os.Getenv, home, configKind)
	_, a.CacheFromLib = platformBase(runtime.GOOS, os.Getenv, home, cacheKind)
	b, _ := json.Marshal(a)
	os.Stdout.Write(append(append([]byte("ANSWER "), b...), '\n'))
}

// The platform directories of a process come from adrg/xdg, read from the
// process environment, whenever the library's rule agrees with acc's for it;
// and they are then the directories acc's own rule gives for the same
// environment passed in as getenv. Where the rules part (macOS and
// XDG_DATA_HOME), acc's rule wins.
func TestPlatformDirectoriesAreTheLibrarysForThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("acc's platform rules are written for Linux and macOS")
	}
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := realTempDir(t)
	abs := filepath.Join(home, "elsewhere")
	darwin := runtime.GOOS == "darwin"
	for _, tc := range []struct {
		name string
		env  map[string]string
		// lib says which answers come from the library: data, config, cache.
		lib [3]bool
	}{
		{"defaults", map[string]string{}, [3]bool{true, true, true}},
		{"absolute XDG", map[string]string{"XDG_DATA_HOME": abs + "/d", "XDG_CONFIG_HOME": abs + "/c", "XDG_CACHE_HOME": abs + "/k"},
			[3]bool{!darwin, !darwin, !darwin}},
		{"relative XDG config", map[string]string{"XDG_CONFIG_HOME": "rel", "XDG_CACHE_HOME": "~/k"}, [3]bool{true, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"HOME": home, "ACC_TEST_PLATFORM_CHILD": "1"}
			for k, v := range tc.env {
				env[k] = v
			}
			cmd := exec.Command(exe, "-test.run=^TestPlatformChild$", "-test.count=1")
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			var got platformAnswer
			_, answer, found := bytes.Cut(out, []byte("ANSWER "))
			answer, _, _ = bytes.Cut(answer, []byte("\n"))
			if !found || json.Unmarshal(answer, &got) != nil {
				t.Fatalf("child printed no answer:\n%s", out)
			}
			if got.Err != "" {
				t.Fatalf("child: %s", got.Err)
			}
			if lib := [3]bool{got.DataFromLib, got.ConfigFromLib, got.CacheFromLib}; lib != tc.lib {
				t.Errorf("from the library (data, config, cache) = %v, want %v", lib, tc.lib)
			}
			// The same environment passed in: this process's library read
			// another HOME, so acc's own rule answers.
			data, err := ResolveDataHome(runtime.GOOS, envMap(env))
			if err != nil {
				t.Fatal(err)
			}
			e, err := ResolveRuntimeEnv(runtime.GOOS, envMap(env))
			if err != nil {
				t.Fatal(err)
			}
			if got.Data != data || got.Config != e.ConfigHome || got.Cache != e.CacheHome {
				t.Errorf("the process says data %q config %q cache %q; acc's rule says %q %q %q",
					got.Data, got.Config, got.Cache, data, e.ConfigHome, e.CacheHome)
			}
		})
	}
}
