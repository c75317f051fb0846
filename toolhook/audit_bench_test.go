package toolhook

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/hookwatch/hookwatch/audit"
)

// BenchmarkCallAudited is BenchmarkCall with the audit trail on: each call
// is recorded by an AuditRecorder (privacy rules, previews, the audit
// encoder and hash chain) into a real audit directory, 64 calls a write:
// its tool_calls.jsonl line only, or with its two events.jsonl lines.
func BenchmarkCallAudited(b *testing.B) {
	benchmarkAudited(b, b.TempDir)
}

// BenchmarkCallAuditedTmpfs is BenchmarkCallAudited with the audit
// directory on tmpfs (/dev/shm): the same writes, without the disk's file
// system, whose cost on a machine others share depends on their writes.
func BenchmarkCallAuditedTmpfs(b *testing.B) {
	if fi, err := os.Stat("/dev/shm"); err != nil || !fi.IsDir() {
		b.Skip("no /dev/shm")
	}
	benchmarkAudited(b, func() string {
		dir, err := os.MkdirTemp("/dev/shm", "hookwatch-bench-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	})
}

func benchmarkAudited(b *testing.B, tempDir func() string) {
	input := map[string]any{"file_path": "/etc/hosts"}
	ctx := SpawnAgent(WithTask(context.Background(), "t1"), "a1", "worker")
	for _, events := range []bool{false, true} {
		for _, match := range []bool{false, true} {
			w, err := audit.NewWriter(tempDir(), audit.WriterOptions{UniqueCalls: true})
			if err != nil {
				b.Fatal(err)
			}
			rec := NewAuditRecorder(w, AuditOptions{NoEvents: !events})
			x := &Executor{Registry: tenMatchers(b, match), Tools: map[string]Tool{"Read": read}, Recorder: rec, SessionID: "bench"}
			b.Run(fmt.Sprintf("10-matchers/matching=%v/events=%v", match, events), func(b *testing.B) {
				b.ReportAllocs()
				defer reportCPU(b)()
				for b.Loop() {
					sink, _ = x.Call(ctx, "Read", input)
				}
				if err := rec.Flush(); err != nil {
					b.Fatal(err)
				}
			})
			w.Close()
		}
	}
}

// BenchmarkCallForwarded is BenchmarkCall with a Forwarder sending each
// call to a server that takes every batch; CPU time includes the
// Forwarder's goroutine making and sending the envelopes.
func BenchmarkCallForwarded(b *testing.B) {
	input := map[string]any{"file_path": "/etc/hosts"}
	ctx := SpawnAgent(WithTask(context.Background(), "t1"), "a1", "worker")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	reg := tenMatchers(b, true)
	b.Run("10-matchers/matching=true", func(b *testing.B) {
		fw, err := NewForwarder(ForwardOptions{URL: srv.URL, QueueSize: 1 << 20})
		if err != nil {
			b.Fatal(err)
		}
		x := &Executor{Registry: reg, Tools: map[string]Tool{"Read": read}, Recorder: fw, SessionID: "bench"}
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			sink, _ = x.Call(ctx, "Read", input)
		}
		if err := fw.Close(); err != nil || fw.Dropped() != 0 {
			b.Fatalf("%v, %d dropped", err, fw.Dropped())
		}
	})
}
