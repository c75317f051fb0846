package jsonscan_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

func TestValid(t *testing.T) {
	f := func(in string, wantDepth int, want bool) {
		t.Helper()
		d, ok := jsonscan.Valid([]byte(in))
		if ok != want || (ok && d != wantDepth) {
			t.Fatalf("Valid(%q) = %d, %v; want %d, %v", in, d, ok, wantDepth, want)
		}
		if json.Valid([]byte(in)) != want {
			t.Fatalf("test case %q: json.Valid disagrees", in)
		}
	}
	f(`1`, 0, true)
	f(` "a\u00e9\n" `, 0, true)
	f(`{}`, 1, true)
	f(`{"a":[1,{"b":null}],"c":true}`, 3, true)
	f(`[[[]]]`, 3, true)
	f(`-0.5e+3`, 0, true)
	for _, bad := range []string{``, ` `, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{1:2}`, `01`, `1.`,
		`-`, `1e`, `tru`, `nul`, `{"a":1]`, `[}`, `"\x"`, "\"\x01\"", `"\u12"`, `"abc`, `1 2`, `{}}`, `[`} {
		f(bad, 0, false)
	}
}

func TestValidDepth(t *testing.T) {
	f := func(depth int) {
		t.Helper()
		in := []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
		d, ok := jsonscan.Valid(in)
		if ok != json.Valid(in) {
			t.Fatalf("depth %d: jsonscan.Valid = %v, json.Valid = %v", depth, ok, !ok)
		}
		if ok && d != depth {
			t.Fatalf("depth %d: reported %d", depth, d)
		}
	}
	f(1)
	f(63)
	f(64)
	f(65)
	f(200)
	f(jsonscan.MaxDepth)
	f(jsonscan.MaxDepth + 1)
	f(100000)
}

func TestMembers(t *testing.T) {
	f := func(in string, want []string, wantDepth int, wantOK bool) {
		t.Helper()
		var got []string
		d, ok := jsonscan.Members([]byte(in), func(key, val []byte) {
			got = append(got, string(jsonscan.Name(key))+"="+string(val))
		})
		if ok != wantOK || (ok && (d != wantDepth || strings.Join(got, "|") != strings.Join(want, "|"))) {
			t.Fatalf("Members(%s) = %q, %d, %v", in, got, d, ok)
		}
	}
	f(`{"a":1, "b" : "x\"y" ,"c":{"d":[1,2]}}`, []string{`a=1`, `b="x\"y"`, `c={"d":[1,2]}`}, 3, true)
	f(` {} `, nil, 1, true)
	f(`{"k\u00e9\"":true}`, []string{`ké"=true`}, 1, true)
	f(`[1]`, nil, 0, false)
	f(`{"a":1} x`, nil, 0, false)
	f(`{"a":1,}`, nil, 0, false)
	f(`"s"`, nil, 0, false)
}

func TestTrimBlank(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		" \t\r\n":          "",
		"\n {\"a\":1}\r\n": `{"a":1}`,
		"\f{}":             "\f{}",
		"{}\u00a0":         "{}\u00a0",
		" \v{} ":           "\v{}",
		"\t\"x\"\t":        `"x"`,
	} {
		if got := string(jsonscan.TrimBlank([]byte(in))); got != want {
			t.Errorf("TrimBlank(%q) = %q, want %q", in, got, want)
		}
		_, ok := jsonscan.Valid([]byte(in))
		if ok != json.Valid([]byte(in)) {
			t.Errorf("Valid(%q) = %v, encoding/json says otherwise", in, ok)
		}
	}
}

func TestElements(t *testing.T) {
	f := func(in string, want []string, wantOK bool) {
		t.Helper()
		var got []string
		_, ok := jsonscan.Elements([]byte(in), func(e []byte) { got = append(got, string(e)) })
		if ok != wantOK || (ok && strings.Join(got, "|") != strings.Join(want, "|")) {
			t.Fatalf("Elements(%s) = %q, %v", in, got, ok)
		}
	}
	f(`[1, "a]" ,{"b":[2]},[]]`, []string{`1`, `"a]"`, `{"b":[2]}`, `[]`}, true)
	f(`[]`, nil, true)
	f(`[1,]`, nil, false)
	f(`{}`, nil, false)
}

func TestUnquote(t *testing.T) {
	f := func(in, want string, wantOK bool) {
		t.Helper()
		got, ok := jsonscan.Unquote([]byte(in))
		if got != want || ok != wantOK {
			t.Fatalf("Unquote(%q) = %q, %v", in, got, ok)
		}
	}
	f(`"plain"`, "plain", true)
	f(`"\u0041KIA\n\t\/\\\""`, "AKIA\n\t/\\\"", true)
	f(`"\ud83d\ude00"`, "😀", true)
	f(`"\ud83d"`, "\uFFFD", true)
	f(`"\ud83d\u0041"`, "\uFFFDA", true)
	f("\"bad \xff\"", "bad \uFFFD", true)
	f(`"a" `, "", false)
	f(`"a`, "", false)
	f(`"\q"`, "", false)
	f(`a`, "", false)
}

// TestInterned holds Interned.Unquote to Unquote, and checks that a value
// it holds is handed out again rather than made anew, also after many
// distinct values went through its fixed slots.
func TestInterned(t *testing.T) {
	var tab jsonscan.Interned
	for _, in := range []string{`"claude-code"`, `"\u0041"`, "\"bad \xff\"", `"a" `, `"a`, `""`,
		`"` + strings.Repeat("x", jsonscan.MaxInterned+1) + `"`, `"claude-code"`} {
		got, ok := tab.Unquote([]byte(in))
		want, wantOK := jsonscan.Unquote([]byte(in))
		if got != want || ok != wantOK {
			t.Fatalf("Interned.Unquote(%q) = %q, %v; Unquote gives %q, %v", in, got, ok, want, wantOK)
		}
	}
	if n := testing.AllocsPerRun(100, func() { tab.Unquote([]byte(`"claude-code"`)) }); n != 0 {
		t.Fatalf("a held value cost %v allocations, want 0", n)
	}
	for i := range 10_000 {
		lit := fmt.Appendf(nil, `"host-%d"`, i)
		if got, _ := tab.Unquote(lit); got != string(lit[1:len(lit)-1]) {
			t.Fatalf("Interned.Unquote(%s) = %q", lit, got)
		}
	}
	tab.Unquote([]byte(`"claude-code"`))
	if n := testing.AllocsPerRun(100, func() { tab.Unquote([]byte(`"claude-code"`)) }); n != 0 {
		t.Fatalf("a held value cost %v allocations after 10,000 others, want 0", n)
	}
}

func TestDecodeCut(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := jsonscan.DecodeCut([]byte(in)); got != want {
			t.Fatalf("DecodeCut(%q) = %q, want %q", in, got, want)
		}
	}
	f(`"whole"`, "whole")
	f(`"whole" and more`, "whole")
	f(`"cut here`, "cut here")
	f(`"cut \"q\" x`, `cut "q" x`)
	f(`"cut \`, "cut ")
	f(`"cut \u00`, "cut ")
	f(`"cut \u00e9`, "cut é")
	f(`"cut \u00g`, `cut \u00g`)
	f(`"`, "")
	f(`x`, "")
}

func TestCleanStart(t *testing.T) {
	f := func(s string, i, want int) {
		t.Helper()
		if got := jsonscan.CleanStart([]byte(s), i); got != want {
			t.Fatalf("CleanStart(%q, %d) = %d, want %d", s, i, got, want)
		}
	}
	f(`abc`, 1, 1)
	f(`a\nb`, 2, 3)
	f(`a\\nb`, 3, 3)     // the n is text, after an escaped backslash
	f(`a\u0041b`, 2, 7)  // on the u
	f(`a\u0041b`, 4, 7)  // inside the digits
	f(`a\u0041b`, 7, 7)  // after
	f(`a\\u0041b`, 4, 4) // an escaped backslash, then text
	f(`\u12`, 3, 4)      // cut short
	f(`ab`, 0, 0)
	f(`ab`, 9, 2)
}

func TestStrings(t *testing.T) {
	f := func(in string, want ...string) {
		t.Helper()
		var got []string
		it := jsonscan.NewStrings([]byte(in))
		for s, ok := it.Next(); ok; s, ok = it.Next() {
			d := in[s.Start:s.End]
			switch {
			case s.Key:
				d = "key:" + d
			case s.KeyStart >= 0:
				d = in[s.KeyStart:s.KeyEnd] + "=" + d
			}
			if !s.Closed {
				d += "…"
			}
			got = append(got, d)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("Strings(%s) = %q, want %q", in, got, want)
		}
	}
	f(`{"a": "x", "b": ["y"], "c" : "z\"w"}`, "key:a", "a=x", "key:b", "y", "key:c", `c=z\"w`)
	f(`ne", "k": "v`, `, `, `: `) // taken from the middle of a string: not knowable
	f(`{"a\\": "b`, `key:a\\`, `a\\=b…`)
	f(`no strings`)
	f(`"`, "…")
	f(`"a":`, "key:a")
}

// TestCorpus reads every real payload with Scanner, jsonscan.Members and Strings and
// compares with encoding/json.
func TestCorpus(t *testing.T) {
	for _, p := range corpus.Load(t) {
		checkAgainstEncodingJSON(t, p.JSON)
	}
}

func FuzzScan(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":null}],"c":"\u0041\n"}`, `[1,"x",true]`, `"\ud800\udc00"`, `{"k\"":"v"}`,
		`{"a":1,"a":2}`, `[[[[]]]]`, `-1.5e3`, `{"a" : "b" , "c":[ ]}`, "\"\xff\"", `null`} {
		f.Add([]byte(s))
	}
	var tab jsonscan.Interned
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgainstEncodingJSON(t, data)
		for range 2 { // a miss, then a hit
			got, ok := tab.Unquote(data)
			if want, wantOK := jsonscan.Unquote(data); got != want || ok != wantOK {
				t.Fatalf("Interned.Unquote(%q) = %q, %v; Unquote gives %q, %v", data, got, ok, want, wantOK)
			}
		}
		checkMembersIn(t, data)
		// Strings never fails, and its ranges stay in order and in bounds.
		it := jsonscan.NewStrings(data)
		last := 0
		for s, ok := it.Next(); ok; s, ok = it.Next() {
			if s.Start < last || s.End < s.Start || s.End > len(data) {
				t.Fatalf("Strings gave %+v after %d in %d bytes", s, last, len(data))
			}
			last = s.End
			_ = jsonscan.AppendDecoded(nil, data[s.Start:s.End])
			if c := jsonscan.CleanStart(data[s.Start:s.End], (s.End-s.Start)/2); c < (s.End-s.Start)/2 || c > s.End-s.Start {
				t.Fatalf("CleanStart out of range: %d", c)
			}
		}
		if out := jsonscan.DecodeCut(data); !utf8.ValidString(out) {
			t.Fatalf("DecodeCut(%q) = %q, not UTF-8", data, out)
		}
	})
}

// checkAgainstEncodingJSON holds jsonscan.Valid, jsonscan.Members, jsonscan.Elements, jsonscan.Unquote and, on
// valid input, Strings to what encoding/json reads of data.
func checkAgainstEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	depth, ok := jsonscan.Valid(data)
	if ok != json.Valid(data) {
		t.Fatalf("Valid(%q) = %v, json.Valid disagrees", data, ok)
	}
	if !ok {
		return
	}
	if want := refDepth(t, data); depth != want {
		t.Fatalf("Valid(%q): depth %d, want %d", data, depth, want)
	}
	// encoding/json reads null into a map as no map at all, and without an
	// error: null is no object, which Members refuses.
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) == nil && m != nil {
		got := map[string]json.RawMessage{}
		if _, ok := jsonscan.Members(data, func(k, v []byte) { got[string(jsonscan.Name(k))] = v }); !ok {
			t.Fatalf("Members refused the object %q", data)
		}
		if len(got) != len(m) {
			t.Fatalf("Members(%q) found %d keys, encoding/json %d", data, len(got), len(m))
		}
		for k, v := range m {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("Members(%q)[%q] = %q, encoding/json %q", data, k, got[k], v)
			}
		}
	} else if _, ok := jsonscan.Members(data, func(k, v []byte) {}); ok {
		t.Fatalf("Members accepted %q, which is no object", data)
	}
	var a []json.RawMessage
	if json.Unmarshal(data, &a) == nil && a != nil {
		var got []json.RawMessage
		if _, ok := jsonscan.Elements(data, func(e []byte) { got = append(got, e) }); !ok || len(got) != len(a) {
			t.Fatalf("Elements(%q) = %q, %v; encoding/json %q", data, got, ok, a)
		}
		for i := range a {
			if !bytes.Equal(got[i], a[i]) {
				t.Fatalf("Elements(%q)[%d] = %q, encoding/json %q", data, i, got[i], a[i])
			}
		}
	}
	// Every string, key or value, decodes as encoding/json decodes it, and
	// Strings finds exactly the strings Scanner finds.
	s := jsonscan.NewScanner(data)
	it := jsonscan.NewStrings(data)
	var lastKey jsonscan.Token
	prevKey := false
	for tok := s.Next(); tok.Kind != jsonscan.End; tok = s.Next() {
		if tok.Kind == jsonscan.Invalid {
			t.Fatalf("Scanner failed on valid %q at %d", data, tok.Start)
		}
		if tok.Kind != jsonscan.Key && tok.Kind != jsonscan.String {
			prevKey = false
			continue
		}
		lit := data[tok.Start:tok.End]
		var want string
		if err := json.Unmarshal(lit, &want); err != nil {
			t.Fatalf("token %q of %q: %v", lit, data, err)
		}
		if got, ok := jsonscan.Unquote(lit); !ok || got != want {
			t.Fatalf("Unquote(%q) = %q, %v; want %q", lit, got, ok, want)
		}
		if got := jsonscan.DecodeCut(lit); got != want {
			t.Fatalf("DecodeCut(%q) = %q; want %q", lit, got, want)
		}
		str, ok := it.Next()
		if !ok || str.Start != tok.Start+1 || str.End != tok.End-1 || !str.Closed || str.Key != (tok.Kind == jsonscan.Key) {
			t.Fatalf("Strings gave %+v for token %+v of %q", str, tok, data)
		}
		if prevKey && tok.Kind == jsonscan.String {
			if str.KeyStart != lastKey.Start+1 || str.KeyEnd != lastKey.End-1 {
				t.Fatalf("Strings did not tie %q to its key in %q", lit, data)
			}
		} else if str.KeyStart >= 0 {
			t.Fatalf("Strings tied %q to a key in %q", lit, data)
		}
		prevKey = tok.Kind == jsonscan.Key
		if prevKey {
			lastKey = tok
		}
	}
	if str, ok := it.Next(); ok {
		t.Fatalf("Strings found %+v past the last string of %q", str, data)
	}
}

// refDepth is the nesting depth of valid JSON as encoding/json's tokens
// tell it.
func refDepth(t *testing.T, data []byte) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	d, m := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return m
		}
		if delim, ok := tok.(json.Delim); ok {
			if delim == '{' || delim == '[' {
				d++
				m = max(m, d)
			} else {
				d--
			}
		}
	}
}

// TestHostile reads inputs built to make a naive reader recurse, backtrack
// or rescan: each must be read in one linear pass (a quadratic reader takes
// minutes on these and the test times out).
func TestHostile(t *testing.T) {
	const n = 4 << 20
	for name, in := range map[string]string{
		"deep arrays":       strings.Repeat("[", n),
		"deep objects":      strings.Repeat(`{"a":`, n/5),
		"backslash run":     `"` + strings.Repeat(`\\`, n/2) + `"`,
		"escaped quotes":    `"` + strings.Repeat(`\"`, n/2),
		"quotes":            strings.Repeat(`"`, n),
		"keys":              strings.Repeat(`"a":`, n/4),
		"unicode escapes":   `"` + strings.Repeat(`\ud800`, n/6) + `"`,
		"cut escapes":       strings.Repeat(`"\u00`, n/5),
		"control bytes":     `"` + strings.Repeat("\x01", n),
		"plain long string": `"` + strings.Repeat("abcdefgh", n/8) + `"`,
	} {
		data := []byte(in)
		jsonscan.Valid(data)
		jsonscan.Members(data, func(k, v []byte) {})
		it := jsonscan.NewStrings(data)
		for s, ok := it.Next(); ok; s, ok = it.Next() {
			jsonscan.AppendDecoded(nil, data[s.Start:s.End])
			jsonscan.CleanStart(data[s.Start:s.End], (s.End-s.Start)/2)
		}
		jsonscan.DecodeCut(data)
		t.Logf("%s: %d bytes read", name, len(data))
	}
}

// checkMembersIn holds Scanner.MembersIn, for every key of data's object,
// to Members: the same members, the same answer, and the members of the
// object under that key those Members gives of it.
func checkMembersIn(t *testing.T, data []byte) {
	t.Helper()
	type member struct{ key, val string }
	var want []member
	_, wantOK := jsonscan.Members(data, func(k, v []byte) { want = append(want, member{string(k), string(v)}) })
	keys := []string{`"a"`}
	for _, m := range want {
		keys = append(keys, m.key)
	}
	for _, inner := range keys {
		s := jsonscan.NewScanner(data)
		var got, in []member
		ok := s.Next().Kind == jsonscan.BeginObject
		if ok {
			_, ok = s.MembersIn(func(k, v []byte) {
				got = append(got, member{string(k), string(v)})
			}, inner, func(k, v []byte) { in = append(in, member{string(k), string(v)}) })
			ok = ok && s.Next().Kind == jsonscan.End
		}
		if ok != wantOK || (ok && !slices.Equal(got, want)) {
			t.Fatalf("MembersIn(%q, %s) = %v, %v; Members gives %v, %v", data, inner, got, ok, want, wantOK)
		}
		if !ok {
			continue
		}
		var wantIn []member
		for _, m := range want {
			if m.key == inner && m.val[0] == '{' {
				jsonscan.Members([]byte(m.val), func(k, v []byte) { wantIn = append(wantIn, member{string(k), string(v)}) })
			}
		}
		if !slices.Equal(in, wantIn) {
			t.Fatalf("MembersIn(%q, %s) gave the inner members %v; Members of them %v", data, inner, in, wantIn)
		}
	}
}
