package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/claudecode"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ and ../hooks/hooks.json")

// testBinary is the hookwatch binary the tests install.
const testBinary = "/opt/hookwatch/bin/hookwatch"

// golden compares got with the file testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("cannot read golden file (run go test -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n%s", name, unifiedDiff("want", "got", want, got))
	}
}

// cases lists the directories under testdata/ that hold a settings file
// (or, for "none", hold none).
func cases(t *testing.T) []string {
	t.Helper()
	var out []string
	ents, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() && e.Name() != "service" {
			out = append(out, e.Name())
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d cases under testdata/", len(out))
	}
	return out
}

// setup copies testdata/<name>/settings.json (if any) into a fresh config
// directory and returns options that point at it, and the input.
func setup(t *testing.T, name string) (Options, []byte, bool) {
	t.Helper()
	dir := t.TempDir()
	o := Options{ConfigDir: dir, Binary: testBinary}
	in, err := os.ReadFile(filepath.Join("testdata", name, "settings.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return o, nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), in, 0o644); err != nil {
		t.Fatal(err)
	}
	return o, in, true
}

// content returns the settings file's content, or nil when it is missing.
func content(t *testing.T, o Options) []byte {
	t.Helper()
	p, err := SettingsPath(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustInstall(t *testing.T, o Options) Result {
	t.Helper()
	r, err := Install(o)
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	return r
}

func mustUninstall(t *testing.T, o Options) Result {
	t.Helper()
	r, err := Uninstall(o)
	if err != nil {
		t.Fatalf("Uninstall: %v", err)
	}
	return r
}

// wantUninstalled checks the file after Uninstall: the input again, byte for
// byte, unless testdata/<name>/<golden> says otherwise.
func wantUninstalled(t *testing.T, o Options, name, goldenName string, in []byte, existed bool) {
	t.Helper()
	got := content(t, o)
	if _, err := os.Stat(filepath.Join("testdata", name, goldenName)); err == nil || (*update && !bytes.Equal(got, in)) {
		if got == nil {
			got = []byte("(no file)\n")
		}
		golden(t, filepath.Join(name, goldenName), got)
		return
	}
	if !existed {
		if got != nil {
			t.Errorf("the file did not exist before Install but is left with:\n%s", got)
		}
		return
	}
	if !bytes.Equal(got, in) {
		t.Errorf("after Uninstall the file is not what it was:\n%s", unifiedDiff("before", "after", in, got))
	}
}

func TestInstallUninstallGolden(t *testing.T) {
	variants := []struct {
		golden string
		opt    func(*Options)
	}{
		{"install.golden", func(o *Options) {}},
		{"install-http.golden", func(o *Options) { o.Mode = ModeHTTP }},
		{"install-statusline.golden", func(o *Options) { o.Statusline = true }},
	}
	for _, name := range cases(t) {
		for _, v := range variants {
			t.Run(name+"/"+v.golden, func(t *testing.T) {
				o, in, existed := setup(t, name)
				v.opt(&o)
				r := mustInstall(t, o)
				got := content(t, o)
				golden(t, filepath.Join(name, v.golden), got)
				if !r.Changed || r.Created == existed || r.Diff == "" {
					t.Errorf("Install result %+v: want Changed, Created=%v and a diff", r, !existed)
				}
				if mixed := slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "hooks.PreToolUse runs hookwatch next to") }); mixed != (name == "previous-install") {
					t.Errorf("notes %q: want a note on the mixed group exactly for previous-install", r.Notes)
				}
				if !json.Valid(bytes.TrimPrefix(got, utf8BOM)) {
					t.Fatalf("Install wrote invalid JSON")
				}

				// The backup holds the input, and only when there was one
				// without hookwatch in it.
				backup := r.Path + BackupSuffix
				b, err := os.ReadFile(backup)
				switch {
				case existed && name != "previous-install":
					if err != nil || !bytes.Equal(b, in) || r.Backup != backup {
						t.Errorf("backup %q = %q, %v; want the input", r.Backup, b, err)
					}
				case err == nil || r.Backup != "":
					t.Errorf("unexpected backup %q: %q", r.Backup, b)
				}

				// Again: nothing changes, not even a byte.
				r2 := mustInstall(t, o)
				if r2.Changed || r2.Diff != "" || !bytes.Equal(content(t, o), got) {
					t.Errorf("second Install changed the file: %+v", r2)
				}

				r3 := mustUninstall(t, o)
				if !r3.Changed {
					t.Errorf("Uninstall reported no change")
				}
				wantUninstalled(t, o, name, "uninstall.golden", in, existed)
				if _, err := os.Stat(backup); err == nil && r3.Restored {
					t.Errorf("the backup is left after it was restored")
				}
				r4 := mustUninstall(t, o)
				if r4.Changed {
					t.Errorf("second Uninstall changed the file: %s", r4.Diff)
				}
			})
		}
	}
}

// Without its backup, Uninstall takes out exactly what Install put in: the
// splices undo each other.
func TestUninstallWithoutBackup(t *testing.T) {
	for _, name := range cases(t) {
		t.Run(name, func(t *testing.T) {
			o, in, existed := setup(t, name)
			o.Statusline = true
			r := mustInstall(t, o)
			os.Remove(r.Path + BackupSuffix)
			r = mustUninstall(t, o)
			if r.Restored {
				t.Errorf("Restored without a backup")
			}
			wantUninstalled(t, o, name, "uninstall-nobackup.golden", in, existed)
		})
	}
}

func TestInstallDryRun(t *testing.T) {
	for _, name := range cases(t) {
		t.Run(name, func(t *testing.T) {
			o, in, _ := setup(t, name)
			o.DryRun = true
			r := mustInstall(t, o)
			if !bytes.Equal(content(t, o), in) {
				t.Errorf("dry run changed the file")
			}
			if _, err := os.Stat(r.Path + BackupSuffix); err == nil {
				t.Errorf("dry run wrote a backup")
			}
			golden(t, filepath.Join(name, "install.diff"), []byte(strings.ReplaceAll(r.Diff, o.ConfigDir, "$CLAUDE_CONFIG_DIR")))

			// The diff of a dry run is the diff of the real thing.
			o.DryRun = false
			if r2 := mustInstall(t, o); r2.Diff != r.Diff {
				t.Errorf("dry-run diff differs from the real one:\n%s", unifiedDiff("dry", "real", []byte(r.Diff), []byte(r2.Diff)))
			}
			o.DryRun = true
			before := content(t, o)
			if r3 := mustUninstall(t, o); !r3.Changed || r3.Diff == "" || !bytes.Equal(content(t, o), before) {
				t.Errorf("dry-run Uninstall: %+v", r3)
			}
		})
	}
}

// Switching mode or binary rewrites hookwatch's groups in place: the result
// is what a fresh install with the new options gives.
func TestInstallSwitch(t *testing.T) {
	f := func(name string, first, second func(*Options)) {
		t.Helper()
		o, in, existed := setup(t, name)
		first(&o)
		mustInstall(t, o)
		second(&o)
		r := mustInstall(t, o)
		if !r.Changed {
			t.Errorf("%s: switching changed nothing", name)
		}
		fresh, _, _ := setup(t, name)
		second(&fresh)
		mustInstall(t, fresh)
		if got, want := content(t, o), content(t, fresh); !bytes.Equal(got, want) {
			t.Errorf("%s: switched install differs from a fresh one:\n%s", name, unifiedDiff("fresh", "switched", want, got))
		}
		mustUninstall(t, o)
		if got := content(t, o); existed && !bytes.Equal(got, in) || !existed && got != nil {
			t.Errorf("%s: Uninstall after a switch left:\n%s", name, got)
		}
	}
	toHTTP := func(o *Options) { o.Mode = ModeHTTP }
	toCommand := func(o *Options) { o.Mode = ModeCommand }
	otherBinary := func(o *Options) { o.Binary = "/usr/local/bin/hookwatch"; o.Statusline = true }
	withStatus := func(o *Options) { o.Statusline = true }
	f("same-events", toCommand, toHTTP)
	f("tabs", toHTTP, toCommand)
	f("compact", toHTTP, toCommand)
	f("statusline", withStatus, otherBinary)
	f("none", toCommand, otherBinary)
}

// What the user adds after Install stays after Uninstall, and the backup
// (now outdated) is kept.
func TestUninstallKeepsLaterEdits(t *testing.T) {
	o, in, _ := setup(t, "same-events")
	o.Statusline = true
	r := mustInstall(t, o)
	edited := bytes.Replace(content(t, o), []byte(`"hooks": {`), []byte(`"model": "opus",
  "hooks": {`), 1)
	if err := os.WriteFile(r.Path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	r = mustUninstall(t, o)
	want := bytes.Replace(in, []byte(`"hooks": {`), []byte(`"model": "opus",
  "hooks": {`), 1)
	if got := content(t, o); !bytes.Equal(got, want) {
		t.Errorf("Uninstall lost or mangled the user's edit:\n%s", unifiedDiff("want", "got", want, got))
	}
	if r.Restored || r.Backup == "" {
		t.Errorf("Restored=%v Backup=%q: want the backup kept, not restored", r.Restored, r.Backup)
	}
	// A later Install starts a fresh backup cycle.
	mustInstall(t, o)
	if b, _ := os.ReadFile(r.Backup); !bytes.Equal(b, want) {
		t.Errorf("the backup was not refreshed for the new cycle")
	}
}

// A whitespace-only reformat of the installed file does not make the second
// Install rewrite hookwatch's groups.
func TestInstallSemanticIdempotence(t *testing.T) {
	o, _, _ := setup(t, "other-keys")
	r := mustInstall(t, o)
	var v any
	if err := json.Unmarshal(content(t, o), &v); err != nil {
		t.Fatal(err)
	}
	// encoding/json sorts keys, so compare against a file written by it.
	re, _ := json.MarshalIndent(v, "", "    ")
	if err := os.WriteFile(r.Path, re, 0o644); err != nil {
		t.Fatal(err)
	}
	if r2 := mustInstall(t, o); r2.Changed {
		t.Errorf("Install rewrote a reformatted file:\n%s", r2.Diff)
	}
}

func TestSettingsPath(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	f := func(o Options, want string) {
		t.Helper()
		got, err := SettingsPath(o)
		if err != nil {
			t.Fatalf("SettingsPath(%+v): %v", o, err)
		}
		if got != want {
			t.Errorf("SettingsPath(%+v) = %q; want %q", o, got, want)
		}
	}
	f(Options{Home: "/home/u"}, "/home/u/.claude/settings.json")
	f(Options{Scope: claudecode.ScopeUser, Home: "/home/u", ConfigDir: "/cfg"}, "/cfg/settings.json")
	f(Options{Scope: claudecode.ScopeProject, ProjectDir: "/src/p"}, "/src/p/.claude/settings.json")
	f(Options{Scope: claudecode.ScopeLocal, ProjectDir: "/src/p"}, "/src/p/.claude/settings.local.json")
	t.Setenv("CLAUDE_CONFIG_DIR", "/env/claude")
	f(Options{Home: "/home/u"}, "/env/claude/settings.json")
	f(Options{Home: "/home/u", ConfigDir: "/cfg"}, "/cfg/settings.json")
	f(Options{Scope: claudecode.ScopeProject, ProjectDir: "/src/p"}, "/src/p/.claude/settings.json")

	if _, err := SettingsPath(Options{Scope: "global"}); err == nil || !strings.Contains(err.Error(), `unknown scope "global"`) {
		t.Errorf("unknown scope: err = %v", err)
	}
}

func TestInstallHonoursClaudeConfigDir(t *testing.T) {
	dir := t.TempDir()
	home := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", dir)
	r := mustInstall(t, Options{Home: home, Binary: testBinary})
	if want := filepath.Join(dir, "settings.json"); r.Path != want {
		t.Errorf("Path = %q; want %q", r.Path, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "settings.json")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude")); err == nil {
		t.Errorf("Install wrote under the home directory too")
	}
}

func TestInstallProjectScopes(t *testing.T) {
	proj := t.TempDir()
	for _, scope := range []string{claudecode.ScopeProject, claudecode.ScopeLocal} {
		o := Options{Scope: scope, ProjectDir: proj, Binary: testBinary}
		r := mustInstall(t, o)
		if !strings.HasPrefix(r.Path, filepath.Join(proj, ".claude")+string(filepath.Separator)) || !r.Created {
			t.Errorf("%s: %+v", scope, r)
		}
		mustUninstall(t, o)
		if content(t, o) != nil {
			t.Errorf("%s: file left after Uninstall", scope)
		}
	}
	_, err := Install(Options{Scope: claudecode.ScopeProject, ProjectDir: filepath.Join(proj, "missing"), Binary: testBinary})
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing project dir: err = %v", err)
	}
}

func TestInstallErrors(t *testing.T) {
	f := func(in string, o Options, wantErr string) {
		t.Helper()
		dir := t.TempDir()
		o.ConfigDir = dir
		path := filepath.Join(dir, "settings.json")
		if in != "" {
			if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Install(o)
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("Install(%q) error = %v; want it to contain %q", in, err, wantErr)
		}
		if in != "" {
			if b, _ := os.ReadFile(path); string(b) != in {
				t.Errorf("the file was changed to %q", b)
			}
		}
		ents, _ := os.ReadDir(dir)
		if in != "" && len(ents) != 1 || in == "" && len(ents) != 0 {
			t.Errorf("Install left files behind: %v", ents)
		}
	}
	ok := Options{Binary: testBinary}
	f("{\n  \"a\": 1,\n}\n", ok, "settings.json: invalid JSON at line 3, column 1")
	f("{\"a\": tru}", ok, "invalid JSON at line 1, column 10")
	f("{\n  \"a\": [1, 2\n", ok, "invalid JSON at line 3, column 1: unexpected end of JSON input")
	f("// comment\n{}", ok, "invalid JSON at line 1, column 1")
	f("[]", ok, "the top level is not an object")
	f("\n\n  null", ok, "line 3, column 3: the top level is not an object")
	f(`{"hooks": []}`, ok, `"hooks" is not an object`)
	f(`{"hooks": {"PreToolUse": {}}}`, ok, `"hooks.PreToolUse" is not an array`)
	f(`{"hooks": {}, "hooks": {}}`, ok, `the key "hooks" occurs twice`)
	f(`{"hooks": {"Stop": [], "Stop": []}}`, ok, `the key "Stop" occurs twice under "hooks"`)
	f(`{"statusLine": "x"}`, Options{Binary: testBinary, Statusline: true}, "it has no command")
	f(`{}`, Options{}, "binary is required")
	f(`{}`, Options{Binary: "hookwatch"}, "is not absolute")
	f(`{}`, Options{Binary: testBinary, Mode: "grpc"}, `unknown mode "grpc"`)
	f(`{}`, Options{Binary: testBinary, Mode: ModeHTTP, CollectorURL: "localhost:7421"}, "it has no scheme")
	// hook.CheckURL's rule: a host, and a port one can reach.
	f(`{}`, Options{Binary: testBinary, Mode: ModeHTTP, CollectorURL: "http://:7421"}, "it has no host")
	f(`{}`, Options{Binary: testBinary, Mode: ModeHTTP, CollectorURL: "http://127.0.0.1:99999"}, `its port "99999" is not a number up to 65535`)
	f("", Options{Binary: testBinary, Scope: "everywhere"}, `unknown scope "everywhere"`)
	f(`{}`, Options{Binary: testBinary, Mode: ModeHTTP, ClaudeVersion: "2.1.50"}, "http handlers need Claude Code 2.1.63")
}

func TestInstallReadOnly(t *testing.T) {
	o, in, _ := setup(t, "other-keys")
	path, _ := SettingsPath(o)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	_, err := Install(o)
	if err == nil || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v; want a read-only error naming the file", err)
	}
	if !bytes.Equal(content(t, o), in) {
		t.Errorf("read-only file changed")
	}
	if _, err := os.Stat(path + BackupSuffix); err == nil {
		t.Errorf("backup written for a file that cannot be changed")
	}
	// A dry run only reads.
	if r, err := Install(Options{ConfigDir: o.ConfigDir, Binary: testBinary, DryRun: true}); err != nil || !r.Changed {
		t.Errorf("dry run on a read-only file: %+v, %v", r, err)
	}
}

func TestInstallKeepsModeAndSymlink(t *testing.T) {
	dir := t.TempDir()
	dotfiles := filepath.Join(dir, "dotfiles", "claude-settings.json")
	if err := os.MkdirAll(filepath.Dir(dotfiles), 0o755); err != nil {
		t.Fatal(err)
	}
	in := []byte("{\n  \"model\": \"opus\"\n}\n")
	if err := os.WriteFile(dotfiles, in, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "claude")
	os.Mkdir(cfg, 0o755)
	link := filepath.Join(cfg, "settings.json")
	if err := os.Symlink(dotfiles, link); err != nil {
		t.Fatal(err)
	}
	o := Options{ConfigDir: cfg, Binary: testBinary}
	mustInstall(t, o)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi.Mode(), err)
	}
	fi, _ := os.Stat(dotfiles)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v; want 0600 kept", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(dotfiles); !bytes.Contains(b, []byte(testBinary)) {
		t.Errorf("the link's target was not updated")
	}
	mustUninstall(t, o)
	if b, _ := os.ReadFile(dotfiles); !bytes.Equal(b, in) {
		t.Errorf("after Uninstall: %q", b)
	}
}

func TestUninstallMissingFile(t *testing.T) {
	r, err := Uninstall(Options{ConfigDir: t.TempDir()})
	if err != nil || r.Changed {
		t.Errorf("Uninstall of a missing file: %+v, %v", r, err)
	}
}

func TestHTTPHandlers(t *testing.T) {
	o, _, _ := setup(t, "none")
	o.Mode = ModeHTTP
	o.CollectorURL = "https://hooks.example.com/team/"
	mustInstall(t, o)
	var doc struct {
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(content(t, o), &doc); err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		h := doc.Hooks[e.Name][0].Hooks[0]
		switch {
		case e.HTTP && (h["type"] != "http" || h["url"] != "https://hooks.example.com/team/v1/hooks/claude"):
			t.Errorf("%s: %v; want an http handler", e.Name, h)
		case !e.HTTP && (h["type"] != "command" || h["command"] != testBinary):
			t.Errorf("%s: %v; want a command handler", e.Name, h)
		case h["async"] != nil && h["type"] != "command":
			t.Errorf("%s: async on a %v handler", e.Name, h["type"])
		}
	}
}

// FuzzInstall feeds arbitrary settings files through install and
// uninstall: no panic, valid output, a stable second install, and the input
// back (whitespace aside) after uninstall.
func FuzzInstall(f *testing.F) {
	ents, _ := os.ReadDir("testdata")
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join("testdata", e.Name(), "settings.json")); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[]}]},"statusLine":{"command":"hookwatch statusline --wrap ''"}}`))
	f.Add([]byte(" {\"a\" :1 ,\"b\":[ ] } "))
	o := Options{Binary: testBinary, Statusline: true}
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := parse(in, "settings.json")
		if err != nil {
			return
		}
		// JSON text is UTF-8 (RFC 8259); a wrapped statusLine command with
		// invalid bytes comes back with U+FFFD, as Claude Code reads it.
		exact := utf8.Valid(in)
		hadHookwatch := s.hasHookwatch(o)
		var notes []string
		out, err := s.install(o, &notes)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("install made invalid JSON of %q:\n%s", in, out)
		}
		s2, err := parse(out, "settings.json")
		if err != nil {
			t.Fatalf("cannot parse what install wrote: %v", err)
		}
		again, err := s2.install(o, &notes)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("second install changed %q into %q (%v)", out, again, err)
		}
		back, err := s2.uninstall(o, s, &notes)
		if err != nil {
			t.Fatalf("uninstall: %v", err)
		}
		if !json.Valid(back) {
			t.Fatalf("uninstall made invalid JSON: %s", back)
		}
		if exact && !hadHookwatch && ugly(back) != ugly(s.body) {
			t.Fatalf("uninstall did not give the input back:\nin:  %s\nout: %s", s.body, back)
		}
	})
}

func TestInstallClaudeVersion(t *testing.T) {
	names := func(b []byte) []string {
		var doc struct{ Hooks map[string]json.RawMessage }
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		var out []string
		for k := range doc.Hooks {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	o, _, _ := setup(t, "none")
	mustInstall(t, o)
	if n := len(names(content(t, o))); n != len(events) {
		t.Fatalf("without a version: %d events", n)
	}
	// Going back to an older client takes the newer events out again.
	o.ClaudeVersion = "2.1.197 (Claude Code)"
	r := mustInstall(t, o)
	if got := names(content(t, o)); len(got) != len(events)-1 || slices.Contains(got, "DirectoryAdded") {
		t.Errorf("2.1.197: %v", got)
	}
	if !strings.Contains(r.Diff, `-    "DirectoryAdded": [`) {
		t.Errorf("the diff does not show DirectoryAdded going:\n%s", r.Diff)
	}
	o.ClaudeVersion = "1.0.62"
	r = mustInstall(t, o)
	if !strings.Contains(r.Diff, `+            "command": "/opt/hookwatch/bin/hookwatch hook",`) || strings.Contains(string(content(t, o)), `"args"`) {
		t.Errorf("before 2.1.139 the handlers must use the shell form:\n%s", r.Diff)
	}
	if r := mustInstall(t, o); r.Changed {
		t.Errorf("shell-form handlers are not recognised as hookwatch's: %s", r.Diff)
	}
	if got := names(content(t, o)); !slices.Equal(got, []string{"Notification", "PostToolUse", "PreCompact", "PreToolUse", "SessionStart", "Stop", "SubagentStop", "UserPromptSubmit"}) {
		t.Errorf("1.0.62: %v", got)
	}
	mustUninstall(t, o)
	if content(t, o) != nil {
		t.Errorf("file left after Uninstall")
	}
	if _, err := Install(Options{ConfigDir: o.ConfigDir, Binary: testBinary, ClaudeVersion: "latest"}); err == nil {
		t.Errorf("a version without digits was accepted")
	}
}

func TestParseVersion(t *testing.T) {
	f := func(in string, want Version) {
		t.Helper()
		got, err := ParseVersion(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	f("2.1.197", Version{2, 1, 197})
	f("2.1.197 (Claude Code)", Version{2, 1, 197})
	f("v2.1", Version{2, 1})
	f("2.1.", Version{2, 1})
	f("10", Version{10})
	g := func(a, b string, want int) {
		t.Helper()
		va, _ := ParseVersion(a)
		vb, _ := ParseVersion(b)
		if got := va.Compare(vb); got != want {
			t.Errorf("Compare(%s, %s) = %d; want %d", a, b, got, want)
		}
	}
	g("2.1.197", "2.1.219", -1)
	g("2.1.219", "2.1.197", 1)
	g("2.1", "2.1.0", 0)
	g("2.10.0", "2.9.9", 1)
}

func TestVersionBefore(t *testing.T) {
	f := func(a, b string, want bool) {
		t.Helper()
		va, _ := ParseVersion(a)
		vb, _ := ParseVersion(b)
		if got := va.Before(vb); got != want {
			t.Fatalf("%q before %q = %v, want %v", a, b, got, want)
		}
	}
	f("2.1.100 (Claude Code)", "2.1.139", true)
	f("2.1.139", "2.1.139", false)
	f("2.1.140", "2.1.139", false)
	f("v2.1", "2.1.1", true)
	f("10.0.0", "2.1.139", false)
	f("unknown", "2.1.139", false)
	f("2.1.x", "2.1.139", true)
	if s := ExecFormSince.String(); s != "2.1.139" {
		t.Errorf("ExecFormSince = %s", s)
	}
}
