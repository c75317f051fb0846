package attribution

import (
	"encoding/json"
	"testing"

	"github.com/hookwatch/hookwatch/event"
)

// TestSources: who reported a happening encodes as the names of its
// reporters and reads back, a name a newer model may write ignored; a
// record of a client's file is a copy only of what a hook reported, and a
// hook's event names the files that copied it.
func TestSources(t *testing.T) {
	s := SourceHook | SourceTranscript
	b, err := json.Marshal(s)
	if err != nil || string(b) != `["hook","transcript"]` {
		t.Fatalf("%s %v", b, err)
	}
	var back Sources
	if err := json.Unmarshal([]byte(`["transcript","hook","pigeon"]`), &back); err != nil || back != s {
		t.Fatalf("%v %v", back.Names(), err)
	}
	if err := json.Unmarshal([]byte(`{"hook":true}`), &back); err == nil {
		t.Error("an object read as sources")
	}
	for _, c := range []struct {
		s    Sources
		kind string
		copy bool
		also Sources
	}{
		{SourceHook | SourceTranscript, event.KindTranscript, true, 0},
		{SourceHook | SourceTranscript, event.KindHook, false, SourceTranscript},
		{SourceTranscript, event.KindTranscript, false, 0},
		{SourceHook | SourceRollout, event.KindRollout, true, 0},
		{SourceHook | SourceRollout, event.KindHook, false, SourceRollout},
		{SourceHook, event.KindHook, false, 0},
		{SourceRollout, event.KindRollout, false, 0},
	} {
		if got, also := c.s.Copy(c.kind), c.s.Also(c.kind); got != c.copy || also != c.also {
			t.Errorf("%v of a %s: copy %v also %v, want %v %v", c.s.Names(), c.kind, got, also.Names(), c.copy, c.also.Names())
		}
	}
}
