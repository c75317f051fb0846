package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestEncodingRoundTrips decodes every golden line into its record type
// (by the fields' JSON tags) and appends it again: the same bytes, so the
// hand-written encoding names, orders and writes every field as the tags
// and the schema say.
func TestEncodingRoundTrips(t *testing.T) {
	chain := regexp.MustCompile(`,"line":\d+,"prev":"[0-9a-f]*","hash":"[0-9a-f]{64}"\}$`)
	n := 0
	err := filepath.WalkDir(filepath.Join("testdata", "golden"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var rec record = &Event{}
			if filepath.Base(path) == ToolCallsFile {
				rec = &ToolCall{}
			}
			dec := json.NewDecoder(bytes.NewReader(chain.ReplaceAll(line, []byte("}"))))
			dec.DisallowUnknownFields()
			if err := dec.Decode(rec); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			want := chain.ReplaceAll(line, []byte("}"))
			if got := rec.appendJSON(nil); !bytes.Equal(got, want) {
				t.Fatalf("%s: appended again\n%s\nwant\n%s", path, got, want)
			}
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 300 {
		t.Fatalf("only %d lines", n)
	}
}
