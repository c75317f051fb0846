package doctor

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/install"
)

// TestInstallAndDoctorAgree puts each handler shape of the claudecode
// fixtures into a settings file and checks that what doctor reports and what
// install does are the same judgement: doctor lists every handler that runs
// hookwatch; uninstall removes exactly the ones install manages; install
// then leaves one managed handler per event, so doctor sees a duplicate
// exactly where a hookwatch handler of the user's remains beside it.
func TestInstallAndDoctorAgree(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	f, err := os.Open("../claudecode/testdata/handlers.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const bin = "/opt/hookwatch/bin/hookwatch-hook"
	dir := t.TempDir()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var fx struct {
			Kind    string          `json:"kind"`
			Why     string          `json:"why"`
			Handler json.RawMessage `json:"handler"`
		}
		if err := json.Unmarshal(sc.Bytes(), &fx); err != nil {
			t.Fatal(err)
		}
		n++
		content := `{"hooks": {"Stop": [{"hooks": [` + string(fx.Handler) + `]}]}}`
		proj := filepath.Join(dir, "p", string(rune('a'+n%26))+string(rune('a'+n/26)))
		path := filepath.Join(proj, ".claude", "settings.local.json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		o := install.Options{Scope: claudecode.ScopeLocal, ProjectDir: proj, Binary: bin, ClaudeVersion: "2.1.197"}

		s, err := ReadSettings(claudecode.ScopeLocal, path)
		if err != nil {
			t.Fatalf("%s: %v", fx.Why, err)
		}
		if listed := len(s.Handlers) == 1; listed != (fx.Kind != "none") {
			t.Errorf("%s (%s): doctor lists %d handlers of %s", fx.Why, fx.Kind, len(s.Handlers), fx.Handler)
		}

		dry := o
		dry.DryRun = true
		r, err := install.Uninstall(dry)
		if err != nil {
			t.Fatalf("%s: uninstall: %v", fx.Why, err)
		}
		if r.Changed != (fx.Kind == "installed") {
			t.Errorf("%s (%s): uninstall changes the file: %v\n%s", fx.Why, fx.Kind, r.Changed, r.Diff)
		}

		if _, err := install.Install(o); err != nil {
			t.Fatalf("%s: install: %v", fx.Why, err)
		}
		s, err = ReadSettings(claudecode.ScopeLocal, path)
		if err != nil {
			t.Fatalf("%s: %v", fx.Why, err)
		}
		var stop []Handler
		for _, h := range s.Handlers {
			if h.Event == "Stop" {
				stop = append(stop, h)
			}
		}
		want := 1
		if fx.Kind == "custom" || fx.Kind == "launcher" {
			want = 2
		}
		if len(stop) != want || (len(s.Duplicates()) > 0) != (want == 2) {
			t.Errorf("%s (%s): after install doctor sees %d Stop handlers, duplicates %v; want %d", fx.Why, fx.Kind, len(stop), s.Duplicates(), want)
		}
	}
	if n < 40 {
		t.Fatalf("read %d fixtures", n)
	}
}
