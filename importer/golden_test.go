package importer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/privacy"
)

var update = flag.Bool("update", false, "rewrite the golden envelopes of TestImportGolden")

// TestImportGolden: the envelopes imported from the real client's
// transcripts (parallel) and from the same records with large tool outputs,
// secrets, characters encoding/json escapes and blanks between tokens
// (edges) are byte for byte those of the golden files, which the importer
// wrote when it decoded records and encoded payloads with encoding/json:
// ids, fields, redaction and previews unchanged by the reader and encoder
// that replaced them. Both privacy defaults and full capture.
func TestImportGolden(t *testing.T) {
	full := privacy.DefaultOptions()
	full.Capture = privacy.CaptureFull
	for _, tc := range []struct {
		trees []string
		name  string
		opts  privacy.Options
	}{
		{[]string{"parallel"}, "parallel.default", privacy.DefaultOptions()},
		{[]string{"edges"}, "edges.default", privacy.DefaultOptions()},
		{[]string{"edges"}, "edges.full", full},
		{[]string{"edges"}, "edges.none", privacy.Options{}},
		// Two sessions, converted at once: delivered one after the other.
		{[]string{"parallel", "edges"}, "both.default", privacy.DefaultOptions()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var paths []string
			for _, tree := range tc.trees {
				paths = append(paths, filepath.Join("testdata", tree))
			}
			files, err := importer.Find(paths)
			if err != nil {
				t.Fatal(err)
			}
			// The goldens name the transcripts relative to this package
			// (Find makes them absolute, wherever the tree is).
			wd, err := os.Getwd()
			if err != nil {
				t.Fatal(err)
			}
			for i := range files {
				files[i].Path, _ = filepath.Rel(wd, files[i].Path)
				files[i].MainPath, _ = filepath.Rel(wd, files[i].MainPath)
			}
			var got bytes.Buffer
			n := 0
			_, err = importer.Run(context.Background(), files, importer.Options{
				Pipeline: &ingest.Pipeline{Origin: ingest.Origin{Host: "h", User: "u", Version: "test"}, Privacy: tc.opts},
				Deliver: func(_ context.Context, envs []event.Envelope) error {
					for _, e := range envs {
						b, err := json.Marshal(e)
						if err != nil {
							return err
						}
						got.Write(append(b, '\n'))
						n++
					}
					return nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if n < 50 {
				t.Fatalf("only %d envelopes", n)
			}
			path := filepath.Join("testdata", "golden", tc.name+".jsonl")
			if tc.name == "both.default" {
				// edges sorts first (Find orders by path)
				a, _ := os.ReadFile(filepath.Join("testdata", "golden", "edges.default.jsonl"))
				b, _ := os.ReadFile(filepath.Join("testdata", "golden", "parallel.default.jsonl"))
				path = filepath.Join(t.TempDir(), "both.jsonl")
				os.WriteFile(path, append(a, b...), 0o644)
			} else if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				g, w := bytes.Split(got.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
				for i := range min(len(g), len(w)) {
					if !bytes.Equal(g[i], w[i]) {
						t.Fatalf("envelope %d differs:\n got %s\nwant %s", i, g[i], w[i])
					}
				}
				t.Fatalf("%d envelope lines, want %d", len(g), len(w))
			}
		})
	}
}
