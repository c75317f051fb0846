package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/store"
)

// RunOTLPDebts runs the conformance suite of store.OTLPDebtStore. open must
// return a new, empty store and arrange for it to be closed when the test
// ends.
func RunOTLPDebts(t *testing.T, open func(t *testing.T) store.OTLPDebtStore) {
	t.Run("Owe", func(t *testing.T) { testOTLPOwe(t, open(t)) })
	t.Run("Paid", func(t *testing.T) { testOTLPPaid(t, open(t)) })
	t.Run("Many", func(t *testing.T) { testOTLPMany(t, open(t)) })
}

// debtKeys are the debts as "session/owner since touched" lines, in
// their order.
func debtKeys(t *testing.T, s store.OTLPDebtStore, limit int) []string {
	t.Helper()
	ds, err := s.OTLPDebts(ctx, limit)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.SessionID + "/" + d.Owner + " " + d.Since.Format(time.RFC3339Nano) + " " + d.Touched.Format(time.RFC3339Nano)
	}
	return out
}

// testOTLPOwe: a record per session and owner, the longest owed first; a
// session recorded again keeps its first Since, and is touched; a clear
// takes off the owner's records alone.
func testOTLPOwe(t *testing.T, s store.OTLPDebtStore) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 123456789, time.UTC)
	at := t0.Add(time.Minute)
	if err := s.OweOTLP(ctx, "a", map[string]time.Time{"s1": t0.Add(time.Second), "s2": t0}, at); err != nil {
		t.Fatal(err)
	}
	if err := s.OweOTLP(ctx, "b", map[string]time.Time{"s1": t0.Add(2 * time.Second)}, at); err != nil {
		t.Fatal(err)
	}
	f := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339Nano) }
	want := []string{"s2/a " + f(0) + " " + f(time.Minute), "s1/a " + f(time.Second) + " " + f(time.Minute), "s1/b " + f(2*time.Second) + " " + f(time.Minute)}
	if got := debtKeys(t, s, 10); !slices.Equal(got, want) {
		t.Fatalf("OTLPDebts:\n%q\nwant\n%q", got, want)
	}
	if got := debtKeys(t, s, 2); !slices.Equal(got, want[:2]) {
		t.Fatalf("OTLPDebts(limit 2):\n%q\nwant\n%q", got, want[:2])
	}
	// Recorded again, later and earlier: the earlier Since stays, the
	// record is touched each time.
	if err := s.OweOTLP(ctx, "a", map[string]time.Time{"s2": t0.Add(time.Hour)}, t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.OweOTLP(ctx, "b", map[string]time.Time{"s1": t0.Add(-time.Second)}, t0.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	want = []string{"s1/b " + f(-time.Second) + " " + f(3*time.Minute), "s2/a " + f(0) + " " + f(2*time.Minute), "s1/a " + f(time.Second) + " " + f(time.Minute)}
	if got := debtKeys(t, s, 10); !slices.Equal(got, want) {
		t.Fatalf("OTLPDebts after writing again:\n%q\nwant\n%q", got, want)
	}
	if err := s.ClearOTLP(ctx, "a", []string{"s1", "unknown"}); err != nil {
		t.Fatal(err)
	}
	want = []string{want[0], want[1]}
	if got := debtKeys(t, s, 10); !slices.Equal(got, want) {
		t.Fatalf("OTLPDebts after a's s1 cleared:\n%q\nwant\n%q", got, want)
	}
	if err := s.ClearOTLP(ctx, "a", nil); err != nil {
		t.Fatalf("ClearOTLP(none): %v", err)
	}
}

// testOTLPPaid: PaidOTLP takes off the records as they were read, and
// leaves one written again since.
func testOTLPPaid(t *testing.T, s store.OTLPDebtStore) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 1, time.UTC)
	if err := s.OweOTLP(ctx, "a", map[string]time.Time{"s1": t0}, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.OweOTLP(ctx, "b", map[string]time.Time{"s1": t0, "s2": t0}, t0); err != nil {
		t.Fatal(err)
	}
	read, err := s.OTLPDebts(ctx, 10)
	if err != nil || len(read) != 3 {
		t.Fatalf("OTLPDebts = %v, %v", read, err)
	}
	// b owes s1 again after the read.
	if err := s.OweOTLP(ctx, "b", map[string]time.Time{"s1": t0}, t0.Add(time.Nanosecond)); err != nil {
		t.Fatal(err)
	}
	if err := s.PaidOTLP(ctx, read); err != nil {
		t.Fatal(err)
	}
	want := []string{"s1/b " + t0.Format(time.RFC3339Nano) + " " + t0.Add(time.Nanosecond).Format(time.RFC3339Nano)}
	if got := debtKeys(t, s, 10); !slices.Equal(got, want) {
		t.Fatalf("OTLPDebts after paying what was read:\n%q\nwant\n%q", got, want)
	}
	if err := s.PaidOTLP(ctx, nil); err != nil {
		t.Fatalf("PaidOTLP(none): %v", err)
	}
}

// testOTLPMany: more records than one statement writes go in, and out.
func testOTLPMany(t *testing.T, s store.OTLPDebtStore) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	owed := map[string]time.Time{}
	var ids []string
	for i := range 1000 {
		id := "s" + string(rune('a'+i/100)) + time.Duration(i).String()
		owed[id] = t0.Add(time.Duration(i) * time.Millisecond)
		ids = append(ids, id)
	}
	if err := s.OweOTLP(ctx, "a", owed, t0); err != nil {
		t.Fatal(err)
	}
	read, err := s.OTLPDebts(ctx, 2000)
	if err != nil || len(read) != len(owed) {
		t.Fatalf("OTLPDebts = %d records, %v; want %d", len(read), err, len(owed))
	}
	for i, d := range read {
		if d.SessionID != ids[i] || !d.Since.Equal(owed[d.SessionID]) {
			t.Fatalf("record %d is %+v, want %s since %v", i, d, ids[i], owed[ids[i]])
		}
	}
	if err := s.PaidOTLP(ctx, read[:500]); err != nil {
		t.Fatal(err)
	}
	if err := s.ClearOTLP(ctx, "a", ids[500:]); err != nil {
		t.Fatal(err)
	}
	if got := debtKeys(t, s, 2000); len(got) != 0 {
		t.Fatalf("%d records left, want none: %q", len(got), got[:min(len(got), 3)])
	}
}
