package web_test

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/testbin"
)

// agentTreeSession is the session examples/agenttree records.
const agentTreeSession = "agenttree-demo"

// TestBrowserGoSDK runs examples/agenttree, an agent tree written in Go
// with package toolhook, forwarding its calls to a real collector, and
// checks in headless Chromium (e2e/sdk.test.mjs) that the dashboard shows
// that session's tree: seven agents on three levels, each under its
// parent, with its calls.
func TestBrowserGoSDK(t *testing.T) {
	node := browserTools(t)
	url := serve(t, nil, "")
	bin := testbin.Build(t, "./examples/agenttree")
	cmd := exec.Command(bin, "-collector", url, "-audit", filepath.Join(t.TempDir(), "audit"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("agenttree: %v\n%s", err, out)
	}
	// The model is derived in rounds after ingest.
	var body struct {
		Agents []struct{} `json:"agents"`
	}
	for deadline := time.Now().Add(15 * time.Second); len(body.Agents) != 7; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the collector has %d agents of %s, want 7", len(body.Agents), agentTreeSession)
		}
		testbin.GetJSON(t, url+"/v1/sessions/"+agentTreeSession+"/agents", &body)
	}
	t.Logf("%s", runNode(t, node, []string{"HOOKWATCH_URL=" + url, "HW_SDK=" + agentTreeSession}, "--test", "--test-reporter=spec", "sdk.test.mjs"))
}
