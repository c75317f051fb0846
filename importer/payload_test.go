package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/privacy"
)

// checkMarshalPayload compares marshalPayload with json.Marshal on a payload
// holding raw (valid JSON) and s as the importer's payloads hold them.
func checkMarshalPayload(t *testing.T, raw []byte, s string) {
	t.Helper()
	p := map[string]any{
		"hook_event_name": "PostToolUse", "tool_response": json.RawMessage(raw), "prompt": s,
		"stop_hook_active": false, "usage": &event.Usage{InputTokens: 3}, "tool_input": json.RawMessage(nil),
	}
	want, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := marshalPayload(p)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("marshalPayload(%q, %q) =\n%s, %v\njson.Marshal:\n%s", raw, s, got, err, want)
	}
}

func TestMarshalPayload(t *testing.T) {
	f := func(raw, s string) { t.Helper(); checkMarshalPayload(t, []byte(raw), s) }
	f(`null`, "")
	f(` { "a" : [ 1 , "x < y && z > w" ] ,"b":"\u2028\"\\"} `, "<b>&\u2028\u2029\x00\x7f\xff")
	f("{\"k\":\"\xe2\x80\xa8 \xe2\x80\xa9 \xe2\x80\xaa \xe2\x80\"}", "\t\n\r\b\f")
	f("[\"\\\\\", \"\\\"<\"]\n", `a"b\c`)
}

func FuzzMarshalPayload(f *testing.F) {
	f.Add([]byte(`{"stdout":"a < b && c\n","stderr":"", "x" : [1, 2.5e3, true, null]}`), "<x>")
	f.Add([]byte("\"\xe2\x80\xa8\xe2\x80\xa9\""), "\xe2\x80\xa8")
	f.Fuzz(func(t *testing.T, raw []byte, s string) {
		if !json.Valid(raw) {
			return // the importer's raw members are valid: jsonscan read them
		}
		checkMarshalPayload(t, raw, s)
	})
}

// checkCaptured compares the payload of a PostToolUse made from the tool
// output raw (valid JSON) the way the importer makes it — captured
// beforehand, then through the pipeline — with the one json.Marshal made
// before, through the same pipeline, under each capture mode.
func checkCaptured(t *testing.T, raw []byte) {
	t.Helper()
	full := privacy.DefaultOptions()
	full.Capture = privacy.CaptureFull
	none := privacy.DefaultOptions()
	none.Capture = privacy.CaptureNone
	for _, o := range []privacy.Options{privacy.DefaultOptions(), full, none, {}} {
		pl := &ingest.Pipeline{Origin: ingest.Origin{Host: "h", User: "u", Version: "test"}, Privacy: o}
		payload := func(resp any) map[string]any {
			return map[string]any{
				"hook_event_name": "PostToolUse", "session_id": "s", "transcript_path": "/t/s.jsonl", "cwd": "/w",
				"prompt_id": "p", "tool_name": "Bash", "tool_use_id": "toolu_1", "tool_response": resp,
			}
		}
		at := time.Unix(1e9, 0).UTC()
		old, err := json.Marshal(payload(json.RawMessage(raw)))
		if err != nil {
			t.Fatal(err)
		}
		want, err := pl.RunRecorded(context.Background(), old, "id", at, nil)
		if err != nil {
			t.Fatal(err)
		}
		data, err := marshalPayload(payload(captured(raw, o)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := pl.RunRecorded(context.Background(), data, "id", at, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Envelope.Payload, want.Envelope.Payload) {
			t.Fatalf("capture %v of %q:\n got %s\nwant %s", o.Capture, raw, got.Envelope.Payload, want.Envelope.Payload)
		}
	}
}

func captureSeeds() [][]byte {
	long := strings.Repeat("line <a> & b\t\"q\"\n", 1200)
	return [][]byte{
		[]byte(`null`),
		[]byte(`"ok"`),
		[]byte(`{"stdout":"AKIAIOSFODNN7EXAMPLE and <b>","stderr":"","interrupted":false}`),
		[]byte(`{"stdout":` + strconv.Quote(long+"token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"+long) + `}`),
		[]byte("{\"stdout\":\"bin \xff\xfe \xe2\x80\xa8 end\", \"x\" : [1, 2]}"),
		[]byte(`{"hookwatch_capture":"preview","bytes":12,"head":"abc"}`),
		[]byte(`{"type":"text","file":{"filePath":"/w/a.go","content":"package a\n\nfunc f() bool { return 1 < 2 && 3 > 2 }\n","numLines":3}}`),
	}
}

func TestCaptured(t *testing.T) {
	for _, raw := range captureSeeds() {
		checkCaptured(t, raw)
	}
}

func FuzzCaptured(f *testing.F) {
	for _, raw := range captureSeeds() {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // a tool's output is a member of a line jsonscan validated
		}
		checkCaptured(t, raw)
	})
}
