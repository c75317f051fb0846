package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hookwatch/hookwatch/doctor"
	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// TestDoctorNamesClient runs `hookwatch doctor` with each real client as
// the claude on PATH: it names the client's version, supported.
func TestDoctorNamesClient(t *testing.T) {
	Clients(t) // skip (or fail in CI) before building anything
	hookwatch := testbin.Build(t, "./cmd/hookwatch")
	EachClient(t, func(t *testing.T, c Client) {
		dir := t.TempDir()
		path := filepath.Join(dir, "bin")
		if err := os.MkdirAll(path, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(c.Bin, filepath.Join(path, "claude")); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(hookwatch, "doctor", "--json", "--no-round-trip")
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + path + ":/usr/bin:/bin", "HOME=" + dir, "HOOKWATCH_HOME=" + filepath.Join(dir, "hw"),
			"HOOKWATCH_URL=" + testbin.DeadURL(t), "HOOKWATCH_AUTOSTART=0"}
		out, _ := cmd.Output() // nothing is installed: doctor reports problems
		var r doctor.Report
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, out)
		}
		want := "Claude Code " + c.Name() + ", " + install.ClientSupport(c.Version).String()
		for _, ch := range r.Checks {
			if ch.Name == "claude" {
				if ch.Status != doctor.OK || ch.Message != want || install.ClientSupport(c.Version) != install.Supported {
					t.Fatalf("claude check %+v, want ok %q, supported", ch, want)
				}
				return
			}
		}
		t.Fatalf("no claude check in %s", out)
	})
}
