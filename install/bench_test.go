package install

import (
	"os"
	"testing"
)

// BenchmarkInstall measures install and uninstall of a realistic file in
// memory (no file system).
func BenchmarkInstall(b *testing.B) {
	in, err := os.ReadFile("testdata/same-events/settings.json")
	if err != nil {
		b.Fatal(err)
	}
	o := Options{Binary: testBinary, Statusline: true}
	var notes []string
	for b.Loop() {
		s, _ := parse(in, "settings.json")
		out, err := s.install(o, &notes)
		if err != nil {
			b.Fatal(err)
		}
		s2, _ := parse(out, "settings.json")
		if _, err := s2.uninstall(o, s, &notes); err != nil {
			b.Fatal(err)
		}
	}
}
