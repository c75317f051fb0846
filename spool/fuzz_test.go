package spool

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hookwatch/hookwatch/internal/lines"
)

// readAll returns the records readSegment finds in data and its corrupt count.
func readAll(t *testing.T, data []byte) ([][]byte, int64) {
	t.Helper()
	var out [][]byte
	corrupt, err := readSegment(bytes.NewReader(data), func(rec []byte) error {
		out = append(out, slices.Clone(rec))
		return nil
	})
	if err != nil {
		t.Fatalf("readSegment(%q): %v", data, err)
	}
	return out, corrupt
}

// readPartial returns the records readLines finds in data as a Tail reads,
// leaving a last line without its '\n', with its corrupt and consumed counts.
func readPartial(t *testing.T, data []byte) ([][]byte, int64, int64) {
	t.Helper()
	var out [][]byte
	corrupt, consumed, err := readLines(lines.NewReader(bytes.NewReader(data), 4096, MaxRecordBytes), true, func(rec []byte, end, _ int64) error {
		if end > int64(len(data)) || data[end-1] != '\n' {
			t.Fatalf("record %q ends at %d, not past a '\\n'", rec, end)
		}
		out = append(out, slices.Clone(rec))
		return nil
	})
	if err != nil {
		t.Fatalf("readLines(%q): %v", data, err)
	}
	return out, corrupt, consumed
}

// FuzzReadSegment feeds the segment reader arbitrary bytes. It must not fail
// or panic; it must return only valid JSON without '\n', never more records
// and corrupt lines than there are lines; and whatever bytes precede it (a
// torn write, garbage), a record appended after them must come back intact:
// that is what makes a crash cost at most the torn record.
func FuzzReadSegment(f *testing.F) {
	paths, _ := filepath.Glob("testdata/segments/*.jsonl")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("\n{\"a\":1}\n\n{\"b\":[1,2,{}]}\n"))
	f.Add([]byte("{\"a\":1}\r\n{\"a\":"))
	f.Add(bytes.Repeat([]byte("["), 20000))
	f.Add([]byte("\xff\x00\n\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		records, corrupt := readAll(t, data)
		for _, r := range records {
			if len(r) == 0 || bytes.IndexByte(r, '\n') >= 0 || !json.Valid(r) {
				t.Fatalf("readSegment returned a bad record %q", r)
			}
		}
		if lines := int64(bytes.Count(data, []byte{'\n'}) + 1); int64(len(records))+corrupt > lines {
			t.Fatalf("%d records and %d corrupt lines out of %d lines", len(records), corrupt, lines)
		}

		sentinel := []byte(`{"id":"after"}`)
		after, _ := readAll(t, append(slices.Clone(data), frame([][]byte{sentinel})...))
		if len(after) == 0 || !bytes.Equal(after[len(after)-1], sentinel) {
			t.Fatalf("record appended after %q was not read back: got %q", data, after)
		}
		// The earlier records are unchanged; at most one more may appear,
		// a line the appended '\n' completed.
		if n := len(after) - 1 - len(records); n < 0 || n > 1 || !slices.EqualFunc(after[:len(records)], records, bytes.Equal) {
			t.Fatalf("appending changed the earlier records: %q, then %q", records, after)
		}

		// Read as a Tail reads a segment still being written, in two passes
		// split anywhere: the second starts where the first consumed, and
		// together they find what one pass over the whole finds.
		whole, wholeCorrupt, wholeConsumed := readPartial(t, data)
		k := len(data) / 2
		if len(data) > 0 {
			k = int(data[0]) % (len(data) + 1)
		}
		first, c1, consumed := readPartial(t, data[:k])
		if consumed > int64(k) || consumed > 0 && data[consumed-1] != '\n' {
			t.Fatalf("consumed %d of %q: not the end of a line", consumed, data[:k])
		}
		second, c2, consumed2 := readPartial(t, data[consumed:])
		if got := slices.Concat(first, second); !slices.EqualFunc(got, whole, bytes.Equal) || c1+c2 != wholeCorrupt || consumed+consumed2 != wholeConsumed {
			t.Fatalf("split at %d: %q + %q (%d+%d corrupt, consumed %d+%d), want %q (%d, %d)", k, first, second, c1, c2, consumed, consumed2, whole, wholeCorrupt, wholeConsumed)
		}

		// An error from fn stops the read and comes back as is.
		if len(records) > 0 {
			stop := errors.New("stop")
			calls := 0
			_, err := readSegment(bytes.NewReader(data), func([]byte) error { calls++; return stop })
			if err != stop || calls != 1 {
				t.Fatalf("readSegment with a failing fn: %v after %d calls", err, calls)
			}
		}
	})
}

// FuzzAppendRoundTrip: whatever records Append accepts, a drain gives back
// byte for byte, in order.
func FuzzAppendRoundTrip(f *testing.F) {
	f.Add([]byte(`{"a":1}`), []byte(`[1,"x"]`), []byte(`"s"`))
	f.Add([]byte(`{"a":"\u2028"}`), []byte(" {} "), []byte("{}\r"))
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		var valid [][]byte
		for _, r := range [][]byte{a, b, c} {
			if checkRecord(r) == nil && json.Valid(r) {
				valid = append(valid, r)
			}
		}
		got, corrupt := readAll(t, slices.Concat(frame(valid), frame(valid[min(1, len(valid)):])))
		want := slices.Concat(valid, valid[min(1, len(valid)):])
		if corrupt != 0 || !slices.EqualFunc(got, want, bytes.Equal) {
			t.Fatalf("read back %q (%d corrupt), want %q", got, corrupt, want)
		}
	})
}
