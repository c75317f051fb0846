package privacy

import (
	"bytes"
	"testing"
)

// FuzzParseCaptured holds the scan of a capture object in Apply's shape to
// the reading of any shape through encoding/json: wherever the scan answers,
// parseCaptured answers what parseCapturedJSON does.
func FuzzParseCaptured(f *testing.F) {
	o := DefaultOptions()
	for _, l := range readLines(f, "testdata/payloads.jsonl") {
		b, _, _, _ := previewObject([]byte(l), o)
		f.Add([]byte(b), uint16(0))
		f.Add([]byte(noneObject("1234")), uint16(0))
	}
	for _, s := range []string{
		`{"hookwatch_capture":"preview","bytes":12,"head":"abc"}`,
		`{"hookwatch_capture":"preview","bytes":12,"head":"abc","tail":"\u00e9x"}`,
		`{"hookwatch_capture":"preview","bytes":12,"head":"abc","tail":"x","tail":"y"}`,
		`{"hookwatch_capture":"none","bytes":"12"}`,
		`{"hookwatch_capture":"none","bytes":012}`,
		`{"hookwatch_capture":"none","bytes":1e3}`,
		`{"hookwatch_capture":"none","bytes":99999999999999999999}`,
		`{"bytes":12,"hookwatch_capture":"none"}`,
		`{"hookwatch_capture":"none","bytes":12,"hookwatch_capture":"preview"}`,
		`{"hookwatch_capture":"none","bytes":"TOKEN=abc123","bytes":12}`,
		`{"hookwatch_capture":"none","byt\u0065s":"x","bytes":12}`,
		`{"hookwatch_capture":"n\u006fne","bytes":12}`,
		`{"hookwatch_capture" : "none" , "bytes" : 12 }`,
		`{"hookwatch_capture":"preview","bytes":12,"head":"` + "\xff" + `"}`,
		`{"hookwatch_capture":null,"bytes":12}`,
	} {
		f.Add([]byte(s), uint16(0))
		f.Add([]byte(s), uint16(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, preview uint16) {
		o := Options{Capture: CapturePreview, PreviewBytes: int(preview % 2048), Redact: true}
		tr := bytes.TrimSpace(in)
		if len(tr) == 0 {
			return
		}
		got, gotOK := parseCaptured(tr, o)
		var want captured
		wantOK := false
		if len(tr) <= maxCaptured && tr[0] == '{' && bytes.Contains(tr, []byte(`"`+captureKey+`"`)) {
			want, wantOK = parseCapturedJSON(tr, o)
		}
		if got != want || gotOK != wantOK {
			t.Fatalf("parseCaptured(%q) = %+v, %v; through encoding/json %+v, %v", tr, got, gotOK, want, wantOK)
		}
	})
}

// TestParseCapturedAsMade: the scan answers for the objects Apply makes,
// so that the collector does not read them through encoding/json.
func TestParseCapturedAsMade(t *testing.T) {
	o := DefaultOptions()
	for _, l := range readLines(t, "testdata/payloads.jsonl") {
		p := decode(t, l)
		Apply(p, o)
		v := p["tool_response"]
		if len(v) == 0 || string(v) == "null" {
			continue
		}
		if _, ok := parseCapturedAsMade(bytes.TrimSpace(v), o); !ok {
			t.Errorf("not recognised: %s", v)
		}
	}
	if _, ok := parseCapturedAsMade([]byte(noneObject("42")), o); !ok {
		t.Errorf("none object not recognised")
	}
}

// TestReadCapture: what ToolResponse says its preview object holds is what
// ReadCapture reads back from it, for every output of the real payloads and
// at every preview size; a capture of nothing reads as mode none; other
// objects do not read.
func TestReadCapture(t *testing.T) {
	n := 0
	for _, l := range readLines(t, "testdata/payloads.jsonl") {
		p := decode(t, l)
		raw, ok := p["tool_response"]
		if !ok {
			continue
		}
		for _, size := range []int{0, 3, 64, 1024} {
			v, head, tail, made := ToolResponse(raw, Options{Capture: CapturePreview, PreviewBytes: size, Redact: true})
			if !made {
				continue
			}
			n++
			c, ok := ReadCapture(v)
			if !ok || c.Mode != CapturePreview || c.Head != head || c.Tail != tail {
				t.Fatalf("ReadCapture(%s) = %+v, %v; ToolResponse made head %q, tail %q", v, c, ok, head, tail)
			}
		}
	}
	if n == 0 {
		t.Fatal("no preview was made")
	}
	if c, ok := ReadCapture(noneObject("12")); !ok || c.Mode != CaptureNone || c.Head != "" || c.Tail != "" {
		t.Errorf("the capture of nothing: %+v, %v", c, ok)
	}
	for _, s := range []string{``, `"x"`, `{"head":"h"}`, `{"hookwatch_capture":""}`, `{"hookwatch_capture":1}`,
		`{"hookwatch_capture":"preview","head":2}`, `{"HookWatch_Capture":"preview"}`, `{"hookwatch_capture":"preview"`} {
		if c, ok := ReadCapture([]byte(s)); ok {
			t.Errorf("ReadCapture(%s) = %+v: read as a capture", s, c)
		}
	}
}
