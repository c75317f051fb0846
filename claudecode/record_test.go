package claudecode

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// decodeRecordJSON is what decodeRecord replaced: json.Unmarshal into the
// record, and of the content into blocks. The reader must decode every line
// as it does.
func decodeRecordJSON(line []byte) (*TranscriptRecord, []TranscriptBlock, bool) {
	if !bytes.Contains(line, []byte(`"type":"assistant"`)) && !bytes.Contains(line, []byte(`"type":"user"`)) &&
		!bytes.Contains(line, []byte(`"type":"system"`)) && bytes.Contains(line, []byte(`"type":"`)) {
		return nil, nil, false
	}
	rec := new(TranscriptRecord)
	if json.Unmarshal(line, rec) != nil {
		return nil, nil, false
	}
	switch rec.Type {
	case "user", "assistant", "system":
	default:
		return nil, nil, false
	}
	var bs []TranscriptBlock
	if c := bytes.TrimSpace(rec.Message.Content); len(c) > 0 && c[0] == '[' {
		if json.Unmarshal(c, &bs) != nil {
			bs = nil
		}
	}
	return rec, bs, true
}

func checkDecodeRecord(t *testing.T, line []byte) {
	t.Helper()
	want, wantBlocks, wantOK := decodeRecordJSON(line)
	got, ok, _ := decodeRecord(line)
	if ok != wantOK {
		t.Fatalf("decodeRecord(%q) ok = %v, encoding/json %v", line, ok, wantOK)
	}
	if !ok {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeRecord(%q) =\n%+v\nencoding/json:\n%+v", line, got, want)
	}
	if blocks := got.Blocks(); !reflect.DeepEqual(blocks, wantBlocks) {
		t.Fatalf("Blocks of %q =\n%+v\nencoding/json:\n%+v", line, blocks, wantBlocks)
	}
	p, pok := got.Prompt()
	var wp string
	wpok := false
	if c := bytes.TrimSpace(want.Message.Content); want.Type == "user" && !want.IsMeta && !want.IsCompactSummary && len(c) > 0 && c[0] == '"' {
		wpok = json.Unmarshal(c, &wp) == nil
	}
	if p != wp || pok != wpok {
		t.Fatalf("Prompt of %q = %q, %v; encoding/json %q, %v", line, p, pok, wp, wpok)
	}
}

// recordCorpus returns the lines of the real client's transcripts in
// testdata, and lines that test the edges of encoding/json's decoding.
func recordCorpus(t testing.TB) [][]byte {
	paths, _ := filepath.Glob("../importer/testdata/*/projects/*/*.jsonl")
	subs, _ := filepath.Glob("../importer/testdata/*/projects/*/*/subagents/*.jsonl")
	var lines [][]byte
	for _, p := range append(paths, subs...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, bytes.Split(bytes.TrimSpace(b), []byte("\n"))...)
	}
	if len(lines) < 50 {
		t.Fatalf("only %d transcript lines in testdata", len(lines))
	}
	for _, s := range []string{
		`{"type":"user","uuid":7}`,
		`{"type":"user","UUID":"u","Message":{"Content":"hi","USAGE":null}}`,
		`{"type":"user","uuid":"a","uuid":"b","message":{"id":"x"},"message":{"role":"r"}}`,
		`{"type":"user","ſubtype":"s","\u212aey":1,"uu\u0069d":"esc"}`,
		`{"type":"user","message":null,"toolUseResult":null,"isMeta":null}`,
		`{"type":"user","message":"text"}`,
		`{"type":"user","isMeta":"yes"}`,
		`{"type":"user","isMeta":true,"message":{"content":"x"}}`,
		`{"type":"user","message":{"content":[null,{"type":"tool_result","is_error":true,"content":[{"type":"text","text":"e"}]}]}}`,
		`{"type":"user","message":{"content":[{"type":"text","text":3}]}}`,
		`{"type":"user","message":{"content":[1]}}`,
		`{"type":"user","message":{"content":  "pad\ud800"  }}`,
		`{"type":"assistant","message":{"usage":{"input_tokens":1.5}}}`,
		`{"type":"assistant","message":{"usage":{"input_tokens":3,"cache_creation":{"ephemeral_5m_input_tokens":2}},"usage":{"output_tokens":4}}}`,
		`{"type":"assistant","message":{"usage":{"input_tokens":3},"usage":null}}`,
		`{"type":"system","subtype":"compact_boundary","timestamp":"2026-01-01T00:00:00Z","x":[{"type":"user"}]}`,
		"{\"type\":\"user\",\"cwd\":\"\xff\xfe\"}",
		`{"type":"user"} trailing`,
		`["type":"user"]`,
		`{"type":"user","message":{"content":[{"type":"tool_use","input":{ "a" : [1, 2] }}]}}`,
		`{"type": "user", "uuid": "spaced", "message": {"content": [{"type": "text", "text": "t"}]}}`,
		`{"Type" : "assistant", "message" : {"usage" : {"input_tokens" : 2}}}`,
		`{"type": "progress", "data": {"type": "user"}}`,
		`not json at all`,
	} {
		lines = append(lines, []byte(s))
	}
	return lines
}

// TestDecodeRecordMatchesEncodingJSON: the reader decodes the real client's
// records, and hostile ones, as encoding/json does.
func TestDecodeRecordMatchesEncodingJSON(t *testing.T) {
	n := 0
	for _, line := range recordCorpus(t) {
		checkDecodeRecord(t, line)
		if _, ok, _ := decodeRecord(line); ok {
			n++
		}
	}
	if n < 50 {
		t.Fatalf("only %d records decoded", n)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	for _, line := range recordCorpus(f) {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkDecodeRecord(t, line)
	})
}
