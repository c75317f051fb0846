package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/internal/testbin"
	"github.com/hookwatch/hookwatch/privacy"
)

// TestCorpusThroughHook pipes every real payload of the three corpora
// (Claude Code 2.1.197, older public captures, Codex 0.169) through the hook
// binary into a running collector, and reads each one back through the API:
// stored exactly once, with the runtime detected, and the payload as the
// privacy rules leave it.
func TestCorpusThroughHook(t *testing.T) {
	hookBin := testbin.Build(t, "./cmd/hookwatch-hook")
	serveBin := testbin.Build(t, "./cmd/hookwatch")
	c := testbin.StartCollector(t, serveBin, t.TempDir(), "")
	hookHome := t.TempDir() // not the collector's: every event is POSTed

	type sent struct {
		payload map[string]json.RawMessage
		runtime string
	}
	want := map[string][]sent{} // by session
	n := 0
	for _, cp := range corpus.Load(t) {
		raw := cp.JSON
		cmd := exec.Command(hookBin)
		cmd.Env = []string{"HOOKWATCH_HOME=" + hookHome, "HOOKWATCH_URL=" + c.URL(), "HOOKWATCH_AUTOSTART=0"}
		cmd.Stdin = bytes.NewReader(raw)
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil || out.Len() > 0 {
			t.Fatalf("hook on %s: %v, stdout %q", cp.Label, err, out.String())
		}
		var p map[string]json.RawMessage
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		var sid string
		_ = json.Unmarshal(p["session_id"], &sid)
		privacy.Apply(p, privacy.DefaultOptions())
		want[sid] = append(want[sid], sent{p, cp.Runtime})
		n++
	}
	if n < 150 {
		t.Fatalf("only %d payloads in the corpora", n)
	}
	if log, err := os.ReadFile(filepath.Join(hookHome, "hook.log")); err == nil {
		t.Logf("hook.log (odd payloads are logged, not refused):\n%s", log)
	}

	stored := 0
	for sid, sents := range want {
		got := sessionEvents(t, c.URL(), sid)
		if len(got) != len(sents) {
			t.Errorf("session %q: %d events stored, %d sent", sid, len(got), len(sents))
			continue
		}
		// Same payloads, each once: match every sent payload to a stored one.
		used := make([]bool, len(got))
		for _, s := range sents {
			found := false
			for i, g := range got {
				if !used[i] && g.Runtime == s.runtime && sameObject(g.Envelope.Payload, s.payload) {
					used[i], found = true, true
					break
				}
			}
			if !found {
				t.Errorf("session %q: a %s payload was not stored as sent", sid, s.runtime)
			}
		}
		stored += len(got)
	}
	if stored != n {
		t.Errorf("stored %d of %d payloads", stored, n)
	}
}

// sameObject compares two payload objects by value.
func sameObject(a, b map[string]json.RawMessage) bool {
	norm := func(m map[string]json.RawMessage) any {
		j, _ := json.Marshal(m)
		var v any
		_ = json.Unmarshal(j, &v)
		return v
	}
	return reflect.DeepEqual(norm(a), norm(b))
}
