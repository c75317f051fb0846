package policy

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestNormalizeTimestamps covers epoch seconds, epoch milliseconds, ISO 8601
// with every offset form, nested objects and arrays, and JSON held in text.
func TestNormalizeTimestamps(t *testing.T) {
	f := func(in, want string, opt TimestampOptions) {
		t.Helper()
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatalf("bad input %s: %v", in, err)
		}
		orig, _ := json.Marshal(v)
		got, changed := NormalizeTimestamps(v, opt)
		gb, _ := json.Marshal(got)
		var wv any
		if err := json.Unmarshal([]byte(want), &wv); err != nil {
			t.Fatalf("bad want %s: %v", want, err)
		}
		wb, _ := json.Marshal(wv)
		if string(gb) != string(wb) {
			t.Fatalf("NormalizeTimestamps(%s)\n got %s\nwant %s", in, gb, wb)
		}
		if changed != (string(orig) != string(wb)) {
			t.Fatalf("NormalizeTimestamps(%s): changed=%v", in, changed)
		}
		if after, _ := json.Marshal(v); string(after) != string(orig) {
			t.Fatalf("input was modified: %s", after)
		}
	}
	keys := TimestampOptions{}

	// Unix seconds and milliseconds under time-like keys.
	f(`{"created_at": 1700000000}`, `{"created_at": "2023-11-14T22:13:20Z"}`, keys)
	f(`{"createdAt": 1700000000123}`, `{"createdAt": "2023-11-14T22:13:20.123Z"}`, keys)
	f(`{"ts": 1700000000.5}`, `{"ts": "2023-11-14T22:13:20.5Z"}`, keys)
	f(`{"timestamp": "1700000000"}`, `{"timestamp": "2023-11-14T22:13:20Z"}`, keys)
	f(`{"updated": "1700000000123"}`, `{"updated": "2023-11-14T22:13:20.123Z"}`, keys)
	f(`{"last_seen": 946684800}`, `{"last_seen": "2000-01-01T00:00:00Z"}`, keys)
	f(`{"expires": 3600, "iat": 12}`, `{"expires": 3600, "iat": 12}`, keys) // durations, small numbers: not times
	// Not a time key: numbers stay numbers (ids, sizes, line numbers).
	f(`{"id": 1700000000, "bytes": 1700000000123, "startLine": 1700000000, "format": 1700000000}`,
		`{"id": 1700000000, "bytes": 1700000000123, "startLine": 1700000000, "format": 1700000000}`, keys)
	// EpochAll converts any number in range; EpochNone none; Keys adds names.
	f(`{"id": 1700000000, "n": 5}`, `{"id": "2023-11-14T22:13:20Z", "n": 5}`, TimestampOptions{Epoch: EpochAll})
	f(`{"created_at": 1700000000}`, `{"created_at": 1700000000}`, TimestampOptions{Epoch: EpochNone})
	f(`{"born": 1700000000}`, `{"born": "2023-11-14T22:13:20Z"}`, TimestampOptions{Keys: []string{"BORN"}})

	// ISO 8601 with offsets → UTC.
	f(`"2024-01-01T10:00:00+02:00"`, `"2024-01-01T08:00:00Z"`, keys)
	f(`"2024-01-01T10:00:00+0200"`, `"2024-01-01T08:00:00Z"`, keys)
	f(`"2024-01-01T10:00:00+02"`, `"2024-01-01T08:00:00Z"`, keys)
	f(`"2024-01-01T03:30:00-05:30"`, `"2024-01-01T09:00:00Z"`, keys)
	f(`"2024-01-01T00:30:00.250+01:00"`, `"2023-12-31T23:30:00.25Z"`, keys) // crosses midnight and year
	f(`"2024-01-01 10:00:00Z"`, `"2024-01-01T10:00:00Z"`, keys)
	f(`"2024-01-01t10:00z"`, `"2024-01-01T10:00:00Z"`, keys)
	f(`"2024-01-01T10:00:00Z"`, `"2024-01-01T10:00:00Z"`, keys)                 // already UTC: unchanged
	f(`"2024-01-01T10:00:00"`, `"2024-01-01T10:00:00"`, keys)                   // no offset: zone unknown, left alone
	f(`"2024-02-30T10:00:00Z"`, `"2024-02-30T10:00:00Z"`, keys)                 // not a date
	f(`"2024-01-01T25:00:00Z"`, `"2024-01-01T25:00:00Z"`, keys)                 // not a time
	f(`"12024-01-01T10:00:00+02:00"`, `"12024-01-01T10:00:00+02:00"`, keys)     // part of a longer number
	f(`"2024-01-01T10:00:00+02:00:00"`, `"2024-01-01T10:00:00+02:00:00"`, keys) // trailing garbage
	// Inside text, unless NoText.
	f(`"deployed 2024-06-01T12:00:00+02:00, rolled back 2024-06-01T13:15:00-07:00."`,
		`"deployed 2024-06-01T10:00:00Z, rolled back 2024-06-01T20:15:00Z."`, keys)
	f(`"deployed 2024-06-01T12:00:00+02:00"`, `"deployed 2024-06-01T12:00:00+02:00"`, TimestampOptions{NoText: true})
	f(`"2024-06-01T12:00:00+02:00"`, `"2024-06-01T10:00:00Z"`, TimestampOptions{NoText: true})

	// Nested objects and arrays; array elements inherit their key.
	f(`{"data": {"items": [{"name": "a", "created_at": 1700000000, "meta": {"updated_at": "2024-01-01T10:00:00+02:00"}}, {"name": "b"}]}, "timestamps": [1700000000, 1700000000123, "x"]}`,
		`{"data": {"items": [{"name": "a", "created_at": "2023-11-14T22:13:20Z", "meta": {"updated_at": "2024-01-01T08:00:00Z"}}, {"name": "b"}]}, "timestamps": ["2023-11-14T22:13:20Z", "2023-11-14T22:13:20.123Z", "x"]}`, keys)
	f(`[[["2024-01-01T10:00:00+02:00"]]]`, `[[["2024-01-01T08:00:00Z"]]]`, keys)
	// JSON inside text, as MCP tools return it: parsed, normalised, re-encoded.
	f(`[{"type": "text", "text": "{\"id\": 12345678901234, \"created\": 1700000000, \"at\": \"2024-01-01T10:00:00+02:00\"}"}]`,
		`[{"type": "text", "text": "{\"at\":\"2024-01-01T08:00:00Z\",\"created\":\"2023-11-14T22:13:20Z\",\"id\":12345678901234}"}]`, keys)
	f(`{"text": "[1700000000]"}`, `{"text": "[1700000000]"}`, keys) // no key: not a time
	// Nothing to do.
	f(`{"a": 1, "b": [true, null, "x"]}`, `{"a": 1, "b": [true, null, "x"]}`, keys)
}

func TestIsTimeKey(t *testing.T) {
	f := func(key string, want bool) {
		t.Helper()
		if got := isTimeKey(key); got != want {
			t.Fatalf("isTimeKey(%q) = %v", key, got)
		}
	}
	f("created_at", true)
	f("createdAt", true)
	f("CreatedAt", true)
	f("ts", true)
	f("last-seen", true)
	f("meta.updated", true)
	f("startTime", true)
	f("format", false)
	f("chat", false)
	f("status", false)
	f("startLine", false)
	f("durationMs", false)
	f("", false)
}

func TestRedact(t *testing.T) {
	f := func(opt RedactOptions, in, want string) {
		t.Helper()
		r, err := NewRedactor(opt)
		if err != nil {
			t.Fatal(err)
		}
		got, changed := r.Redact(map[string]any{"s": in, "n": []any{in}})
		m := got.(map[string]any)
		if m["s"] != want || m["n"].([]any)[0] != want {
			t.Fatalf("Redact(%q) = %q, want %q", in, m["s"], want)
		}
		if changed != (in != want) {
			t.Fatalf("Redact(%q): changed=%v", in, changed)
		}
	}
	all := RedactOptions{}
	f(all, "mail jane.doe+x@example.co.uk now", "mail [REDACTED:email] now")
	f(all, "card 4111 1111 1111 1111 ok", "card [REDACTED:card] ok")
	f(all, "card 4111-1111-1111-1111", "card [REDACTED:card]")
	f(all, "amex 378282246310005", "amex [REDACTED:card]")
	f(all, "not luhn 4111 1111 1111 1112", "not luhn 4111 1111 1111 1112")
	f(all, "epoch ms 1700000000123", "epoch ms 1700000000123") // starts with 1: never a card
	f(all, "ssn 123-45-6789.", "ssn [REDACTED:ssn].")
	f(all, "ssn 000-45-6789 666-45-6789 900-45-6789 123-00-6789 123-45-0000", "ssn 000-45-6789 666-45-6789 900-45-6789 123-00-6789 123-45-0000")
	f(all, "date 2024-01-01 phone 555-123-4567", "date 2024-01-01 phone 555-123-4567")
	f(RedactOptions{Kinds: []string{"email"}}, "a@b.io 123-45-6789", "[REDACTED:email] 123-45-6789")
	f(RedactOptions{Kinds: []string{}, Patterns: []NamedPattern{{Name: "api_key", Regexp: `sk-[A-Za-z0-9]{8,}`}}, Replacement: "<{kind}>"},
		"key sk-abcdefgh1234 a@b.io", "key <api_key> a@b.io")

	r, _ := NewRedactor(RedactOptions{})
	if got := r.Find(map[string]any{"a": "x@y.io", "b": []any{"4111111111111111", "123-45-6789"}}); !reflect.DeepEqual(got, []string{"card", "email", "ssn"}) {
		t.Fatalf("Find = %v", got)
	}
	if _, err := NewRedactor(RedactOptions{Kinds: []string{"phone"}}); err == nil {
		t.Fatal("unknown kind accepted")
	}
	if _, err := NewRedactor(RedactOptions{Patterns: []NamedPattern{{Name: "x", Regexp: "("}}}); err == nil {
		t.Fatal("bad pattern accepted")
	}
}

func FuzzNormalizeTimestamps(f *testing.F) {
	for _, s := range []string{`"2024-01-01T10:00:00+02:00"`, `{"ts":1700000000}`, `"{\"a\":[1,2]}"`, `"x 2024-01-01 10:00+0530 y"`, `[1e300,-1e300]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var v any
		if json.Unmarshal([]byte(in), &v) != nil {
			v = in
		}
		for _, mode := range []EpochMode{EpochKeys, EpochAll} {
			out, _ := NormalizeTimestamps(map[string]any{"created_at": v, "x": []any{v}}, TimestampOptions{Epoch: mode})
			if _, err := json.Marshal(out); err != nil {
				t.Fatalf("output not encodable: %v", err)
			}
		}
		r, _ := NewRedactor(RedactOptions{})
		r.Redact(v)
	})
}
