package collector

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/privacy"
	"github.com/hookwatch/hookwatch/store"
)

// FuzzDecodeBatch feeds arbitrary bodies to the batch decoder and the
// validation behind it: they must never panic, a BatchError must name an
// envelope of the batch, and what passes must be storable. Once admitted,
// an envelope stored from the payload admission decoded is the one stored
// from its bytes.
func FuzzDecodeBatch(f *testing.F) {
	f.Add([]byte(`{"envelopes":[]}`))
	f.Add([]byte(`{"envelopes":[{"id":"0196f0a0-0000-7000-8000-000000000001","runtime":"claude-code","kind":"hook","received_at":"2026-11-21T15:00:00Z","payload":{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","agent_type":""}}]}`))
	f.Add([]byte(`{"envelopes":[{"id":"x","payload":{"a":"\xff"}},{"id":7}]}`))
	f.Add([]byte(`{"envelopes":[{"id":"x","received_at":"nope","payload":{}}]}`))
	f.Add([]byte(`{"envelopes":[{"id":"x","subagent":{"agentType":"Explore","spawnDepth":"deep"},"decision":{"x":1},"payload":{"cost":{}}}]}`))
	f.Add([]byte(`[{"envelopes":1}]`))
	f.Add([]byte(`{"envelopes":[null,[],"",1.5e999]}`))
	if b, err := os.ReadFile("../testdata/payloads/claude-code-2.1.197.jsonl"); err == nil && len(b) > 600 {
		f.Add([]byte(`{"envelopes":[{"id":"a","payload":` + string(b[:bytesToNewline(b)]) + `}]}`))
	}
	now := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		// The scan is only a faster way to what encoding/json decodes.
		if fast, ok := scanBatch(body); ok {
			slow, err := decodeBatch(json.NewDecoder(bytes.NewReader(body)))
			if err != nil || !reflect.DeepEqual(fast, slow) {
				t.Fatalf("the scan decoded %+v, encoding/json %+v (%v)", fast, slow, err)
			}
		}
		envs, err := DecodeBatch(bytes.NewReader(body))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		events, err := toEvents(envs, nil, now)
		if err != nil {
			var be *BatchError
			if !errors.As(err, &be) || be.Index < 0 || be.Index >= len(envs) {
				t.Fatalf("validation error %v does not name an envelope of %d", err, len(envs))
			}
			return
		}
		for _, e := range events {
			if !json.Valid(e.Envelope) || store.ValidateID(e.ID) != nil || e.Time.IsZero() {
				t.Fatalf("accepted an unstorable event %+v", e)
			}
		}
		pl := ingest.Pipeline{Privacy: privacy.DefaultOptions()}
		decoded := make([]*event.Payload, len(envs))
		for i := range envs {
			decoded[i] = pl.Admit(&envs[i])
		}
		fromBytes, err := toEvents(envs, nil, now)
		if err != nil {
			t.Fatalf("an admitted batch is refused: %v", err)
		}
		fromDecoded, err := toEvents(envs, decoded, now)
		if err != nil {
			t.Fatalf("an admitted batch is refused from its decoded payloads: %v", err)
		}
		for i := range fromBytes {
			if d := decoded[i]; d != nil {
				if want, err := event.Decode(fromBytes[i].Decoded.Payload); err != nil || !reflect.DeepEqual(d, want) {
					t.Fatalf("envelope %d: admission decoded %+v, the stored payload decodes to %+v (%v)", i, d, want, err)
				}
			}
			fromBytes[i].Payload, fromDecoded[i].Payload = nil, nil
			if !reflect.DeepEqual(fromBytes[i], fromDecoded[i]) {
				t.Fatalf("envelope %d: stored from its bytes\n%+v\nfrom its decoded payload\n%+v", i, fromBytes[i], fromDecoded[i])
			}
		}
	})
}

func bytesToNewline(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return len(b)
}

// FuzzSpaceCapReader holds spaceCapReader, read in pieces of any size, to
// the rule it implements, byte by byte over the whole input: runs of
// blanks outside strings are cut to maxSpaceRun, nothing else changes.
func FuzzSpaceCapReader(f *testing.F) {
	f.Add([]byte(`{"a": "x  \"  y\\"   ,  "b"   :1}`), uint8(3))
	f.Add([]byte(strings.Repeat(" ", 200)+`"`+strings.Repeat(" ", 200)+`\`), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, piece uint8) {
		var want []byte
		inString, escaped, run := false, false, 0
		for _, c := range in {
			switch {
			case inString:
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
				}
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
				run++
				if run > maxSpaceRun {
					continue
				}
			default:
				run = 0
				inString = c == '"'
			}
			want = append(want, c)
		}
		r := &spaceCapReader{r: &pieceReader{b: in, n: int(piece)%17 + 1}}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read %q (%v), want %q", got, err, want)
		}
	})
}

// pieceReader reads b at most n bytes at a time.
type pieceReader struct {
	b []byte
	n int
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[k:]
	return k, nil
}
