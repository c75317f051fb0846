package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/testbin"
)

// TestInstallRealClient is the user's path: `hookwatch install` into a
// settings file they already have, a real Claude Code session whose events
// reach a collector that the first hook starts by itself, then
// `hookwatch uninstall`, which gives back the original file byte for byte.
// In http mode the events go straight to the collector's
// /v1/hooks/claude; SessionStart, which allows no http hook, still runs the
// hook binary and so still starts the collector.
func TestInstallRealClient(t *testing.T) {
	Clients(t) // skip (or fail in CI) before building anything
	hookwatch := testbin.Build(t, "./cmd/hookwatch")
	testbin.Build(t, "./cmd/hookwatch-hook") // install registers the lean hook beside hookwatch
	EachClient(t, func(t *testing.T, c Client) { testInstallRealClient(t, c, hookwatch) })
}

func testInstallRealClient(t *testing.T, c Client, hookwatch string) {
	for _, mode := range []string{"command", "http"} {
		t.Run(mode, func(t *testing.T) {
			home, addr := t.TempDir(), testbin.FreeAddr(t)
			testbin.StopCollectorsAt(t, addr)
			url := "http://" + addr
			e := New(t, c, Hook{Command: "/bin/true"}, "HOOKWATCH_HOME="+home, "HOOKWATCH_URL="+url)
			original := []byte("{\n  \"model\": \"sonnet\",\n  \"permissions\": {\n    \"allow\": [\"Bash(ls)\"]\n  }\n}\n")
			if err := os.WriteFile(e.Settings, original, 0o600); err != nil {
				t.Fatal(err)
			}
			hw := func(args ...string) string {
				t.Helper()
				cmd := exec.Command(hookwatch, args...)
				cmd.Env = append(e.Environ(), "HOOKWATCH_HOME="+home, "HOOKWATCH_URL="+url)
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("hookwatch %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				return string(out)
			}
			hw("install", "--scope", "user", "--mode", mode, "--url", url)
			installed, _ := os.ReadFile(e.Settings)
			if !bytes.Contains(installed, []byte("hookwatch-hook")) || !bytes.Contains(installed, []byte(`"model": "sonnet"`)) {
				t.Fatalf("settings after install:\n%s", installed)
			}
			if mode == "http" && !bytes.Contains(installed, []byte("/v1/hooks/claude")) {
				t.Fatalf("http install registers no http hook:\n%s", installed)
			}

			res := e.Play(FailingBash())
			want := []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUseFailure", "Stop", "SessionEnd"}
			var got map[string]int
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
				if got = eventNames(t, url, res.SessionID); hasAll(got, want) {
					break
				}
			}
			if !hasAll(got, want) {
				t.Fatalf("collector has events %v for session %s, want at least %v; hook.log:\n%s\nserve.log:\n%s", got, res.SessionID, want, readLog(home), readServeLog(home))
			}
			for name, n := range got {
				if n > 1 && (name == "SessionStart" || name == "UserPromptSubmit" || name == "SessionEnd") {
					t.Errorf("%s stored %d times, want once", name, n)
				}
			}

			hw("uninstall", "--scope", "user")
			after, _ := os.ReadFile(e.Settings)
			if !bytes.Equal(after, original) {
				t.Errorf("uninstall left\n%s\nwant the original\n%s", after, original)
			}
		})
	}
}

// eventNames counts the events of session the hooks sent, by name: what
// the collector read of the transcripts besides (their kind's) may repeat
// them, as the follower's look falls.
func eventNames(t *testing.T, base, session string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, ev := range (&collectorProc{url: base}).events(t, session) {
		if ev.Kind == "hook" {
			out[ev.Event]++
		}
	}
	return out
}

func hasAll(got map[string]int, want []string) bool {
	for _, w := range want {
		if got[w] == 0 {
			return false
		}
	}
	return true
}

func readLog(home string) string {
	b, _ := os.ReadFile(home + "/hook.log")
	return string(b)
}

func readServeLog(home string) string {
	b, _ := os.ReadFile(home + "/serve.log")
	return string(b)
}

// TestInstallKeepsURL: `hookwatch install --url` keeps the collector's URL
// in the home, and a real Claude Code started without HOOKWATCH_URL in its
// environment (from an IDE, a launcher, a fresh shell) delivers its events
// there. The collector is of another home, as a team server is: the hooks
// reach it only by its URL, not through their own home's spool, and with
// HOOKWATCH_AUTOSTART=0 no hook starts a collector of its own.
func TestInstallKeepsURL(t *testing.T) {
	Clients(t) // skip (or fail in CI) before building anything
	hookwatch := testbin.Build(t, "./cmd/hookwatch")
	testbin.Build(t, "./cmd/hookwatch-hook") // install registers the lean hook beside hookwatch
	coll := startCollector(t)
	EachClient(t, func(t *testing.T, c Client) {
		home := t.TempDir()
		vars := []string{"HOOKWATCH_HOME=" + home, "HOOKWATCH_AUTOSTART=0"}
		e := New(t, c, Hook{Command: "/bin/true"}, vars...)
		for _, kv := range e.Environ() {
			if strings.HasPrefix(kv, "HOOKWATCH_URL=") {
				t.Fatalf("the client's environment holds %s", kv)
			}
		}
		cmd := exec.Command(hookwatch, "install", "--scope", "user", "--url", coll.url)
		cmd.Env = append(e.Environ(), vars...)
		if out, err := cmd.CombinedOutput(); err != nil || bytes.Contains(out, []byte("export HOOKWATCH_URL")) {
			t.Fatalf("hookwatch install --url: %v\n%s", err, out)
		}

		res := e.Play(FailingBash())
		want := []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUseFailure", "Stop", "SessionEnd"}
		var got map[string]int
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if got = eventNames(t, coll.url, res.SessionID); hasAll(got, want) {
				break
			}
		}
		if !hasAll(got, want) {
			t.Fatalf("the collector at the URL kept has events %v for session %s, want at least %v; hook.log:\n%s", got, res.SessionID, want, readLog(home))
		}
	})
}
