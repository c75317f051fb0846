// Package pricing turns the token usage a Claude Code transcript records
// into US dollars: a built-in table of the published per-model prices, dated
// so that a reader knows how old it is, which a JSON file can replace
// (hookwatch serve --prices FILE) when prices change or a model is missing.
//
// A model the table does not name is not guessed at: its cost is unknown,
// and readers show the tokens without a price.
package pricing

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
)

// Price is what one million tokens of each kind cost, in USD.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	// CacheRead is a prompt cache hit; CacheWrite5m and CacheWrite1h are
	// writes to the 5-minute and the 1-hour cache.
	CacheRead    float64 `json:"cache_read"`
	CacheWrite5m float64 `json:"cache_write_5m"`
	CacheWrite1h float64 `json:"cache_write_1h"`
}

// Table is a price list: Models maps a model id to its price. An id
// matches a model that is the id itself, the id followed by a date
// ("-20250514"), or by a context marker ("[1m]").
type Table struct {
	// Date is when the prices were read from the vendor's price page.
	Date   string           `json:"date"`
	Models map[string]Price `json:"models"`
}

// Builtin returns the table compiled into hookwatch: Anthropic's published
// prices on its date. It is built on each call, not at init: the packages
// that price link into binaries whose start-up time matters.
func Builtin() *Table {
	opus4 := Price{Input: 15, Output: 75, CacheRead: 1.5, CacheWrite5m: 18.75, CacheWrite1h: 30}
	opus45 := Price{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite5m: 6.25, CacheWrite1h: 10}
	sonnet := Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite5m: 3.75, CacheWrite1h: 6}
	haiku45 := Price{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite5m: 1.25, CacheWrite1h: 2}
	haiku35 := Price{Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite5m: 1, CacheWrite1h: 1.6}
	// Claude Code's default model from 2.1.332 on, and its lineup. Not
	// here: Haiku 5.5, whose price depends on each request's prompt
	// length, which a response's usage does not say; Fable 5.1, whose
	// cache prices were not published beside its base ones.
	opus55 := Price{Input: 4, Output: 20, CacheRead: 0.2, CacheWrite5m: 5, CacheWrite1h: 8}
	sonnet5 := Price{Input: 2, Output: 10, CacheRead: 0.2, CacheWrite5m: 2.5, CacheWrite1h: 4}
	sonnet55 := Price{Input: 2, Output: 10, CacheRead: 0.1, CacheWrite5m: 2.5, CacheWrite1h: 4} // cache reads cut on 2026-10-07
	return &Table{Date: "2026-12-01", Models: map[string]Price{
		"claude-opus-5-5":   opus55,
		"claude-opus-5":     opus45,
		"claude-sonnet-5-5": sonnet55,
		"claude-sonnet-5":   sonnet5,
		"claude-opus-4-5":   opus45,
		"claude-opus-4-1":   opus4,
		"claude-opus-4":     opus4,
		"claude-sonnet-4-5": sonnet,
		"claude-sonnet-4":   sonnet,
		"claude-3-7-sonnet": sonnet,
		"claude-haiku-4-5":  haiku45,
		"claude-3-5-haiku":  haiku35,
	}}
}

// Load reads a table from a JSON file of Table's shape. Its models replace
// the built-in table's entirely, so that what the file says is all that
// prices: a file that wants the built-in entries too lists them.
func Load(path string) (*Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read price table: %w", err)
	}
	var t Table
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("cannot parse price table %s: %w", path, err)
	}
	if len(t.Models) == 0 {
		return nil, fmt.Errorf("price table %s names no models", path)
	}
	for id, p := range t.Models {
		if p.Input < 0 || p.Output < 0 || p.CacheRead < 0 || p.CacheWrite5m < 0 || p.CacheWrite1h < 0 {
			return nil, fmt.Errorf("price table %s: negative price for %q", path, id)
		}
	}
	return &t, nil
}

// Lookup returns the price of model: the entry for the model id itself, or
// for the id without a date or context suffix. ok is false when the table
// has neither.
func (t *Table) Lookup(model string) (p Price, ok bool) {
	if p, ok := t.Models[model]; ok {
		return p, true
	}
	base, _, _ := strings.Cut(model, "[")
	if p, ok := t.Models[base]; ok {
		return p, true
	}
	if i := strings.LastIndexByte(base, '-'); i > 0 && isDate(base[i+1:]) {
		p, ok := t.Models[base[:i]]
		return p, ok
	}
	return Price{}, false
}

// isDate reports whether s is eight digits, a model id's date suffix.
func isDate(s string) bool {
	if len(s) != 8 {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Tokens are the tokens of one API response, by kind. CacheWrite is every
// cache write; CacheWrite1h, of them, those to the 1-hour cache.
type Tokens struct {
	Input, Output, CacheRead, CacheWrite, CacheWrite1h int64
}

// Cost returns what tokens of model cost, and false when the table has no
// price for model.
func (t *Table) Cost(model string, tk Tokens) (usd float64, ok bool) {
	p, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	w1h := min(max(tk.CacheWrite1h, 0), tk.CacheWrite)
	usd = float64(tk.Input)*p.Input + float64(tk.Output)*p.Output + float64(tk.CacheRead)*p.CacheRead +
		float64(tk.CacheWrite-w1h)*p.CacheWrite5m + float64(w1h)*p.CacheWrite1h
	return usd / 1e6, true
}

var current atomic.Pointer[Table]

// Default returns the table in force: the one SetDefault set, else
// Builtin.
func Default() *Table {
	if t := current.Load(); t != nil {
		return t
	}
	t := Builtin()
	current.CompareAndSwap(nil, t)
	return current.Load()
}

// SetDefault makes t the table in force for the process (hookwatch serve
// --prices); nil restores the built-in one. Models priced before keep their
// cost until the session model derives them again.
func SetDefault(t *Table) { current.Store(t) }
