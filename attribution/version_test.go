package attribution

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/hookwatch/hookwatch/event"
)

// modelSums are the sums of the models ModelVersion derives from the real
// captures (modelSum), one per version: what a collector of that version
// stored.
var modelSums = map[int]string{
	1: "7aaeb287bcb77b5a31428d778f2d485182c67a77207cfddd914f410d5538a8ec",
}

// modelSum is the sha256 of the models of the real captures, as the golden
// files hold them.
func modelSum(t *testing.T) string {
	h := sha256.New()
	h.Write(mustJSON(t, Build(loadCorpus(t, "claude-code-2.1.197.jsonl", event.RuntimeClaudeCode))))
	h.Write(mustJSON(t, Build(load2332(t))))
	return hex.EncodeToString(h.Sum(nil))
}

// TestModelVersion: what Build derives from the real captures changes only
// with ModelVersion, so that a collector derives again the models stored
// before the change (store.SessionModel.Version) rather than serve them.
func TestModelVersion(t *testing.T) {
	got, want := modelSum(t), modelSums[ModelVersion]
	if got != want {
		t.Fatalf("the models of the real captures are not those of ModelVersion %d (sum %s, want %q): "+
			"if what Build derives changed, raise ModelVersion and record the sum in modelSums under it", ModelVersion, got, want)
	}
}
