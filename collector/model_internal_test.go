package collector

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

func TestMergeWindows(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	f := func(in [][2]int, want [][2]int) {
		t.Helper()
		var ws [][2]time.Time
		for _, w := range in {
			ws = append(ws, [2]time.Time{at(w[0]), at(w[1])})
		}
		var got [][2]int
		for _, w := range mergeWindows(ws) {
			got = append(got, [2]int{int(w[0].Unix()), int(w[1].Unix())})
		}
		if !slices.Equal(got, want) {
			t.Fatalf("mergeWindows(%v) = %v, want %v", in, got, want)
		}
	}
	f(nil, nil)
	f([][2]int{{5, 9}}, [][2]int{{5, 9}})
	f([][2]int{{20, 30}, {0, 10}, {10, 12}, {25, 26}}, [][2]int{{0, 12}, {20, 30}})
	f([][2]int{{0, 100}, {10, 20}}, [][2]int{{0, 100}})
}

func TestGroupCache(t *testing.T) {
	c := newGroupCache(100)
	// g is a group holding n bytes of payload.
	g := func(n int) *groupState {
		x := newGroupState("k")
		pad := strings.Repeat("x", n-len(`{"session_id":"s","p":""}`))
		x.g.Apply(event.Envelope{ID: fmt.Sprint("e", n), ReceivedAt: time.Unix(1, 0), Payload: json.RawMessage(`{"session_id":"s","p":"` + pad + `"}`)})
		if x.g.Bytes() != n {
			t.Fatalf("group of %d bytes, want %d", x.g.Bytes(), n)
		}
		return x
	}
	size := func(x *groupState) int {
		if x == nil {
			return 0
		}
		return x.g.Bytes()
	}
	c.put("a", g(40))
	c.put("b", g(40))
	if x := c.take("a"); size(x) != 40 {
		t.Fatal("a was not kept")
	}
	c.put("a", g(40)) // now the most recently used
	c.put("c", g(40)) // evicts b, the least recently used
	if x := c.take("b"); x != nil {
		t.Fatal("b was not evicted")
	}
	if x := c.take("a"); size(x) != 40 {
		t.Fatal("a was evicted")
	}
	c.put("big", g(101)) // larger than the budget: not kept
	if x := c.take("big"); x != nil || c.used != 40 {
		t.Fatalf("an oversized group was kept (used %d)", c.used)
	}
	for i := range 10 {
		c.put(fmt.Sprint(i), g(30))
	}
	if c.used > 100 || len(c.groups) != 3 || len(c.order) != 3 {
		t.Fatalf("cache over budget: used %d, %d groups", c.used, len(c.groups))
	}
}
