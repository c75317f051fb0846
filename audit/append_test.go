package audit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/audit"
)

// TestAppendEqualsWrite writes each real capture's trail twice: at once
// (WriteStored, WriteToolCalls), and record by record with AppendEvent and
// AppendToolCall, flushed every few records, a WriteEvents now and then in
// between, one session open at a time (so that opening the next writes the
// pending lines of the last), the calls given twice. Both trails must be
// byte for byte the same.
func TestAppendEqualsWrite(t *testing.T) {
	for _, c := range loadCaptures(t) {
		t.Run(c.name, func(t *testing.T) {
			want := t.TempDir()
			writeTrail(t, c, want, audit.WriterOptions{})

			got := t.TempDir()
			w, err := audit.NewWriter(got, audit.WriterOptions{MaxOpenSessions: 1})
			if err != nil {
				t.Fatal(err)
			}
			outputs := audit.Outputs{}
			for i := range c.events {
				outputs.Add(&c.events[i])
				r, err := audit.EventOf(&c.events[i])
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case i%11 == 10:
					err = w.WriteEvents(r.SessionID, []audit.Event{r})
				case i%5 == 4:
					if err = w.AppendEvent(&r); err == nil {
						err = w.Flush()
					}
				default:
					err = w.AppendEvent(&r)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			n := 0
			for _, s := range c.model.Sessions {
				for _, tc := range s.ToolCalls {
					rec := audit.ToolCallOf(tc, outputs[tc.ToolUseID])
					for range 2 { // the second is skipped
						if err := w.AppendToolCall(&rec); err != nil {
							t.Fatal(err)
						}
					}
					n++
				}
			}
			if n == 0 {
				t.Fatal("no tool calls")
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			sameTrees(t, want, got)
		})
	}
}

// sameTrees fails unless every file under want is in got with the same
// bytes, and got has no other file.
func sameTrees(t *testing.T, want, got string) {
	t.Helper()
	files := 0
	filepath.WalkDir(want, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(want, path)
		a, _ := os.ReadFile(path)
		b, err := os.ReadFile(filepath.Join(got, rel))
		if err != nil || string(a) != string(b) {
			t.Errorf("%s: differs (%v)", rel, err)
		}
		files++
		return nil
	})
	others := -files
	filepath.WalkDir(got, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			others++
		}
		return err
	})
	if files == 0 || others != 0 {
		t.Errorf("%d files, %d more in the appended trail", files, others)
	}
}

// TestNewWriterOnAFile: an audit directory that is a file is refused,
// named once.
func TestNewWriterOnAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "trail")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := audit.NewWriter(file, audit.WriterOptions{})
	if want := "cannot create the audit directory " + file + ": not a directory"; err == nil || err.Error() != want {
		t.Fatalf("NewWriter(a file) = %v, want %q", err, want)
	}
}

// TestAppendWriteFails: pending lines whose write fails are reported by
// Flush, once, and dropped, and the stream's chain goes on from its last
// written line; a session closed to open another reports its failed write
// at the next Flush.
func TestAppendWriteFails(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full to fail a write")
	}
	dir := t.TempDir()
	for _, s := range []string{"full", "full2"} {
		if err := os.Mkdir(filepath.Join(dir, s), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/full", filepath.Join(dir, s, audit.EventsFile)); err != nil {
			t.Fatal(err)
		}
	}
	w, err := audit.NewWriter(dir, audit.WriterOptions{MaxOpenSessions: 2})
	if err != nil {
		t.Fatal(err)
	}
	ev := func(session string, seq int64) *audit.Event {
		return &audit.Event{Schema: audit.EventSchema, SessionID: session, Seq: seq, Time: t0, Payload: []byte(`{}`)}
	}
	for seq := range int64(3) {
		if err := w.AppendEvent(ev("full", seq)); err != nil {
			t.Fatal(err)
		}
		if err := w.AppendEvent(ev("ok", seq)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err == nil {
		t.Fatal("a write to a full disk did not fail")
	}
	if err := w.Flush(); err != nil {
		t.Fatalf("the failed lines were kept: %v", err)
	}
	okFile := filepath.Join(dir, "ok", audit.EventsFile)
	if r := verifyOne(t, okFile); r.Problem != nil || r.Lines != 3 {
		t.Fatalf("the other session: %s", audit.Summary(r))
	}
	// "full2" takes the place of "full", whose pending line is written
	// then, and fails.
	if err := w.AppendEvent(ev("full", 3)); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendEvent(ev("ok", 3)); err != nil {
		t.Fatal(err)
	}
	// The error names the file once: "cannot write …: no space left on
	// device", not the write's own "write …:" again.
	full2 := filepath.Join(dir, "full2", audit.EventsFile)
	if err := w.WriteEvents("full2", []audit.Event{*ev("full2", 0)}); err == nil || strings.Count(err.Error(), full2) != 1 || !strings.HasPrefix(err.Error(), "cannot write "+full2+": ") {
		t.Fatalf("WriteEvents to a full disk: %v, want an error naming %s once", err, full2)
	}
	if err := w.Flush(); err == nil {
		t.Fatal("the failed write of a closed session was not reported")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if r := verifyOne(t, okFile); r.Problem != nil || r.Lines != 4 {
		t.Fatalf("the other session: %s", audit.Summary(r))
	}
}
