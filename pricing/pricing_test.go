package pricing_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookwatch/hookwatch/pricing"
)

func TestCost(t *testing.T) {
	tb := pricing.Builtin()
	f := func(model string, tk pricing.Tokens, want float64, wantOK bool) {
		t.Helper()
		got, ok := tb.Cost(model, tk)
		if ok != wantOK || math.Abs(got-want) > 1e-12 {
			t.Fatalf("Cost(%q, %+v) = %v, %v; want %v, %v", model, tk, got, ok, want, wantOK)
		}
	}
	// Sonnet 4.5: $3 in, $15 out, $0.30 cache read, $3.75 / $6 cache writes per million.
	f("claude-sonnet-4-5", pricing.Tokens{Input: 1_000_000}, 3, true)
	f("claude-sonnet-4-5-20250929", pricing.Tokens{Output: 2_000_000}, 30, true)
	f("claude-sonnet-4-5[1m]", pricing.Tokens{CacheRead: 1_000_000}, 0.3, true)
	f("claude-sonnet-4-5", pricing.Tokens{CacheWrite: 2_000_000, CacheWrite1h: 1_000_000}, 3.75+6, true)
	f("claude-opus-4-5-20251101", pricing.Tokens{Input: 10, Output: 5}, (10*5+5*25)/1e6, true)
	f("claude-opus-4-1-20250805", pricing.Tokens{Input: 10, Output: 5}, (10*15+5*75)/1e6, true)
	// 2.1.332's default model.
	f("claude-opus-5-5", pricing.Tokens{Input: 1_000_000, Output: 1_000_000, CacheRead: 1_000_000}, 4+20+0.2, true)
	f("claude-opus-5-5[1m]", pricing.Tokens{CacheWrite: 2_000_000, CacheWrite1h: 1_000_000}, 5+8, true)
	f("claude-sonnet-5-5", pricing.Tokens{CacheRead: 1_000_000}, 0.1, true)
	// Not guessed: an unknown model, or a version the table does not name.
	f("claude-opus-4-8", pricing.Tokens{Input: 10}, 0, false)
	f("gpt-5", pricing.Tokens{Input: 10}, 0, false)
	f("", pricing.Tokens{Input: 10}, 0, false)
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	f := func(content string, wantErr bool) *pricing.Table {
		t.Helper()
		p := filepath.Join(dir, "prices.json")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		tb, err := pricing.Load(p)
		if (err != nil) != wantErr {
			t.Fatalf("Load(%s): %v, want error %v", content, err, wantErr)
		}
		return tb
	}
	tb := f(`{"date":"2026-11-01","models":{"claude-opus-4-8":{"input":5,"output":25}}}`, false)
	if got, ok := tb.Cost("claude-opus-4-8", pricing.Tokens{Input: 1e6, Output: 1e6}); !ok || got != 30 || tb.Date != "2026-11-01" {
		t.Fatalf("loaded table prices opus-4-8 at %v, %v", got, ok)
	}
	if _, ok := tb.Cost("claude-sonnet-4-5", pricing.Tokens{Input: 1}); ok {
		t.Fatal("a loaded table kept the built-in entries")
	}
	f(`{"models":{}}`, true)
	f(`{"models":{"m":{"input":-1}}}`, true)
	f(`not json`, true)
}
