package otlp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestDocIDs runs the shell recipe of docs/otlp.md that computes a trace
// id and a tool call's span id, and checks it against TraceID and
// CallSpanID: a user finding a session's trace by hand must find it.
func TestDocIDs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "otlp.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- recipe: ids -->\n```sh\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("no recipe \"ids\" in docs/otlp.md")
	}
	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Skip("sha256sum is not installed")
	}
	for _, c := range []struct{ session, toolUseID string }{
		{"0e2e0b5d-7136-4322-8086-c38ed16b10ad", "toolu_01XyZ"},
		{"01a1fec1-d268-7292-b394-c2a0ea7d215e", "call_abc"},
	} {
		cmd := exec.Command("sh", "-c", string(m[1]))
		cmd.Env = append(os.Environ(), "SESSION="+c.session, "TOOL_USE_ID="+c.toolUseID)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", m[1], err)
		}
		want := fmt.Sprintf("%x\n%x\n", TraceID(c.session), CallSpanID(c.session, c.toolUseID))
		if got := string(out); got != want {
			t.Errorf("session %s, call %s: the recipe prints\n%s\nwant\n%s", c.session, c.toolUseID, out, want)
		}
	}
}
