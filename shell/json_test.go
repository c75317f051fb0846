package shell

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hookwatch/hookwatch/internal/jsontest"
)

// TestAnalysisJSON holds Analysis.AppendJSON to json.Marshal: on the
// analyses of the corpus's commands, and on analyses with every field
// filled in at random (a field the encoder does not write fails it).
func TestAnalysisJSON(t *testing.T) {
	for _, e := range readCorpus(t) {
		a := Analyze(e.Command, Options{Dir: "/w"})
		checkAnalysisJSON(t, e.Command, &a)
	}
	var full Analysis
	jsontest.Full(&full)
	var keys map[string]any
	checkAnalysisJSON(t, "full", &full)
	if err := json.Unmarshal(full.AppendJSON(nil), &keys); err != nil || len(keys) != jsontest.Fields(reflect.TypeFor[Analysis]()) {
		t.Fatalf("a full analysis has %d members (%v)", len(keys), err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 2048)
	for range 2000 {
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		var a Analysis
		jsontest.Fill(&a, data)
		checkAnalysisJSON(t, "random", &a)
	}
}

func checkAnalysisJSON(t *testing.T, from string, a *Analysis) {
	t.Helper()
	want, err := json.Marshal(a)
	if err != nil {
		t.Fatalf("%s: %v", from, err)
	}
	if got := a.AppendJSON([]byte("prefix")); string(got) != "prefix"+string(want) {
		t.Fatalf("%s: AppendJSON\n%s\njson.Marshal\n%s", from, got, want)
	}
}
