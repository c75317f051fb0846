package hook

import (
	"bytes"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// pipe returns a real pipe: its read end blocking, as an agent usually
// hands stdin over, or non-blocking, as os.Pipe makes it.
func pipe(t *testing.T, blocking bool) (r, w *os.File) {
	t.Helper()
	if !blocking {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		return r, w
	}
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// TestReadPayloadPipe: stdin read from a real pipe, blocking or not, is
// the whole of what the writer wrote in pieces, past the first buffer; a
// pipe left open ends the read at the deadline, as a payload cut short.
func TestReadPayloadPipe(t *testing.T) {
	for _, blocking := range []bool{true, false} {
		r, w := pipe(t, blocking)
		want := append([]byte(`{"x":"`), bytes.Repeat([]byte("y"), 3*firstBufBytes)...)
		want = append(want, `"}`...)
		// The writer is passed in: w is the next pipe's below, and the
		// end of this one's read orders nothing the race detector sees.
		go func(w *os.File) {
			w.Write(want[:100])
			time.Sleep(20 * time.Millisecond)
			w.Write(want[100:])
			w.Close()
		}(w)
		got, err := readPayload(r, time.Now().Add(time.Minute))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("blocking %v: read %d bytes, %v; want the %d written", blocking, len(got), err, len(want))
		}

		r, w = pipe(t, blocking)
		w.Write(want[:100]) // and never closed
		if _, err := readPayload(r, time.Now().Add(100*time.Millisecond)); !errors.Is(err, errCutShort) {
			t.Errorf("blocking %v, stdin left open: %v, want a payload cut short", blocking, err)
		}
	}
}

// TestReadPayloadClosedStdin: a stdin closed before the hook read it is an
// error, not a wait.
func TestReadPayloadClosedStdin(t *testing.T) {
	r, _ := pipe(t, true)
	r.Close()
	if _, err := readPayload(r, time.Now().Add(time.Minute)); err == nil {
		t.Error("read a closed stdin without an error")
	}
}
