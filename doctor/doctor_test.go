package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/hooksock"
	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/internal/deadport"
	"github.com/hookwatch/hookwatch/internal/freeport"
	"github.com/hookwatch/hookwatch/internal/spooltest"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

func TestReadSettings(t *testing.T) {
	dir := t.TempDir()
	f := func(content string, want ...string) {
		t.Helper()
		path := filepath.Join(dir, "settings.json")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadSettings("user", path)
		if err != nil {
			t.Fatalf("ReadSettings(%s): %v", content, err)
		}
		var got []string
		for _, h := range s.Handlers {
			got = append(got, h.Event+" "+h.Identity())
		}
		if s.Statusline != "" {
			got = append(got, "statusLine "+s.Statusline)
		}
		for _, p := range s.Plugins {
			got = append(got, "plugin "+p)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("ReadSettings(%s):\n%s\nwant:\n%s", content, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	f(``)
	f(`{}`)
	f("\ufeff{\"hooks\": {}}")
	f(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/hookwatch", "args": ["hook"]}]}]}}`,
		"Stop exec /opt/hookwatch\x00hook")
	f(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "'/my dir/hookwatch-hook' hook"}]}]}}`,
		"Stop sh '/my dir/hookwatch-hook' hook")
	f(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/hookwatch-hook", "args": []}]}]}}`,
		"Stop exec /opt/hookwatch-hook")
	f(`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
		{"type": "command", "command": "~/guard.sh"},
		{"type": "command", "command": "/opt/hookwatch", "args": ["serve"]},
		{"type": "command", "command": "hookwatch statusline"},
		{"type": "http", "url": "http://127.0.0.1:7421/v1/hooks/claude?x=1"},
		{"type": "http", "url": "http://example.com/hook"},
		{"type": "prompt", "prompt": "hookwatch hook"},
		"not an object", 42
	]}]}}`, "PreToolUse http http://127.0.0.1:7421/v1/hooks/claude?x=1")
	f(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": `+jsonString(claudecode.PluginLauncher)+`}]}]}}`,
		"Stop sh "+claudecode.PluginLauncher)
	f(`{"hooks": {"Stop": "oops", "Notification": [{"hooks": "oops"}], "B": [{"hooks": [{"type": "command", "command": "hookwatch hook"}]}]}}`,
		"B sh hookwatch hook")
	f(`{"statusLine": {"type": "command", "command": "'/x/hookwatch' statusline --wrap 'cat'"}, "enabledPlugins": {"hookwatch@hookwatch": true, "hookwatch@old": false, "other@x": true}}`,
		"statusLine '/x/hookwatch' statusline --wrap 'cat'", "plugin hookwatch@hookwatch")
	f(`{"statusLine": {"type": "command", "command": "~/status.sh"}, "enabledPlugins": []}`)

	path := filepath.Join(dir, "bad.json")
	os.WriteFile(path, []byte(`{"hooks": `), 0o644)
	if _, err := ReadSettings("user", path); err == nil || !strings.Contains(err.Error(), "cannot parse "+path) {
		t.Fatalf("ReadSettings of a broken file: %v", err)
	}
	s, err := ReadSettings("user", filepath.Join(dir, "missing.json"))
	if err != nil || s.Exists {
		t.Fatalf("ReadSettings of a missing file: %+v, %v", s, err)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func FuzzReadSettings(f *testing.F) {
	f.Add([]byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "'/x/hookwatch' hook \"a\\\"b\""}]}]}}`))
	f.Add([]byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/x/hookwatch-hook", "args": [1]}]}]}, "statusLine": {"command": "'"}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "settings.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadSettings("user", path)
		if err != nil {
			return
		}
		for _, h := range s.Handlers {
			if n := claudecode.BaseName(h.Binary); h.Type == "command" && !h.Launcher && n != claudecode.BinaryName && n != claudecode.HookBinaryName {
				t.Fatalf("handler %+v does not run hookwatch", h)
			}
		}
		_ = s.Duplicates()
	})
}

func TestRunWithoutAnything(t *testing.T) {
	root := t.TempDir()
	env := map[string]string{
		"HOME":           filepath.Join(root, "home"),
		"HOOKWATCH_HOME": filepath.Join(root, "hw"),
		"HOOKWATCH_URL":  "http://127.0.0.1:1",
		// Without autostart a down collector is a problem; with it (the
		// default) only a warning: see TestCollectorDownAutostarts.
		"HOOKWATCH_AUTOSTART": "0",
	}
	r := Run(context.Background(), Options{
		Getenv:  func(k string) string { return env[k] },
		WorkDir: root,
		Self:    filepath.Join(root, "hookwatch"),
		Version: "test",
		Timeout: time.Second,
	})
	var fails []string
	for _, c := range r.Checks {
		if c.Status == Fail {
			fails = append(fails, c.Name)
			if c.Fix == "" {
				t.Fatalf("failed check %q names no fix: %+v", c.Name, c)
			}
		}
	}
	if strings.Join(fails, ",") != "registration,collector" || r.OK() {
		t.Fatalf("failed checks %q, want registration and collector", fails)
	}
	if _, err := os.Stat(filepath.Join(root, "hw")); err == nil {
		t.Fatalf("doctor created HOOKWATCH_HOME: checks must only read")
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil || !strings.Contains(b.String(), "2 problems, 0 warnings.") {
		t.Fatalf("WriteText: %v\n%s", err, b.String())
	}
}

func TestCollectorDownAutostarts(t *testing.T) {
	root := t.TempDir()
	f := func(url, autostart string, want Status) {
		t.Helper()
		env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": filepath.Join(root, "hw"), "HOOKWATCH_URL": url, "HOOKWATCH_AUTOSTART": autostart}
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: filepath.Join(root, "hookwatch"), Version: "test", Timeout: time.Second})
		for _, c := range r.Checks {
			if c.Name == "collector" && c.Status != want {
				t.Errorf("collector down at %s, HOOKWATCH_AUTOSTART=%q: %s (%s), want %s", url, autostart, c.Status, c.Message, want)
			}
		}
	}
	f("http://127.0.0.1:1", "", Warn)
	f("http://localhost:1", "1", Warn)
	f("http://127.0.0.1:1", "0", Fail)

	// A team server's token in the home (install --token): the next hook
	// starts no collector at that loopback URL (a tunnel to the server), and
	// the fix is not to run one here.
	if err := os.MkdirAll(filepath.Join(root, "hw"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "hw", hook.TokenFile), []byte("hwt_0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f("http://127.0.0.1:1", "", Fail)
	env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": filepath.Join(root, "hw"), "HOOKWATCH_URL": "http://127.0.0.1:1"}
	r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: filepath.Join(root, "hookwatch"), Version: "test", Timeout: time.Second})
	for _, c := range r.Checks {
		if c.Name == "collector" && (!strings.Contains(c.Message, "team server") || strings.Contains(c.Fix, "hookwatch serve")) {
			t.Errorf("team server down: %s (fix: %s)", c.Message, c.Fix)
		}
	}
}

// TestTeamTokenWithoutURL: a team server's token installed in the home
// (install --token) while HOOKWATCH_URL is unset is a failure: the hooks
// send their events to the local default collector, into this machine's
// database, where the team server never sees them, and read no token. The
// fix exports the URL. Without the token file, or with HOOKWATCH_URL set,
// there is no such check.
func TestTeamTokenWithoutURL(t *testing.T) {
	root := t.TempDir()
	hw := filepath.Join(root, "hw")
	teamCheck := func(env map[string]string) (Check, bool) {
		t.Helper()
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: filepath.Join(root, "hookwatch"), Version: "test", Timeout: time.Second})
		for _, c := range r.Checks {
			if c.Name == "team server" {
				return c, true
			}
		}
		return Check{}, false
	}
	env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": hw, "HOOKWATCH_AUTOSTART": "0"}
	if c, ok := teamCheck(env); ok {
		t.Errorf("no token file: %+v", c)
	}
	if err := os.MkdirAll(hw, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hw, hook.TokenFile), []byte("hwt_0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, ok := teamCheck(env)
	if !ok || c.Status != Fail || !strings.Contains(c.Message, filepath.Join(hw, hook.TokenFile)) || !strings.Contains(c.Message, "nor set in HOOKWATCH_URL") ||
		!strings.Contains(c.Message, hook.DefaultURL) || !strings.Contains(c.Fix, "hookwatch install --url ") || strings.Contains(c.Message+c.Fix, "hwt_0123") {
		t.Errorf("a team token and no HOOKWATCH_URL: %v %+v", ok, c)
	}
	env["HOOKWATCH_URL"] = "http://127.0.0.1:1"
	if c, ok := teamCheck(env); ok {
		t.Errorf("HOOKWATCH_URL set: %+v", c)
	}
	// The URL install kept does as HOOKWATCH_URL does.
	delete(env, "HOOKWATCH_URL")
	if err := os.WriteFile(filepath.Join(hw, hook.URLFile), []byte("http://127.0.0.1:1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, ok := teamCheck(env); ok {
		t.Errorf("URL kept: %+v", c)
	}
}

// TestHookURL: doctor says where the hooks send and from which source —
// HOOKWATCH_URL here, the URL install kept, or the default — and warns
// when HOOKWATCH_URL here names another collector than the one kept.
func TestHookURL(t *testing.T) {
	root := t.TempDir()
	hw := filepath.Join(root, "hw")
	if err := os.MkdirAll(hw, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(hw, hook.URLFile)
	for _, tc := range []struct {
		name, env, kept string
		status          Status
		says, fix       string
	}{
		{name: "default", status: OK, says: "to " + hook.DefaultURL + ", this machine's collector (the default"},
		{name: "kept", kept: "http://127.0.0.1:2", status: OK, says: "to http://127.0.0.1:2, kept in " + file},
		{name: "environment", env: "http://127.0.0.1:3", status: OK, says: "to http://127.0.0.1:3, from HOOKWATCH_URL here"},
		{name: "same in both", env: "http://127.0.0.1:2/", kept: "http://127.0.0.1:2", status: OK, says: "from HOOKWATCH_URL here"},
		{name: "environment elsewhere", env: "http://127.0.0.1:3", kept: "http://127.0.0.1:2", status: Warn,
			says: "to http://127.0.0.1:3, from HOOKWATCH_URL here, not to http://127.0.0.1:2, the URL kept in " + file, fix: "hookwatch install --url http://127.0.0.1:3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(file)
			if tc.kept != "" {
				if err := os.WriteFile(file, []byte(tc.kept+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": hw, "HOOKWATCH_AUTOSTART": "0", "HOOKWATCH_URL": tc.env}
			r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: filepath.Join(root, "hookwatch"), Version: "test", Timeout: time.Second})
			for _, c := range r.Checks {
				if c.Name != "hook URL" {
					continue
				}
				if c.Status != tc.status || !strings.Contains(c.Message, tc.says) || !strings.Contains(c.Fix, tc.fix) {
					t.Errorf("%s %q (fix %q); want %s, saying %q, fix with %q", c.Status, c.Message, c.Fix, tc.status, tc.says, tc.fix)
				}
				return
			}
			t.Error("no hook URL check")
		})
	}
}

// TestServeAddr: a HOOKWATCH_ADDR set to another address than the hooks'
// URL's, a collector on this machine's, is a warning naming both and the
// two ways out, in the words of where the URL comes from; none when it is
// unset, listens there (the same address, or the port on every address),
// or the hooks send to another machine, where no collector here is
// started for them. For an https:// URL (443 without a port), which no
// hook starts a collector for, the warning says so, and its fix runs serve
// with --addr and the certificate, unsetting HOOKWATCH_ADDR only where
// serve's default address is the URL's. The collector check's fix, with
// none answering, starts serve where the hooks send: with --addr where
// HOOKWATCH_ADDR, or serve's default address, is another.
func TestServeAddr(t *testing.T) {
	root := t.TempDir()
	hw := filepath.Join(root, "hw")
	if err := os.MkdirAll(hw, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(hw, hook.URLFile)
	for _, tc := range []struct {
		name, addr, env, kept string
		says, fix             string // "" for no check
		serve                 string // the collector check's fix, "" when not asserted (a collector may answer at the default URL)
	}{
		{name: "unset"},
		{name: "the default's", addr: "127.0.0.1:7421"},
		{name: "every address", addr: "0.0.0.0:7421"},
		{name: "default URL", addr: "127.0.0.1:47421",
			says: "HOOKWATCH_ADDR=127.0.0.1:47421 here, but the hooks send to http://127.0.0.1:7421 (the default URL): the collector a hook, demo, import or doctor --start starts listens on 127.0.0.1:7421; HOOKWATCH_ADDR sets only where 'hookwatch serve' run without --addr listens, where the hooks do not send",
			fix:  "hookwatch install --url http://127.0.0.1:47421   # or unset HOOKWATCH_ADDR"},
		{name: "URL kept", addr: "127.0.0.1:47421", kept: "http://127.0.0.1:2",
			says:  "HOOKWATCH_ADDR=127.0.0.1:47421 here, but the hooks send to http://127.0.0.1:2 (the URL kept by 'hookwatch install --url'): the collector a hook, demo, import or doctor --start starts listens on 127.0.0.1:2;",
			fix:   "hookwatch install --url http://127.0.0.1:47421   # or unset HOOKWATCH_ADDR",
			serve: "hookwatch serve --addr 127.0.0.1:2   # or keep it running: hookwatch service install"},
		{name: "HOOKWATCH_URL", addr: "127.0.0.1:47421", env: "http://localhost:3",
			says:  "HOOKWATCH_ADDR=127.0.0.1:47421 here, but the hooks send to http://localhost:3 (HOOKWATCH_URL): the collector a hook, demo, import or doctor --start starts listens on localhost:3;",
			fix:   "unset HOOKWATCH_URL (in the profile Claude Code starts from too), then hookwatch install --url http://127.0.0.1:47421   # or unset HOOKWATCH_ADDR",
			serve: "hookwatch serve --addr localhost:3   # or keep it running: hookwatch service install"},
		{name: "same as HOOKWATCH_URL", addr: "127.0.0.1:3", env: "http://127.0.0.1:3/", serve: "hookwatch serve   # or keep it running: hookwatch service install"},
		{name: "URL off serve's default", env: "http://127.0.0.1:3", serve: "hookwatch serve --addr 127.0.0.1:3   # or keep it running: hookwatch service install"},
		{name: "another machine", addr: "0.0.0.0:47421", env: "http://10.0.0.7:7421"},
		// For an https:// URL no hook starts a collector: the serve run by
		// hand with its certificate listens at HOOKWATCH_ADDR without --addr.
		{name: "https URL kept", addr: "127.0.0.1:47421", kept: "https://127.0.0.1:2",
			says:  "HOOKWATCH_ADDR=127.0.0.1:47421 here, but the hooks send to https://127.0.0.1:2 (the URL kept by 'hookwatch install --url'): no hook starts a collector serving TLS, and 'hookwatch serve --tls-cert … --tls-key …' run by hand without --addr listens at HOOKWATCH_ADDR, where the hooks do not send",
			fix:   "hookwatch serve --addr 127.0.0.1:2 --tls-cert <cert.pem> --tls-key <key.pem>   # or point the hooks there: hookwatch install --url https://127.0.0.1:47421",
			serve: "hookwatch serve --addr 127.0.0.1:2 --tls-cert <cert.pem> --tls-key <key.pem>   # or keep it running: hookwatch service install"},
		{name: "https URL without a port", addr: "127.0.0.1:47421", env: "https://localhost",
			says: "HOOKWATCH_ADDR=127.0.0.1:47421 here, but the hooks send to https://localhost (HOOKWATCH_URL): no hook starts a collector serving TLS,",
			fix:  "hookwatch serve --addr localhost:443 --tls-cert <cert.pem> --tls-key <key.pem>   # or point the hooks there: unset HOOKWATCH_URL (in the profile Claude Code starts from too), then hookwatch install --url https://127.0.0.1:47421"},
		{name: "https URL at serve's default address", addr: "127.0.0.1:47421", env: "https://127.0.0.1:7421",
			says: "HOOKWATCH_ADDR=127.0.0.1:47421 here, but the hooks send to https://127.0.0.1:7421 (HOOKWATCH_URL): no hook starts",
			fix:  "hookwatch serve --addr 127.0.0.1:7421 --tls-cert <cert.pem> --tls-key <key.pem>   # or unset HOOKWATCH_ADDR, or point the hooks there: unset HOOKWATCH_URL (in the profile Claude Code starts from too), then hookwatch install --url https://127.0.0.1:47421"},
		{name: "https URL, port 443 on every address", addr: "0.0.0.0:443", env: "https://localhost/"},
		{name: "https URL there", addr: "127.0.0.1:8443", env: "https://127.0.0.1:8443"},
		{name: "https URL of another machine", addr: "127.0.0.1:47421", env: "https://hooks.example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(file)
			if tc.kept != "" {
				if err := os.WriteFile(file, []byte(tc.kept+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": hw, "HOOKWATCH_AUTOSTART": "0", "HOOKWATCH_URL": tc.env, "HOOKWATCH_ADDR": tc.addr}
			r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: filepath.Join(root, "hookwatch"), Version: "test", Timeout: time.Second})
			var got []Check
			for _, c := range r.Checks {
				if c.Name == "HOOKWATCH_ADDR" {
					got = append(got, c)
				}
				if c.Name == "collector" && tc.serve != "" && c.Fix != tc.serve {
					t.Errorf("collector %s %q, fixed with %q; want %q", c.Status, c.Message, c.Fix, tc.serve)
				}
			}
			switch {
			case tc.says == "" && len(got) > 0:
				t.Errorf("HOOKWATCH_ADDR=%q, URL %q, kept %q: %+v, want no check", tc.addr, tc.env, tc.kept, got)
			case tc.says == "":
			case len(got) != 1:
				t.Errorf("%d HOOKWATCH_ADDR checks, want 1: %+v", len(got), got)
			case got[0].Status != Warn || !strings.HasPrefix(got[0].Message, tc.says) || got[0].Fix != tc.fix:
				t.Errorf("%s %q (fix %q); want a warning saying %q, fixed with %q", got[0].Status, got[0].Message, got[0].Fix, tc.says, tc.fix)
			}
		})
	}
}

// TestCollectorURLRefused: a HOOKWATCH_URL no collector can be reached at
// fails the collector check, saying what is wrong with it, whether or not
// hooks would start a collector (they could not start one there): not the
// warning that the next hook starts one.
func TestCollectorURLRefused(t *testing.T) {
	root := t.TempDir()
	for url, why := range map[string]string{
		"http://localhost:99999": `its port "99999" is not a number up to 65535`,
		"127.0.0.1:7421":         "it has no scheme",
		"ftp://127.0.0.1:7421":   "its scheme is not http or https",
	} {
		env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": filepath.Join(root, "hw"), "HOOKWATCH_URL": url}
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: filepath.Join(root, "hookwatch"), Version: "test", Timeout: time.Second})
		found := false
		for _, c := range r.Checks {
			if c.Name == "collector" {
				found = true
				if c.Status != Fail || !strings.Contains(c.Message, why) || !strings.Contains(c.Fix, "HOOKWATCH_URL=") {
					t.Errorf("HOOKWATCH_URL=%s: %s %q (fix %q), want a failure saying %q", url, c.Status, c.Message, c.Fix, why)
				}
			}
		}
		if !found {
			t.Errorf("HOOKWATCH_URL=%s: no collector check", url)
		}
	}
}

// TestPolicyAnswerer: with policy files in force, doctor says whether the
// collector answers the hook's policy questions, and warns when each answer
// would start a process.
func TestPolicyAnswerer(t *testing.T) {
	root, err := os.MkdirTemp("", "doctor") // short: the socket path is bounded
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	hw := filepath.Join(root, "hw")
	if err := os.MkdirAll(hw, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hw, "policy.yaml"), []byte("rules: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": hw, "HOOKWATCH_URL": "http://127.0.0.1:1", "HOOKWATCH_AUTOSTART": "0"}
	policyCheck := func() Check {
		t.Helper()
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: filepath.Join(root, "hookwatch"), Version: "test", Timeout: time.Second,
			CheckPolicy: func(w io.Writer, files ...string) error { fmt.Fprintf(w, "%s: ok\n", files[0]); return nil }})
		for _, c := range r.Checks {
			if c.Name == "policy" {
				return c
			}
		}
		t.Fatal("no policy check")
		return Check{}
	}
	if c := policyCheck(); c.Status != Warn || !strings.Contains(strings.Join(c.Details, "\n"), "no collector answers") || c.Fix == "" {
		t.Errorf("no collector: %+v", c)
	}
	s, err := hooksock.Listen(hooksock.Path(hw))
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan hooksock.Request, 10)
	s.Serve(func(r hooksock.Request) hooksock.Reply { asked <- r; return hooksock.Reply{Addr: "127.0.0.1:7421"} }, func(err error) { t.Error(err) })
	defer s.Close()
	if c := policyCheck(); c.Status != OK || !strings.Contains(strings.Join(c.Details, "\n"), "answered by the collector at 127.0.0.1:7421") {
		t.Errorf("collector answering: %+v", c)
	}
	if len(asked) != 1 {
		t.Fatalf("doctor asked %d questions, want one", len(asked))
	}
	if r := <-asked; len(r.Payload) != 0 {
		t.Errorf("doctor asked %+v; want a question without a payload", r)
	}
}

// TestCollectorDegraded: a collector that reports unacknowledged losses is a
// warning with the command that acknowledges them.
func TestCollectorDegraded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			io.WriteString(w, `{"status":"degraded","version":"test","db":"ok","spool":{"dropped":2,"corrupt":0,"unacknowledged":2}}`)
			return
		}
		io.WriteString(w, `{"sessions":[]}`)
	}))
	defer srv.Close()
	root := t.TempDir()
	// The collector drains this home's spool, as a real one that answers
	// with the spool's figures does.
	sp, err := spool.Open(filepath.Join(root, "hw", "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	release, err := sp.Attach(strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": filepath.Join(root, "hw"), "HOOKWATCH_URL": srv.URL}
	r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Version: "test", Timeout: time.Second})
	for _, c := range r.Checks {
		if c.Name == "collector" {
			if c.Status != Warn || !strings.Contains(c.Message, "degraded: 2 events lost that nobody acknowledged") || c.Fix != "hookwatch doctor --ack-losses" {
				t.Fatalf("collector check = %+v", c)
			}
			return
		}
	}
	t.Fatal("no collector check")
}

// TestCollectorOfAnotherHome: a collector on this machine that drains
// another home's spool (another HOOKWATCH_HOME, another user's) is a warning
// that says where this home's events go and how to run its own collector;
// the same collector, checked from its own home, is up.
func TestCollectorOfAnotherHome(t *testing.T) {
	root := t.TempDir()
	other := filepath.Join(root, "other")
	c := startCollector(t, filepath.Join(root, "other.db"), collector.Options{Home: other})
	check := func(home string) Check {
		t.Helper()
		env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": home, "HOOKWATCH_URL": c.URL()}
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Version: "test", Timeout: 5 * time.Second})
		for _, c := range r.Checks {
			if c.Name == "collector" {
				return c
			}
		}
		t.Fatal("no collector check")
		return Check{}
	}
	mine := filepath.Join(root, "mine")
	if got := check(mine); got.Status != Warn || !strings.Contains(got.Message, "the collector of another HOOKWATCH_HOME, not of "+mine) ||
		!strings.Contains(got.Fix, "hookwatch serve --addr") {
		t.Errorf("checked from another home: %+v", got)
	}
	if got := check(other); got.Status != OK {
		t.Errorf("checked from its own home: %+v", got)
	}
}

// TestCollectorOfThisHomeElsewhere: nothing answers at HOOKWATCH_URL, but
// this home's collector runs at another address (serve --addr without the
// HOOKWATCH_URL export): the check names where it runs and the URL to
// export, not "the next hook starts it" or "hookwatch serve", which would
// only find that a collector runs for this home already.
func TestCollectorOfThisHomeElsewhere(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "hw")
	c := startCollector(t, filepath.Join(root, "hw.db"), collector.Options{Home: home})
	dead, err := deadport.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	for _, autostart := range []string{"", "0"} {
		env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": home, "HOOKWATCH_URL": dead.URL(), "HOOKWATCH_AUTOSTART": autostart}
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Version: "test", Timeout: 5 * time.Second})
		found := false
		for _, got := range r.Checks {
			if got.Name != "collector" {
				continue
			}
			found = true
			if got.Status != Warn || !strings.Contains(got.Message, "this home's collector") || !strings.Contains(got.Message, c.URL()) ||
				!strings.Contains(got.Fix, "hookwatch install --url "+c.URL()) || strings.Contains(got.Message, "starts it") ||
				!strings.Contains(got.Message, "the commands that ask the collector at "+dead.URL()+" (HOOKWATCH_URL) miss it") {
				t.Errorf("HOOKWATCH_AUTOSTART=%q: %s %q (fix %q)", autostart, got.Status, got.Message, got.Fix)
			}
		}
		if !found {
			t.Fatal("no collector check")
		}
	}
}

// TestCollectorNotOK: a /healthz that is not OK fails the check, with a fix
// that fits: another program on the address, or a collector whose database
// fails. At a URL on another machine (a proxy answering for a server that
// is down, say, or a server whose database fails) nothing of this machine
// is to start, stop or move, and the fix says to check the URL or ask the
// server's admin; the same when the server does not answer at all, for the
// collector check and for the round trip of http hooks posting there.
func TestCollectorNotOK(t *testing.T) {
	host, ok := freeport.HostIPv4()
	if !ok {
		t.Fatal("no IPv4 address beyond loopback to serve another machine's collector at")
	}
	for _, tc := range []struct {
		code           int
		body, msg, fix string
		remote         bool
	}{
		{404, "404 page not found", "not a hookwatch collector's answer: another program listens there", "hookwatch install --url http://127.0.0.1:<port>", false},
		{503, `{"status":"degraded","version":"test","db":"disk I/O error"}`, "database: disk I/O error", "hookwatch stop; hookwatch serve", false},
		{502, "<html>502 Bad Gateway</html>", "not a hookwatch collector's answer: a proxy in front of the collector, or another program, answers there", "ask the server's admin", true},
		{503, `{"status":"degraded","version":"test","db":"disk I/O error"}`, "database: disk I/O error: the server's trouble", "ask the server's admin: its log says why", true},
	} {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.code)
			io.WriteString(w, tc.body)
		}))
		if tc.remote {
			l, err := net.Listen("tcp", net.JoinHostPort(host.String(), "0"))
			if err != nil {
				t.Fatal(err)
			}
			srv.Listener.Close()
			srv.Listener = l
		}
		srv.Start()
		root := t.TempDir()
		env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": filepath.Join(root, "hw"), "HOOKWATCH_URL": srv.URL}
		if tc.remote {
			env["HOOKWATCH_TOKEN"] = "hwt_0123456789abcdef"
		}
		// checkOf runs doctor with o in env and returns its check name.
		checkOf := func(o Options, name string) Check {
			t.Helper()
			o.Getenv, o.WorkDir, o.Version, o.Timeout = func(k string) string { return env[k] }, root, "test", time.Second
			for _, c := range Run(context.Background(), o).Checks {
				if c.Name == name {
					return c
				}
			}
			t.Fatalf("no %s check", name)
			return Check{}
		}
		collectorCheck := func() Check { t.Helper(); return checkOf(Options{}, "collector") }
		elsewhere := func(c Check) bool {
			return !strings.Contains(c.Fix, "hookwatch serve") && !strings.Contains(c.Fix, "hookwatch stop") && !strings.Contains(c.Fix, "hookwatch install")
		}
		c := collectorCheck()
		if c.Status != Fail || !strings.Contains(c.Message, tc.msg) || !strings.Contains(c.Fix, tc.fix) || tc.remote && !elsewhere(c) {
			t.Errorf("HTTP %d %s at %s: collector check = %+v", tc.code, tc.body, srv.URL, c)
		}
		srv.Close()
		if tc.remote {
			c := collectorCheck()
			if c.Status != Fail || !strings.Contains(c.Message, "the collector at "+srv.URL+" is not reachable") || !strings.Contains(c.Message, "wait in the spool") ||
				!strings.Contains(c.Fix, "check HOOKWATCH_URL") || !elsewhere(c) {
				t.Errorf("another machine's collector down: collector check = %+v", c)
			}
			// http hooks posting there: their round trip fails, and
			// nothing started here would take their events either.
			hw, _, self := teamDeveloperHome(t, root, install.ModeHTTP, srv.URL)
			env["HOOKWATCH_HOME"] = hw
			c = checkOf(Options{Self: self, HookBinary: self, RoundTrip: true, CheckSettings: func(string, []string, func(string) string) []Refusal { return nil }}, "round trip (http)")
			if c.Status != Fail || !strings.Contains(c.Message, "lost while it does not answer") || !strings.Contains(c.Fix, "check HOOKWATCH_URL") || !elsewhere(c) {
				t.Errorf("http hooks to another machine's collector, down: round trip = %+v", c)
			}
		}
	}
}

// TestTokenRefused: a collector that refuses the token fails the check,
// unless it is the one attached to the home's spool, through which the
// command hook's events reach it without a token: then a warning about
// its API.
func TestTokenRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			io.WriteString(w, `{"status":"ok","version":"test","db":"ok"}`)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	root := t.TempDir()
	home := filepath.Join(root, "hw")
	check := func() Check {
		env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": home, "HOOKWATCH_URL": srv.URL}
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Version: "test", Timeout: time.Second})
		for _, c := range r.Checks {
			if c.Name == "collector" {
				return c
			}
		}
		t.Fatal("no collector check")
		return Check{}
	}
	if c := check(); c.Status != Fail || !strings.Contains(c.Message, "the hook's events are refused") {
		t.Errorf("a collector not attached to the spool: %+v", c)
	}
	sp, err := spool.Open(filepath.Join(home, "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// What the refused events left in the spool waits for a token, not
	// for the collector, which is up.
	if err := sp.Append([]byte(`{"id":"x"}`)); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": home, "HOOKWATCH_URL": srv.URL}
	for _, c := range Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Version: "test", Timeout: time.Second}).Checks {
		if c.Name == "spool" && (c.Status != Warn || !strings.Contains(strings.Join(c.Details, "\n"), "once the collector takes the hook's token")) {
			t.Errorf("the spool behind a refused token: %+v", c)
		}
	}
	detach, err := sp.Attach(strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer detach()
	if c := check(); c.Status != Warn || !strings.Contains(c.Message, "reach it through the spool") || !strings.Contains(c.Fix, "hookwatch install --token-file") {
		t.Errorf("the collector attached to the spool: %+v", c)
	}
}

// TestManagedSettings: hookwatch registered in the managed settings and
// again in the user's is registered twice; the fix removes the user's, since
// hookwatch does not edit the administrator's file, and a managed file that
// is broken is fixed with an editor.
func TestManagedSettings(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	managed := filepath.Join(root, "etc", "managed-settings.json")
	env := map[string]string{"HOME": home, "HOOKWATCH_HOME": filepath.Join(root, "hw"), "HOOKWATCH_URL": "http://127.0.0.1:1"}
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func() map[string]Check {
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root,
			Self: filepath.Join(root, "hookwatch"), Version: "test", Timeout: time.Second, ManagedSettings: managed})
		out := map[string]Check{}
		for _, c := range r.Checks {
			out[c.Name] = c
		}
		return out
	}
	if _, ok := run()["settings (managed)"]; ok {
		t.Fatal("a missing managed file is reported")
	}
	write(managed, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/hookwatch", "args": ["hook"]}]}]}}`)
	write(filepath.Join(home, ".claude", "settings.json"), `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/usr/bin/hookwatch", "args": ["hook"]}]}]}}`)
	checks := run()
	if c := checks["settings (managed)"]; !strings.Contains(c.Message, managed+" registers /opt/hookwatch") {
		t.Errorf("managed settings check: %+v", c)
	}
	if c := checks["registration"]; c.Status != Fail || c.Fix != "hookwatch uninstall" {
		t.Errorf("registration check: %+v; want a failure fixed by uninstalling the user's", c)
	}
	write(managed, `{"hooks": `)
	if c := run()["settings (managed)"]; c.Status != Fail || c.Fix != "sudo $EDITOR "+managed {
		t.Errorf("broken managed file: %+v", c)
	}
}

// TestCodex: hookwatch's hooks in Codex's hooks file are found, and
// without the trust Codex needs (checked here from config.toml, with no
// Codex on PATH) the check fails: codex exec would skip them silently.
func TestCodex(t *testing.T) {
	root := t.TempDir()
	codexHome := filepath.Join(root, "codexhome")
	env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": filepath.Join(root, "hw"),
		"HOOKWATCH_URL": "http://127.0.0.1:1", "HOOKWATCH_AUTOSTART": "0", "CODEX_HOME": codexHome}
	self := filepath.Join(root, "hookwatch")
	o := install.Options{Runtime: event.RuntimeCodex, ConfigDir: codexHome, Binary: self}
	if _, err := install.Install(o); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	check := func() Check {
		t.Helper()
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: self, HookBinary: self, Version: "test", Timeout: time.Second})
		var user *Check
		for i, c := range r.Checks {
			switch c.Name {
			case "codex hooks (user)":
				user = &r.Checks[i]
			case "codex hooks (project)":
				if c.Status != Info {
					t.Errorf("project: %+v", c)
				}
			case "registration":
				// Not a problem for a Codex user: the fix says it is
				// for watching Claude Code too.
				if c.Status != Info || !strings.Contains(c.Message, "Claude Code does not") || !strings.HasSuffix(c.Fix, "# only to watch Claude Code too") {
					t.Errorf("registration with Codex only: %+v", c)
				}
			}
		}
		if user == nil {
			t.Fatal("no check of Codex's user hooks file")
		}
		return *user
	}
	// No codex on PATH: the fix names the binary install needs to ask.
	if c := check(); c.Status != Fail || !strings.HasPrefix(c.Fix, "hookwatch install --codex --codex-bin PATH") || !strings.Contains(strings.Join(c.Details, " "), "untrusted") &&
		!strings.Contains(strings.Join(c.Details, " "), "no trust") {
		t.Errorf("untrusted: %+v", c)
	}
	trustCodexHooks(t, o)
	if c := check(); c.Status != OK || !strings.Contains(c.Message, "for 12 of Codex's 12 events") {
		t.Errorf("trusted: %+v", c)
	}
}

// trustCodexHooks records in config.toml the trust of every hook o
// installs, as Codex's /hooks review does.
func trustCodexHooks(t *testing.T, o install.Options) {
	t.Helper()
	keys, err := install.CodexKeys(o)
	if err != nil {
		t.Fatal(err)
	}
	var hooks []codex.Hook
	for _, k := range keys {
		hooks = append(hooks, codex.Hook{Key: k, CurrentHash: "sha256:x", TrustStatus: "untrusted"})
	}
	if _, err := install.TrustCodex(o, hooks); err != nil {
		t.Fatal(err)
	}
}

// TestCodexRelativeWorkDir: a WorkDir relative to the working directory
// is the project's absolute path, the one Codex keys the project's hooks
// and their trust by: hooks trusted in config.toml are found trusted.
func TestCodexRelativeWorkDir(t *testing.T) {
	root := t.TempDir()
	codexHome, project := filepath.Join(root, "codexhome"), filepath.Join(root, "proj")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": filepath.Join(root, "hw"),
		"HOOKWATCH_URL": "http://127.0.0.1:1", "HOOKWATCH_AUTOSTART": "0", "CODEX_HOME": codexHome}
	t.Setenv("CODEX_HOME", codexHome) // where install records the trust
	self := filepath.Join(root, "hookwatch")
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := install.Options{Runtime: event.RuntimeCodex, Scope: claudecode.ScopeProject, ProjectDir: project, Binary: self}
	if _, err := install.Install(o); err != nil {
		t.Fatal(err)
	}
	trustCodexHooks(t, o)
	t.Chdir(root)
	r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: "proj", Self: self, HookBinary: self, Version: "test", Timeout: time.Second})
	for _, c := range r.Checks {
		if c.Name == "codex hooks (project)" {
			if c.Status != OK || !strings.HasPrefix(c.Message, filepath.Join(project, ".codex", "hooks.json")+" ") {
				t.Errorf("project: %+v", c)
			}
			return
		}
	}
	t.Fatal("no check of Codex's project hooks file")
}

// TestCheckClaude runs the claude check against a claude script on PATH:
// it names the version and what the support rule says of it, and gives
// up quickly on a claude that is missing, broken or hangs.
func TestCheckClaude(t *testing.T) {
	f := func(script string, status Status, message string, details ...string) {
		t.Helper()
		dir := t.TempDir()
		if script != "" {
			if err := os.WriteFile(filepath.Join(dir, "claude"), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Setenv("PATH", dir+":/usr/bin:/bin")
		e := &env{Options: Options{Timeout: 300 * time.Millisecond}}
		start := time.Now()
		c := e.checkClaude(context.Background())
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("%q: the check took %s", script, took)
		}
		if c.Name != "claude" || c.Status != status || c.Message != message || strings.Join(c.Details, "\n") != strings.Join(details, "\n") {
			t.Fatalf("%q: %+v; want %s %q %q", script, c, status, message, details)
		}
	}
	f("echo '2.1.197 (Claude Code)'", OK, "Claude Code 2.1.197, supported", "2.1.197 is supported (tested 2.1.197 to 2.1.332)")
	f("echo '2.1.332 (Claude Code)'", OK, "Claude Code 2.1.332, supported", "2.1.332 is supported (tested 2.1.197 to 2.1.332)")
	f("echo '2.2.5 (Claude Code)'", OK, "Claude Code 2.2.5, untested",
		"2.2.5 is newer than the newest tested version (tested 2.1.197 to 2.1.332): expected to work, untested")
	f("echo '2.1.150 (Claude Code)'", Warn, "Claude Code 2.1.150, unsupported",
		"2.1.150 is older than the oldest supported version (tested 2.1.197 to 2.1.332): its hooks may lack what hookwatch needs")
	f("", Info, "claude is not on PATH (or did not tell its version within 300ms)")
	f("echo 'segfault' >&2; exit 139", Info, "claude is not on PATH (or did not tell its version within 300ms)")
	f("sleep 30", Info, "claude is not on PATH (or did not tell its version within 300ms)")
	// A child that keeps the output open must not hang doctor either.
	f("sleep 30 & echo '2.1.197 (Claude Code)'", Info, "claude is not on PATH (or did not tell its version within 300ms)")
}

// TestForwarderCheck: for an https:// URL doctor says whether a forwarder
// delivers the spool, and the collector check reaches the collector over
// TLS with HOOKWATCH_CA_FILE.
func TestForwarderCheck(t *testing.T) {
	root := t.TempDir()
	ts, ca := healthyTLSCollector(t, root)
	hw := filepath.Join(root, "hw")
	env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": hw, "HOOKWATCH_URL": ts.URL, "HOOKWATCH_CA_FILE": ca}
	checks := func() map[string]Check {
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: filepath.Join(root, "hookwatch"), Version: "test", Timeout: 5 * time.Second})
		m := map[string]Check{}
		for _, c := range r.Checks {
			m[c.Name] = c
		}
		return m
	}
	c := checks()
	if c["collector"].Status != OK {
		t.Errorf("collector over TLS: %s (%s)", c["collector"].Status, c["collector"].Message)
	}
	if f := c["forwarder"]; f.Status != Warn || !strings.Contains(f.Message, "no forwarder runs") {
		t.Errorf("forwarder, none running: %s (%s)", f.Status, f.Message)
	}
	env["HOOKWATCH_AUTOSTART"] = "0"
	if f := checks()["forwarder"]; f.Status != Fail {
		t.Errorf("forwarder, none running, autostart off: %s (%s)", f.Status, f.Message)
	}
	sp, err := spool.Open(filepath.Join(hw, "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	release, err := sp.Attach(hook.ForwarderAddr(ts.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if f := checks()["forwarder"]; f.Status != OK || !strings.Contains(f.Message, "pid") {
		t.Errorf("forwarder running: %s (%s)", f.Status, f.Message)
	}
	env["HOOKWATCH_URL"] = "http://127.0.0.1:1"
	if _, ok := checks()["forwarder"]; ok {
		t.Error("a forwarder check for a URL the hook posts to itself")
	}
}

// TestOneClientPerRun: the checks of one run ask the collector over one
// client, so its requests share one TLS connection rather than each dialling
// and handshaking its own.
func TestOneClientPerRun(t *testing.T) {
	var conns, requests atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path == "/healthz" {
			io.WriteString(w, `{"status":"ok","version":"test","db":"ok"}`)
			return
		}
		io.WriteString(w, `{"sessions":[]}`)
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.StartTLS()
	defer ts.Close()
	root := t.TempDir()
	ca := filepath.Join(root, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": filepath.Join(root, "hw"), "HOOKWATCH_URL": ts.URL, "HOOKWATCH_CA_FILE": ca}
	r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Version: "test", Timeout: 5 * time.Second})
	for _, c := range r.Checks {
		if c.Name == "collector" && c.Status != OK {
			t.Fatalf("collector check = %+v", c)
		}
	}
	if requests.Load() < 2 || conns.Load() != 1 {
		t.Errorf("%d requests over %d connections, want at least 2 over 1", requests.Load(), conns.Load())
	}
}

// TestDatabaseCheck: a database serve could not open fails the check, with
// a fix that moves it aside; a good one passes; neither is changed.
func TestDatabaseCheck(t *testing.T) {
	root := t.TempDir()
	good := filepath.Join(root, "good.db")
	db, err := sqlite.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(root, "bad.db")
	if err := os.WriteFile(bad, bytes.Repeat([]byte{0xA5, 0x17}, 50000), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(root)
	check := func(path string) Check {
		env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": filepath.Join(root, "hw"), "HOOKWATCH_URL": "http://127.0.0.1:1"}
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: filepath.Join(root, "hookwatch"),
			Version: "test", Timeout: time.Second, Database: path})
		for _, c := range r.Checks {
			if c.Name == "database" {
				return c
			}
		}
		t.Fatal("no database check")
		return Check{}
	}
	if c := check(good); c.Status != OK {
		t.Errorf("a good database: %+v", c)
	}
	c := check(bad)
	if c.Status != Fail || !strings.Contains(c.Message, "does not read as a SQLite database") || !strings.Contains(c.Fix, "mv "+bad+" "+bad+"-wal "+bad+"-shm "+bad+".damaged/") {
		t.Errorf("a file of noise: %+v", c)
	}
	// A URL of another database: serve refuses it, and so does the check,
	// naming the scheme and not the password.
	for _, url := range []string{"mysql://hw:s3cr3t@127.0.0.1/hw", "Postgres://hw:s3cr3t@db/hw", "sqlite:///var/hw.db"} {
		c := check(url)
		scheme, _, _ := strings.Cut(url, "://")
		if c.Status != Fail || !strings.Contains(c.Message, "HOOKWATCH_DB is a "+scheme+":// URL") || !strings.Contains(c.Fix, "HOOKWATCH_DB=") ||
			strings.Contains(c.Message+c.Fix, "s3cr3t") {
			t.Errorf("%s: %+v", url, c)
		}
	}
	// libpq's key=value string: serve refuses it, and so does the check,
	// without the password.
	if c := check("host=db port=5432 user=hw password=s3cr3t dbname=hw"); c.Status != Fail ||
		!strings.Contains(c.Message, "key=value") || !strings.Contains(c.Fix, "postgres://") || strings.Contains(c.Message+c.Fix, "s3cr3t") {
		t.Errorf("a key=value string: %+v", c)
	}
	after, _ := os.ReadDir(root)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("doctor changed the directory: %v, then %v", before, after)
	}
}

// TestHomeIsAFile: a HOOKWATCH_HOME that is a file fails the spool check
// naming the variable, with a fix that is about the home, not a listing of
// a spool directory that cannot exist.
func TestHomeIsAFile(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "hw")
	if err := os.WriteFile(home, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range homeChecks(t, root, home) {
		if !strings.Contains(c.Message, home+" (HOOKWATCH_HOME) is a file") {
			t.Errorf("%s check with a file for a home: %+v", c.Name, c)
		}
	}
}

// TestHomeCannotBeMade: a HOOKWATCH_HOME that does not exist and cannot be
// made (under a file; under /proc, where nothing can be made) fails the
// spool check, and the default database's check, with a fix about the home.
func TestHomeCannotBeMade(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	homes := []string{filepath.Join(file, "sub", "hw")}
	if fi, err := os.Stat("/proc/self"); err == nil && fi.IsDir() {
		homes = append(homes, "/proc/hookwatch-nope")
	}
	for _, home := range homes {
		homeChecks(t, root, home)
	}
}

// homeChecks runs doctor with home for HOOKWATCH_HOME and its default
// database, and returns its spool and database checks, having checked that
// both fail with a fix about the home.
func homeChecks(t *testing.T, root, home string) []Check {
	t.Helper()
	env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": home, "HOOKWATCH_URL": "http://127.0.0.1:1"}
	r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: filepath.Join(root, "hookwatch"),
		Version: "test", Timeout: time.Second, Database: filepath.Join(home, "hookwatch.db")})
	var out []Check
	for _, c := range r.Checks {
		if c.Name != "spool" && c.Name != "database" {
			continue
		}
		out = append(out, c)
		if c.Status != Fail || !strings.Contains(c.Fix, "HOOKWATCH_HOME=") || strings.Contains(c.Fix, "HOOKWATCH_DB") {
			t.Errorf("HOOKWATCH_HOME=%s: %s check %+v", home, c.Name, c)
		}
	}
	if len(out) != 2 {
		t.Fatalf("HOOKWATCH_HOME=%s: %d of the spool and database checks", home, len(out))
	}
	return out
}

// TestHTTPHooksElsewhere: http hooks posting to another collector than
// HOOKWATCH_URL, where the command hooks of the events without an http
// handler post, is a warning with the export that joins them.
func TestHTTPHooksElsewhere(t *testing.T) {
	root := t.TempDir()
	self := filepath.Join(root, "hookwatch")
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := install.Options{Scope: "user", ConfigDir: filepath.Join(root, "home", ".claude"), Mode: install.ModeHTTP, CollectorURL: "http://127.0.0.1:7452", Binary: self}
	if _, err := install.Install(o); err != nil {
		t.Fatal(err)
	}
	check := func(url string) Check {
		t.Helper()
		env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": filepath.Join(root, "hw"), "HOOKWATCH_URL": url}
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: self, HookBinary: self, Version: "test", Timeout: time.Second})
		for _, c := range r.Checks {
			if c.Name == "settings (user)" {
				return c
			}
		}
		t.Fatal("no check of the user settings")
		return Check{}
	}
	c := check("")
	if c.Status != Warn || !strings.Contains(strings.Join(c.Details, "\n"), "the http hooks post to http://127.0.0.1:7452, but SessionStart") || c.Fix != "hookwatch install --url http://127.0.0.1:7452" {
		t.Errorf("http hooks to another collector than the default URL: %+v", c)
	}
	if c := check("http://127.0.0.1:7452/"); strings.Contains(strings.Join(c.Details, "\n"), "the http hooks post to") {
		t.Errorf("HOOKWATCH_URL naming the http hooks' collector: %+v", c)
	}
	// Either way, what http hooks lose while the collector is down.
	if c := check("http://127.0.0.1:7452/"); !slices.Contains(c.Details, install.HTTPDownNote(true)) {
		t.Errorf("http hooks installed, doctor does not say what they lose while the collector is down: %+v", c)
	}
}

// TestFixNamesTheProject: doctor run on another directory's project
// (--project) gives fixes that name it, so that they act on that
// project's settings and not on the working directory's.
func TestFixNamesTheProject(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "my project")
	env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": filepath.Join(root, "hw"),
		"HOOKWATCH_URL": "http://127.0.0.1:1", "HOOKWATCH_AUTOSTART": "0", "CLAUDE_CONFIG_DIR": filepath.Join(root, "claude")}
	if err := os.Mkdir(project, 0o700); err != nil {
		t.Fatal(err)
	}
	// Installed from a binary since removed: every hook event fails.
	gone := filepath.Join(root, "gone", "hookwatch")
	if _, err := install.Install(install.Options{Scope: claudecode.ScopeProject, ProjectDir: project, Binary: gone}); err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(root, "hookwatch")
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fixOf := func(workDir string) string {
		t.Helper()
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: workDir, Self: self, HookBinary: self, Version: "test", Timeout: time.Second})
		for _, c := range r.Checks {
			if c.Name == "settings (project)" {
				if c.Status != Fail {
					t.Fatalf("a project registering a removed binary: %+v", c)
				}
				return c.Fix
			}
		}
		t.Fatal("no check of the project's settings")
		return ""
	}
	if fix, want := fixOf(project), "hookwatch install --scope project --project '"+project+"'"; fix != want {
		t.Errorf("fix %q, want %q", fix, want)
	}
	// Run in the project itself, the fix needs no --project.
	t.Chdir(project)
	if fix, want := fixOf(project), "hookwatch install --scope project"; fix != want {
		t.Errorf("in the project: fix %q, want %q", fix, want)
	}
}

// TestHookLogSinceDelivered: the hook's errors warn until an event is
// delivered after them, not for 24 hours; an error the last run logged
// still warns although its own event was delivered since.
func TestHookLogSinceDelivered(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "hw")
	vars := map[string]string{
		"HOME":                  filepath.Join(root, "home"),
		"HOOKWATCH_HOME":        home,
		"HOOKWATCH_URL":         "http://127.0.0.1:1", // nothing listens there
		"HOOKWATCH_AUTOSTART":   "0",
		"HOOKWATCH_HOOK_BUDGET": "20ms", // errors are followed by a delivery 200 ms after them
	}
	getenv := func(k string) string { return vars[k] }
	payload, err := os.ReadFile(filepath.Join("..", "redact", "testdata", "pretooluse-bash.json"))
	if err != nil {
		t.Fatal(err)
	}
	runHook := func() hook.Result {
		t.Helper()
		cfg, _ := hook.ConfigFromEnv(getenv)
		return hook.Run(context.Background(), cfg, bytes.NewReader(payload))
	}
	e := &env{Options: Options{Getenv: getenv, Now: time.Now}, home: home}
	want := func(status Status, message string) {
		t.Helper()
		c := e.checkHookLog()
		if c.Status != status || !strings.Contains(c.Message, message) {
			t.Fatalf("hook log check: %s %q %q, want %s saying %q", c.Status, c.Message, c.Details, status, message)
		}
	}
	// The collector is down: the hook spools the event and logs why.
	if res := runHook(); !res.Spooled || res.Err == nil {
		t.Fatalf("hook with the collector down: %+v", res)
	}
	want(Warn, "1 hook error in the last 24 hours")

	// A collector attaches to the spool: it delivers what waited and what
	// the hooks hand it from then on, without an error.
	sp, release := spooltest.Attach(t, home, "127.0.0.1:1")
	tail := sp.Tail()
	drain := func() {
		t.Helper()
		if _, err := tail.Drain(context.Background(), 0, func([][]byte) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	// At once, the delivery may be the logged run's own event's.
	drain()
	want(Warn, "1 hook error in the last 24 hours")
	time.Sleep(250 * time.Millisecond)
	if res := runHook(); !res.Delivered || res.Err != nil {
		t.Fatalf("hook with the collector attached: %+v", res)
	}
	drain()
	want(OK, "no hook errors since the last event delivered")

	// Down again: the new error warns, the old one no more.
	tail.Settle()
	release()
	time.Sleep(250 * time.Millisecond)
	if res := runHook(); res.Err == nil {
		t.Fatalf("hook with the collector gone: %+v", res)
	}
	want(Warn, "1 hook error since the last event delivered")
}

// TestDatabaseCheckTeamServer: on a machine whose hooks send to a team
// server (HOOKWATCH_URL remote, a team token installed), the local SQLite
// database is not where the events go: the check says so and skips it, a
// damaged file included. Without the token the same file fails as before.
func TestDatabaseCheckTeamServer(t *testing.T) {
	root := t.TempDir()
	hw := filepath.Join(root, "hw")
	bad := filepath.Join(root, "bad.db")
	if err := os.WriteFile(bad, bytes.Repeat([]byte{0xA5, 0x17}, 50000), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func() Check {
		t.Helper()
		env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": hw, "HOOKWATCH_URL": "http://192.0.2.1:7421", "HOOKWATCH_AUTOSTART": "0"}
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: filepath.Join(root, "hookwatch"),
			Version: "test", Timeout: 200 * time.Millisecond, Database: bad})
		for _, c := range r.Checks {
			if c.Name == "database" {
				return c
			}
		}
		t.Fatal("no database check")
		return Check{}
	}
	if c := check(); c.Status != Fail {
		t.Errorf("a damaged database, no team token: %+v, want a failure", c)
	}
	if err := os.MkdirAll(hw, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hw, hook.TokenFile), []byte("hwt_0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c := check(); c.Status != Info || !strings.Contains(c.Message, "not checked") || !strings.Contains(c.Message, "http://192.0.2.1:7421") {
		t.Errorf("a team server's machine: %+v, want the local database not checked, naming the server", c)
	}
}

// TestRejected: envelopes a collector refused, set aside in rejected.jsonl
// in the last day, warn and name the file; older ones are reported without
// a warning; none is said so.
func TestRejected(t *testing.T) {
	home := t.TempDir()
	now := time.Now()
	e := &env{Options: Options{Getenv: func(string) string { return "" }, Now: func() time.Time { return now }}, home: home}
	if c := e.checkRejected(); c.Status != OK || !strings.Contains(c.Message, "no envelope") {
		t.Fatalf("no rejected.jsonl: %s %q", c.Status, c.Message)
	}
	path := filepath.Join(home, hook.RejectedFile)
	if err := hook.Reject(home, [][]byte{[]byte(`{"id":"a"}`), []byte(`{"id":"b"}`)}, errors.New("refused")); errors.Is(err, hook.ErrNotKept) {
		t.Fatal(err)
	}
	c := e.checkRejected()
	if c.Status != Warn || !strings.Contains(c.Message, "2 envelopes") || !strings.Contains(c.Message, path) {
		t.Fatalf("rejected.jsonl just written: %s %q", c.Status, c.Message)
	}
	old := now.Add(-48 * time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if c := e.checkRejected(); c.Status != OK || !strings.Contains(c.Message, path) {
		t.Fatalf("rejected.jsonl of two days ago: %s %q", c.Status, c.Message)
	}
}

// TestDisk: the disk check adds up what the home holds — the database and
// its write-ahead log, the compaction archive, the spool, the logs, the
// audit directory the collector writes — and warns of a database past
// diskWarnBytes that no retention prunes, with the flag that sets one; a
// retention set in the service's unit is one.
func TestDisk(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "hw")
	auditDir := filepath.Join(root, "trail")
	vars := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": home, "HOOKWATCH_AUDIT_DIR": auditDir}
	getenv := func(k string) string { return vars[k] }
	db := filepath.Join(home, "hookwatch.db")
	sizes := map[string]int64{
		db:          diskWarnBytes + 1,
		db + "-wal": 4 << 20,
		filepath.Join(home, "archive", "s", "main", "t.jsonl"): 3 << 20,
		filepath.Join(home, "spool", "seg-1"):                  2 << 10,
		filepath.Join(home, "serve.log"):                       5 << 20,
		filepath.Join(home, "serve.log.1"):                     8 << 20,
		filepath.Join(auditDir, "s", "events.jsonl"):           7 << 20,
	}
	for p, n := range sizes {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(n); err != nil { // sparse: the size is what counts
			t.Fatal(err)
		}
		f.Close()
	}
	e := &env{Options: Options{Getenv: getenv, Now: time.Now, Database: db}, home: home, userHome: vars["HOME"]}
	c := e.checkDisk()
	for _, want := range []string{"database 1.0 GiB", "archive 3.0 MiB", "spool 2.0 KiB", "logs 13.0 MiB", "audit trail 7.0 MiB"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("disk check %q does not say %q", c.Message, want)
		}
	}
	if c.Status != Warn || !strings.Contains(c.Fix, "--retain") || !strings.Contains(strings.Join(c.Details, " "), db) {
		t.Fatalf("a database past %d bytes with no retention: %s %q %q %q", diskWarnBytes, c.Status, c.Message, c.Details, c.Fix)
	}
	if !strings.Contains(strings.Join(c.Details, " "), "--audit-retain") {
		t.Errorf("the details %q do not say the audit trail is kept whole", c.Details)
	}

	// The service's unit sets a retention: nothing to warn of.
	unit, content := install.ServiceUnit(runtime.GOOS, "/usr/local/bin/hookwatch", map[string]string{"HOOKWATCH_RETAIN": "90d", "HOOKWATCH_HOME": home})
	if unit == "" {
		t.Skip("no service manager on " + runtime.GOOS)
	}
	unit = writeUnit(t, vars["HOME"], unit, content)
	if c := e.checkDisk(); c.Status != OK || !strings.Contains(c.Message, "retain 90d") {
		t.Fatalf("with the service's retention: %s %q %q", c.Status, c.Message, c.Details)
	}
}

// TestDiskArchiveForwarder: where the hooks deliver through a forwarder, the
// disk check says how long the forwarder keeps the compaction archive —
// its default, off, or the age the forwarder's service unit sets — since
// no collector's retention prunes it there; where a local collector
// records the events, it says none of that.
func TestDiskArchiveForwarder(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "hw")
	vars := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": home}
	getenv := func(k string) string { return vars[k] }
	p := filepath.Join(home, "archive", "s", "main", "t.jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, make([]byte, 3<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	e := &env{Options: Options{Getenv: getenv, Now: time.Now}, home: home, userHome: vars["HOME"], url: "https://hookwatch.example.com"}
	says := func(want string) {
		t.Helper()
		if c := e.checkDisk(); c.Status != OK || !strings.Contains(c.Message, want) {
			t.Errorf("disk check %s %q, want it to say %q", c.Status, c.Message, want)
		}
	}
	says("archive 3.0 KiB (the forwarder deletes a session's once untouched for 30d, the default)")
	vars["HOOKWATCH_ARCHIVE_RETAIN"] = "off"
	says("archive 3.0 KiB (kept whole: HOOKWATCH_ARCHIVE_RETAIN=off, from the environment)")

	// The forwarder's service unit for this home sets it: its value, not
	// this shell's.
	unit, content := install.ForwarderUnit(runtime.GOOS, "/usr/local/bin/hookwatch", map[string]string{"HOOKWATCH_ARCHIVE_RETAIN": "90d", "HOOKWATCH_HOME": home})
	if unit != "" {
		unit = writeUnit(t, vars["HOME"], unit, content)
		says("archive 3.0 KiB (the forwarder deletes a session's once untouched for 90d, from the service's unit " + unit + ")")
	}

	// A local collector: its retention, which the message names, prunes
	// the archive with the sessions.
	e.url = hook.DefaultURL
	if c := e.checkDisk(); strings.Contains(c.Message, "forwarder") || strings.Contains(c.Message, "kept whole") {
		t.Errorf("disk check of a local collector's home: %q", c.Message)
	}
}

// writeUnit writes a service unit (install.ServiceUnit's path, relative to
// home) where the service manager of home reads it, and returns its path.
func writeUnit(t *testing.T, home, unit string, content []byte) string {
	t.Helper()
	unit = filepath.Join(home, unit)
	if err := os.MkdirAll(filepath.Dir(unit), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unit, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return unit
}

// TestDoctorRunFromHome: run from the home, the project's settings file is
// the user's (~/.claude/settings.json): one file, checked once, not two
// scopes registering the same handler that uninstalling one would leave.
// A real project beside it that registers hookwatch again still warns.
func TestDoctorRunFromHome(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	self := filepath.Join(root, "hookwatch")
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := install.Install(install.Options{Scope: claudecode.ScopeUser, ConfigDir: filepath.Join(home, ".claude"), Binary: self}); err != nil {
		t.Fatal(err)
	}
	checks := func(workDir string) map[string]Check {
		t.Helper()
		env := map[string]string{"HOME": home, "HOOKWATCH_HOME": filepath.Join(root, "hw"), "HOOKWATCH_URL": "http://127.0.0.1:1", "HOOKWATCH_AUTOSTART": "0"}
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: workDir, Self: self, HookBinary: self,
			Version: "test", Timeout: 200 * time.Millisecond})
		m := map[string]Check{}
		for _, c := range r.Checks {
			m[c.Name] = c
		}
		return m
	}
	c := checks(home)
	if p := c["settings (project)"]; p.Status != Info || !strings.Contains(p.Message, "is the user settings file") {
		t.Errorf("project settings from the home: %s (%s)", p.Status, p.Message)
	}
	if r := c["registration"]; r.Status != OK || r.Message != "hookwatch is registered in the user settings" {
		t.Errorf("registration from the home: %s (%s)", r.Status, r.Message)
	}

	project := filepath.Join(root, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := install.Install(install.Options{Scope: claudecode.ScopeProject, ProjectDir: project, Binary: self}); err != nil {
		t.Fatal(err)
	}
	if r := checks(project)["registration"]; r.Status != Warn || !strings.Contains(r.Message, "user and project settings register the same") {
		t.Errorf("registration in a project that registers it again: %s (%s)", r.Status, r.Message)
	}
}

// TestImportState: an import state that cannot be parsed fails, naming the
// file and how to mend it; none, or one that reads, is not reported.
func TestImportState(t *testing.T) {
	home := t.TempDir()
	e := &env{Options: Options{Getenv: func(string) string { return "" }, Now: time.Now}, home: home}
	if c, ok := e.checkImportState(); ok {
		t.Fatalf("no import state reported: %+v", c)
	}
	path := filepath.Join(home, importer.StateFile)
	if err := os.WriteFile(path, []byte(`{"files":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, ok := e.checkImportState(); ok {
		t.Fatalf("a readable import state reported: %+v", c)
	}
	if err := os.WriteFile(path, []byte(`{"files":{"/x":{"offset":1`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, ok := e.checkImportState()
	if !ok || c.Status != Fail || !strings.Contains(c.Fix, "rm "+path) || len(c.Details) != 1 || !strings.Contains(c.Details[0], path) {
		t.Fatalf("an import state cut short: %v %+v", ok, c)
	}
}
