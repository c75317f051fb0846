package hook_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/rejecttest"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// TestDrainRefusedOnceAcrossRetries: a hook drains a spooled batch in which
// a real collector refuses one envelope, and the connection drops once,
// while the batch is sent one envelope at a time, on an envelope after the
// refused one; the batch stays spooled, and the next hook drains it again.
// The refused envelope is set aside once, not once per drain, and every
// other one is stored.
func TestDrainRefusedOnceAcrossRetries(t *testing.T) {
	recs := rejecttest.Records(t)
	url, db, dropped := rejecttest.Collector(t, recs)
	cfg := config(t, url)
	sp, err := spool.Open(filepath.Join(cfg.Home, "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Append(recs...); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if res := hook.Run(context.Background(), cfg, bytes.NewReader(preToolUse(t))); !res.Delivered {
			t.Fatalf("hook %d: %+v", i, res)
		}
	}
	if !dropped() {
		t.Fatal("the connection was never dropped")
	}
	if st, err := sp.Stats(); err != nil || st.PendingBytes != 0 {
		t.Fatalf("the spool still holds %+v %v", st, err)
	}
	b, err := os.ReadFile(filepath.Join(cfg.Home, "rejected.jsonl"))
	if err != nil || string(b) != string(recs[rejecttest.Refused])+"\n" {
		t.Fatalf("rejected.jsonl: %v, %d lines; want the bad envelope once", err, bytes.Count(b, []byte("\n")))
	}
	// The two hooks' own events, and the spooled ones but the refused one.
	if n := storetest.CountEvents(t, db); n != int64(2+len(recs)-1) {
		t.Fatalf("stored %d events, want %d", n, 2+len(recs)-1)
	}
}
