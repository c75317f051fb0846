package lines

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// got is one line as Next returned it, with the Offset after it.
type got struct {
	line string
	f    Flag
	off  int64
}

func (g got) String() string { return fmt.Sprintf("{%q %d %d}", g.line, g.f, g.off) }

// readAll reads src to its end with a Reader of the given buffer size and
// max, from Reset or ResumeLong as resume says.
func readAll(t testing.TB, src io.Reader, size, max int, resume bool) ([]got, *Reader) {
	t.Helper()
	r := NewReader(src, size, max)
	if resume {
		r.ResumeLong()
	}
	var out []got
	for {
		line, f, err := r.Next()
		if err == io.EOF {
			return out, r
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if f&Long != 0 && line != nil {
			t.Fatalf("Long line returned with %d bytes", len(line))
		}
		out = append(out, got{string(line), f, r.Offset()})
	}
}

// reference splits in as Next should: at each '\n', a line longer than max
// Long, the bytes after the last '\n' Unterminated.
func reference(in string, max int) []got {
	var out []got
	off := int64(0)
	for {
		i := strings.IndexByte(in, '\n')
		if i < 0 {
			break
		}
		off += int64(i + 1)
		if i > max {
			out = append(out, got{"", Long, off})
		} else {
			out = append(out, got{in[:i], 0, off})
		}
		in = in[i+1:]
	}
	switch {
	case len(in) > max:
		out = append(out, got{"", Long | Unterminated, off})
	case len(in) > 0:
		out = append(out, got{in, Unterminated, off})
	}
	return out
}

func equal(a, b []got) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestNext(t *testing.T) {
	long := strings.Repeat("x", 40)
	for _, tc := range []struct {
		name, in string
		max      int
		want     []got
	}{
		{"empty", "", 10, nil},
		{"one line", "abc\n", 10, []got{{"abc", 0, 4}}},
		{"empty lines", "\n\na\n", 10, []got{{"", 0, 1}, {"", 0, 2}, {"a", 0, 4}}},
		{"unterminated", "abc\nde", 10, []got{{"abc", 0, 4}, {"de", Unterminated, 4}}},
		{"exactly max", "0123456789\n", 10, []got{{"0123456789", 0, 11}}},
		{"one past max", "0123456789a\nb\n", 10, []got{{"", Long, 12}, {"b", 0, 14}}},
		{"longer than the buffer", long + "\nb\n", 10, []got{{"", Long, 41}, {"b", 0, 43}}},
		{"longer than the buffer, kept", long + "\nb\n", 64, []got{{long, 0, 41}, {"b", 0, 43}}},
		{"long unterminated", "a\n" + long, 10, []got{{"a", 0, 2}, {"", Long | Unterminated, 2}}},
		{"long unterminated, kept", "a\n" + long, 64, []got{{"a", 0, 2}, {long, Unterminated, 2}}},
		{"unbounded", long + "\n", Unbounded, []got{{long, 0, 41}}},
		{"carriage return kept", "a\r\n", 10, []got{{"a\r", 0, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, r := readAll(t, strings.NewReader(tc.in), 16, tc.max, false)
			if !equal(out, tc.want) {
				t.Errorf("got %v, want %v", out, tc.want)
			}
			if r.Consumed() != int64(len(tc.in)) {
				t.Errorf("Consumed = %d, want %d", r.Consumed(), len(tc.in))
			}
			if !equal(tc.want, reference(tc.in, tc.max)) {
				t.Errorf("reference disagrees: %v", reference(tc.in, tc.max))
			}
		})
	}
}

// TestResumeLong reads a Long line's start, then its rest from Consumed.
func TestResumeLong(t *testing.T) {
	in := strings.Repeat("x", 40) + "\nok\n"
	first, r := readAll(t, strings.NewReader(in[:30]), 16, 10, false)
	if want := []got{{"", Long | Unterminated, 0}}; !equal(first, want) {
		t.Fatalf("first read: got %v, want %v", first, want)
	}
	rest, _ := readAll(t, strings.NewReader(in[r.Consumed():]), 16, 10, true)
	if want := []got{{"", Long, 11}, {"ok", 0, 14}}; !equal(rest, want) {
		t.Errorf("resumed: got %v, want %v", rest, want)
	}
	// Nothing more of the line yet: nothing to report, not even Long.
	none, _ := readAll(t, strings.NewReader(""), 16, 10, true)
	if len(none) != 0 {
		t.Errorf("resumed on nothing: got %v", none)
	}
}

// TestError checks that an error of the input is returned, again on the
// next call, with Offset at the start of the line it cut.
func TestError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("a\nbc"), iotest.ErrReader(boom)), 16, 10)
	if line, _, err := r.Next(); err != nil || string(line) != "a" {
		t.Fatalf("Next = %q, %v", line, err)
	}
	for range 2 {
		if _, _, err := r.Next(); err != boom {
			t.Fatalf("Next: err = %v, want %v", err, boom)
		}
	}
	if r.Offset() != 2 || r.Consumed() != 2 {
		t.Errorf("Offset, Consumed = %d, %d, want 2, 2", r.Offset(), r.Consumed())
	}
}

// TestReset reuses a Reader: offsets and the state of a Long line start
// again.
func TestReset(t *testing.T) {
	r := NewReader(strings.NewReader(strings.Repeat("x", 40)), 16, 10)
	r.ResumeLong()
	if _, f, _ := r.Next(); f != Long|Unterminated {
		t.Fatalf("flags = %v", f)
	}
	r.Reset(strings.NewReader("a\n"))
	line, f, err := r.Next()
	if string(line) != "a" || f != 0 || err != nil || r.Offset() != 2 {
		t.Errorf("after Reset: %q, %v, %v, offset %d", line, f, err, r.Offset())
	}
}

// TestBufioSource reads through a *bufio.Reader that already holds part of
// the input: the Reader reads from it, as from any source, rather than
// from a copy of its state that would leave it stale.
func TestBufioSource(t *testing.T) {
	br := bufio.NewReaderSize(strings.NewReader("skip\na\nb\n"), 64)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	out, _ := readAll(t, br, 16, 10, false)
	if want := []got{{"a", 0, 2}, {"b", 0, 4}}; !equal(out, want) {
		t.Errorf("got %v, want %v", out, want)
	}
	if n := br.Buffered(); n != 0 {
		t.Errorf("the source still holds %d bytes the Reader read", n)
	}
}

// chunked returns at most n bytes per Read, as a pipe or a growing file
// may.
type chunked struct {
	r io.Reader
	n int
}

func (c chunked) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// FuzzLines holds the Reader to reference on any input, bound, buffer size
// and read size, and to it again when the input is read in two parts, the
// second from Offset (or from Consumed with ResumeLong after a Long
// Unterminated line), as a caller following a growing file does.
func FuzzLines(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), uint16(2), uint8(0), uint8(1), uint16(3))
	f.Add(bytes.Repeat([]byte("x\n"), 100), uint16(1), uint8(5), uint8(7), uint16(50))
	f.Add([]byte(strings.Repeat("y", 100)+"\nz"), uint16(20), uint8(0), uint8(3), uint16(60))
	f.Fuzz(func(t *testing.T, in []byte, max uint16, size, chunk uint8, cut uint16) {
		bufSize := 16 + int(size)
		n := 1 + int(chunk)
		want := reference(string(in), int(max))

		out, r := readAll(t, chunked{bytes.NewReader(in), n}, bufSize, int(max), false)
		if !equal(out, want) {
			t.Fatalf("max %d, buffer %d, reads of %d: got %v, want %v", max, bufSize, n, out, want)
		}
		if r.Consumed() != int64(len(in)) {
			t.Fatalf("Consumed = %d, want %d", r.Consumed(), len(in))
		}

		c := int(cut) % (len(in) + 1)
		first, r := readAll(t, chunked{bytes.NewReader(in[:c]), n}, bufSize, int(max), false)
		resume, from := false, r.Offset()
		var pending []got
		if k := len(first); k > 0 && first[k-1].f&Unterminated != 0 {
			if first[k-1].f&Long != 0 {
				resume, from = true, r.Consumed()
			}
			first, pending = first[:k-1], first[k-1:]
		}
		rest, _ := readAll(t, chunked{bytes.NewReader(in[from:]), n}, bufSize, int(max), resume)
		for i := range rest {
			rest[i].off += from
		}
		if resume && (len(rest) == 0 || rest[0].f == Long|Unterminated) {
			// Still inside the Long line, which started before from.
			rest = pending
		}
		if both := append(first, rest...); !equal(both, want) {
			t.Fatalf("max %d, buffer %d, reads of %d, cut at %d: got %v, want %v", max, bufSize, n, c, both, want)
		}
	})
}

// TestTrimCR: a "\r\n" ends a line as a '\n' does; the '\r' an
// Unterminated line ends with is its own.
func TestTrimCR(t *testing.T) {
	r := NewReader(strings.NewReader("a\r\nb\n\r\nc\r"), 16, 16)
	var got []string
	for {
		line, f, err := r.Next()
		if err != nil {
			break
		}
		got = append(got, string(TrimCR(line, f)))
	}
	if want := []string{"a", "b", "", "c\r"}; !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
}
