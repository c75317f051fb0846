package codex

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

// FuzzDecodeRecord holds DecodeRecord and DecodeMeta to what
// encoding/json reads of the same line (of a session_meta, of the members
// it reads), keys written in another case aside (encoding/json matches
// them, they do not).
func FuzzDecodeRecord(f *testing.F) {
	files, _ := filepath.Glob("testdata/rollout-*.jsonl")
	sub, _ := filepath.Glob("rollout/testdata/rollout-*.jsonl")
	files = append(files, sub...)
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			f.Add(l)
		}
	}
	for _, s := range []string{`{"type":null,"ordinal":null,"payload":null}`, `{"ordinal":3,"ordinal":null}`, `{"type":5}`, `{"timestamp":"x"}`,
		`{"type":"session_meta","payload":{"id":"a","id":null,"cwd":7}}`, `{"type":"session_meta","payload":[1]}`, `{"type":"session_meta","payload":"s"}`,
		`{"type":"session_meta","payload":{"source":{"subagent":null},"session_id":"\u00e9\ud800"}}`,
		`{"type":"session_meta","payload":{"forked_from_id":1}}`, `{"type":"session_meta","payload":{"forked_from_id":null,"forked_from_id":"p"}}`,
		`{"type":"session_meta","payload":{"agent_nickname":["M"]}}`, `{"type":"session_meta","payload":{"agent_nickname":"M","agent_nickname":null}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var want Record
		wantOK := json.Unmarshal(line, &want) == nil
		if otherCase(line, "timestamp", "ordinal", "type", "payload") {
			return
		}
		got, ok := DecodeRecord(line)
		// A record without a payload is no record to Record: "null" is
		// one to encoding/json, not to DecodeRecord.
		wantOK, ok = wantOK && want.Payload != nil, ok && got.Payload != nil
		if ok != wantOK {
			t.Fatalf("DecodeRecord ok %v, encoding/json %v", ok, wantOK)
		}
		if !ok {
			return
		}
		if !got.Timestamp.Equal(want.Timestamp) || got.Type != want.Type || !bytes.Equal(got.Payload, want.Payload) ||
			(got.Ordinal == nil) != (want.Ordinal == nil) || got.Ordinal != nil && *got.Ordinal != *want.Ordinal {
			t.Fatalf("DecodeRecord %+v, encoding/json %+v", got, want)
		}
		if otherCase(got.Payload, "id", "session_id", "cwd", "parent_thread_id", "forked_from_id", "source", "agent_nickname") {
			return
		}
		var wi Meta
		wiOK := json.Unmarshal(got.Payload, &wi) == nil
		gi, giOK := DecodeMeta(got.Payload)
		if wiOK != giOK {
			t.Fatalf("DecodeMeta ok %v, encoding/json %v", giOK, wiOK)
		}
		if giOK && (gi.ID != wi.ID || gi.SessionID != wi.SessionID || gi.CWD != wi.CWD || gi.Parent != wi.Parent ||
			gi.ForkedFrom != wi.ForkedFrom || !bytes.Equal(gi.Source, wi.Source) || gi.Nickname != wi.Nickname) {
			t.Fatalf("DecodeMeta %+v, encoding/json %+v", gi, wi)
		}
	})
}

// otherCase reports whether the JSON object data has a key that
// encoding/json takes for one of keys but is not written as it.
func otherCase(data []byte, keys ...string) bool {
	found := false
	_, _ = jsonscan.Members(data, func(key, _ []byte) {
		k := string(jsonscan.Name(key))
		for _, want := range keys {
			found = found || k != want && strings.EqualFold(k, want)
		}
	})
	return found
}
