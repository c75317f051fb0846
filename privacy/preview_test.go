package privacy

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/internal/jsonstr"
	"github.com/hookwatch/hookwatch/internal/secrettest"
	"github.com/hookwatch/hookwatch/redact"
)

// TestPreviewObjectRedaction holds previewObject's redaction of its head
// and tail alone to redact.JSON of the whole object, pass after pass, as it
// was written: for tool outputs of the real captures and of the test
// payloads, and for every secret sample around the cut of a preview, with
// budgets that cut them.
func TestPreviewObjectRedaction(t *testing.T) {
	var values [][]byte
	add := func(line string) {
		var p map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &p) == nil {
			for _, v := range p {
				values = append(values, v)
			}
		}
	}
	for _, p := range corpus.Load(t) {
		add(string(p.JSON))
	}
	for _, l := range secrets() {
		add(l)
	}
	for _, s := range secrettest.Samples() {
		for _, l := range secrettest.Literals {
			for _, pad := range []int{0, 5, 37, 300} {
				text := string(bytes.Repeat([]byte("x"), pad)) + " " + s.Text + "\n" + s.Text + " done"
				values = append(values, []byte(l.Lit(text)), []byte(`{"stdout":`+l.Lit(text)+`,"code":1}`))
			}
		}
	}
	changed := 0
	for _, raw := range values {
		for _, budget := range []int{0, 7, 40, 64, 100, 333} {
			o := Options{Capture: CapturePreview, PreviewBytes: budget, Redact: true}
			b, head, tail, ok := previewObject(raw, o)
			want := []byte(`{"` + captureKey + `":"preview","bytes":` + strconv.Itoa(len(raw)) + `,"head":`)
			want = jsonstr.AppendQuoted(want, head)
			if tail != "" {
				want = jsonstr.AppendQuoted(append(want, `,"tail":`...), tail)
			}
			want = append(want, '}')
			unchanged := true
			for pass := 0; pass < 4; pass++ {
				r, n := redact.JSON(want)
				if n == 0 {
					break
				}
				want, unchanged = r, false
			}
			if !bytes.Equal(b, want) || ok != unchanged {
				t.Fatalf("preview of %.200s with %d bytes:\n%s (ok %v)\nwhole object redacted:\n%s", raw, budget, b, ok, want)
			}
			if !ok {
				changed++
			}
		}
	}
	t.Logf("%d values, %d previews changed by the second redaction", len(values), changed)
	if changed == 0 {
		t.Fatal("no preview was changed by its second redaction: the comparison is not exercised")
	}
}
