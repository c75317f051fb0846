package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/internal/modeled"
)

// cancelOnWrite is a stdout that cancels the command's context once it has
// printed its first line: a Ctrl-C between two sessions.
type cancelOnWrite struct {
	bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	defer w.cancel()
	return w.Buffer.Write(p)
}

// TestExportInterrupted: an export a signal stops between two sessions
// exits 130, saying how many sessions it wrote, and keeps nothing of the
// one it was writing.
func TestExportInterrupted(t *testing.T) {
	db := exportDB(t)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout := &cancelOnWrite{cancel: cancel}
	var stderr bytes.Buffer
	err := run(ctx, []string{"export", "--since", "2026-11-21", "--out", out, "--db", db}, nil, stdout, &stderr)
	var msg strings.Builder
	if code := exitCode(err, &msg); code != 130 {
		t.Fatalf("export stopped after its first session: %v, exit status %d, want 130", err, code)
	}
	if strings.Count(stdout.String(), "\n") != 1 {
		t.Fatalf("export stopped after its first session printed %q, want its one line", stdout.String())
	}
	want := "hookwatch: interrupted: export incomplete: 1 of 3 sessions written under " + out + " ("
	if !strings.HasPrefix(msg.String(), want) || !strings.Contains(msg.String(), "events) before the stop; session ") ||
		!strings.HasSuffix(msg.String(), " was in progress: nothing of it kept\n") {
		t.Fatalf("export stopped after its first session said %q, want %q…", msg.String(), want)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Fatalf("export stopped after its first session left %d session directories, want 1", len(entries))
	}
}

// TestExportOTLPSignal: Ctrl-C (a real SIGINT to the process) while the
// receiver has not answered ends the export with exit status 130 and a
// line saying none of its session was sent whole, not exit status 0;
// SIGTERM (a service manager's, timeout's) with 143, as a shell reports it.
func TestExportOTLPSignal(t *testing.T) {
	for _, c := range []struct {
		sig  os.Signal
		code int
	}{{os.Interrupt, 130}, {syscall.SIGTERM, 143}} {
		t.Run(c.sig.String(), func(t *testing.T) { exportOTLPSignal(t, c.sig, c.code) })
	}
}

func exportOTLPSignal(t *testing.T, sig os.Signal, code int) {
	envs := demo.Big(demo.BigSpec{SessionID: "export-sigint", Start: time.Now().Add(-time.Hour), Events: 200, Agents: 2, Ended: true, Seed: 9})
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	if err := modeled.Store(context.Background(), path, envs, time.Minute); err != nil {
		t.Fatal(err)
	}
	asked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		once.Do(func() { close(asked) })
		select { // a receiver that hangs
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "export", "--format", "otlp", "--session", "export-sigint", "--db", path, "--otlp-endpoint", srv.URL)
	cmd.Env = append(os.Environ(), "HOOKWATCH_TEST_MAIN=1", "HOOKWATCH_HOME="+t.TempDir(), "HOOKWATCH_OTLP_HEADERS=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the export sent nothing in 30 s; stderr:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != code {
		t.Fatalf("export after %v: %v, want exit status %d; stderr:\n%s", sig, err, code, stderr.String())
	}
	want := "hookwatch: interrupted: export incomplete: 0 of 1 session sent to " + srv.URL + "/v1/traces (0 spans) before the stop; session export-sigint was in progress"
	if !strings.HasPrefix(stderr.String(), want) || stdout.Len() != 0 {
		t.Fatalf("export after %v: stdout %q, stderr %q, want %q…", sig, stdout.String(), stderr.String(), want)
	}
}

// TestImportInterrupted: an import a signal stops while the collector
// takes its records exits 130, saying what it imported before the stop;
// the files it finished are kept as imported.
func TestImportInterrupted(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "home"))
	projects := filepath.Join(dir, "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	posts := 0
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/healthz":
		case r.Method == http.MethodPost && r.URL.Path == "/v1/events":
			io.Copy(io.Discard, r.Body)
			mu.Lock()
			posts++
			first := posts == 1
			mu.Unlock()
			if first {
				w.Write([]byte(`{}`))
				return
			}
			cancel() // Ctrl-C while the collector takes the second batch
			select {
			case <-r.Context().Done():
			case <-release:
			}
		default:
			http.NotFound(w, r) // a collector that has none of the sessions
		}
	}))
	defer srv.Close()
	defer close(release)
	t.Setenv("HOOKWATCH_URL", srv.URL)
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"import", "--no-start", projects}, nil, &stdout, &stderr)
	var msg strings.Builder
	if code := exitCode(err, &msg); code != 130 {
		t.Fatalf("import stopped at its second batch: %v, exit status %d, want 130", err, code)
	}
	want := "hookwatch: interrupted: import incomplete: "
	if !strings.HasPrefix(msg.String(), want) || !strings.Contains(msg.String(), " of 3 files before the stop; hookwatch import again goes on from there\n") || stdout.Len() != 0 {
		t.Fatalf("import stopped at its second batch: stdout %q, said %q, want %q…", stdout.String(), msg.String(), want)
	}
}
