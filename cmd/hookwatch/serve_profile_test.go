package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/testbin"
)

// TestServeCPUProfile: a collector started with HOOKWATCH_CPU_PROFILE
// writes a CPU profile there, complete once it has stopped, readable by
// only its owner.
func TestServeCPUProfile(t *testing.T) {
	bin := testbin.Build(t, "./cmd/hookwatch")
	home := t.TempDir()
	path := filepath.Join(t.TempDir(), "serve.pprof")
	testbin.StartCollector(t, bin, home, "", "HOOKWATCH_WATCH_TRANSCRIPTS=off", envCPUProfile+"="+path).Stop(t)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("the profile's mode is %v, want 0600", perm)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("the profile is not pprof's (gzipped): %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("the profile is cut short: %v", err)
	}
	// pprof's string table names a CPU profile's sample types.
	for _, want := range []string{"samples", "cpu", "nanoseconds"} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("the profile names no %q: not a CPU profile", want)
		}
	}
}

// TestServeCPUProfileUnwritable: serve asked for a profile it cannot write
// says so and does not start.
func TestServeCPUProfileUnwritable(t *testing.T) {
	t.Setenv("HOOKWATCH_HOME", t.TempDir())
	t.Setenv(envCPUProfile, filepath.Join(t.TempDir(), "missing", "serve.pprof"))
	// Were the variable ignored, serve would run until the deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, nil, &out, &out)
	if err == nil || !strings.Contains(err.Error(), envCPUProfile) {
		t.Fatalf("serve with an unwritable profile: %v, want an error naming %s", err, envCPUProfile)
	}
}
