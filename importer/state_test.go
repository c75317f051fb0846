package importer

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStatePrune: a save drops the entries of the transcripts and rollouts
// that are gone, once a day, and keeps those of files that exist.
func TestStatePrune(t *testing.T) {
	dir := t.TempDir()
	kept, gone := filepath.Join(dir, "kept.jsonl"), filepath.Join(dir, "gone.jsonl")
	if err := os.WriteFile(kept, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "import-state.json")
	st := &state{
		Files:    map[string]fileState{kept: {Offset: 3}, gone: {Offset: 9}},
		Rollouts: map[string]int64{kept: 3, gone: 9},
	}
	if err := st.save(path); err != nil {
		t.Fatal(err)
	}
	back, err := loadState(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := back.Files[gone]; ok || back.Files[kept].Offset != 3 || len(back.Rollouts) != 1 || back.Rollouts[kept] != 3 {
		t.Fatalf("after a save: files %v, rollouts %v; want only %s", back.Files, back.Rollouts, kept)
	}
	if time.Since(back.Pruned) > time.Minute {
		t.Fatalf("pruned at %v", back.Pruned)
	}
	// Within the day, a save stats nothing: an entry of a file gone since
	// stays until the next day's.
	back.Files[gone] = fileState{Offset: 9}
	if err := back.save(path); err != nil {
		t.Fatal(err)
	}
	if again, err := loadState(path); err != nil || again.Files[gone].Offset != 9 {
		t.Fatalf("a second save the same day: %v, %v", again, err)
	}
}
