package serveproc_test

import (
	"bytes"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/serveproc"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

func TestStartAndStop(t *testing.T) {
	bin := testbin.Build(t, "./cmd/hookwatch")
	var out bytes.Buffer
	p, err := serveproc.Start(serveproc.Options{Bin: bin, Stdout: &out,
		Env: append(os.Environ(), "HOOKWATCH_HOME="+t.TempDir(), "HOOKWATCH_TOKEN=", "HOOKWATCH_DB=")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(p.URL() + "/healthz")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %v %v", res, err)
	}
	res.Body.Close()
	if err := p.Stop(time.Minute); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if !strings.Contains(out.String(), "listening on "+p.URL()) {
		t.Errorf("stdout %q does not name the address", out.String())
	}
	if _, err := http.Get(p.URL() + "/healthz"); err == nil {
		t.Error("still answering after Stop")
	}
	// Kill and Stop again after the exit return at once, as a test's
	// cleanup may call them.
	done := make(chan error, 1)
	go func() { p.Kill(); done <- p.Stop(time.Minute) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Stop after the exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Kill after Stop blocks")
	}
}

func TestStartFailsWhenServeExits(t *testing.T) {
	// A binary that exits at once never answers: each of the three
	// attempts sees it exit, and the error says so.
	_, err := serveproc.Start(serveproc.Options{Bin: "/bin/false", Healthy: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "exited before answering /healthz") {
		t.Fatalf("Start of /bin/false: %v", err)
	}
}
