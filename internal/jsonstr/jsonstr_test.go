package jsonstr_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/internal/jsonstr"
)

func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"b\\s", "\b\f\n\r\t\x00\x1f", "<&>", "ü\u2028\u2029…", "bad \xff\xfe", "\xc3", "abcdefg<hijklmn&op>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := jsonstr.AppendQuoted(nil, s)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("AppendQuoted(%q) = %s, not JSON: %v", s, out, err)
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); utf8.ValidString(s) && back != want {
			t.Fatalf("round trip of %q gave %q", s, back)
		}
		if !utf8.ValidString(s) && !utf8.ValidString(back) {
			t.Fatalf("invalid UTF-8 survived: %q", back)
		}
		if want := jsonstr.Decoded([]byte(s)); back != want {
			t.Fatalf("AppendQuoted(%q) decodes to %q, Decoded says %q", s, back, want)
		}
		if want := escapeBytewise(s); string(out[1:len(out)-1]) != want {
			t.Fatalf("AppendQuoted(%q) = %s, byte by byte %s", s, out, want)
		}
		if got, want := jsonstr.AppendQuotedHTML(nil, s), mustMarshal(t, s); string(got) != string(want) {
			t.Fatalf("AppendQuotedHTML(%q) = %s, json.Marshal %s", s, got, want)
		}
		if got, want := jsonstr.AppendQuotedNoHTML(nil, s), mustEncodeNoHTML(t, s); string(got) != string(want) {
			t.Fatalf("AppendQuotedNoHTML(%q) = %s, the Encoder %s", s, got, want)
		}
	})
}

// TestAppendEscapedWords puts every byte value at every place of the words
// AppendEscaped tests eight bytes at a time, and compares the result with
// an escape made byte by byte.
func TestAppendEscapedWords(t *testing.T) {
	for c := 0; c < 256; c++ {
		for at := 0; at < 24; at++ {
			b := []byte(strings.Repeat("aZ09/_-.", 3))
			b[at] = byte(c)
			for _, s := range []string{string(b), string(b[:at+1]), string(b[at:])} {
				if got, want := string(jsonstr.AppendEscaped(nil, s)), escapeBytewise(s); got != want {
					t.Fatalf("AppendEscaped(%q) = %q, byte by byte %q", s, got, want)
				}
				if got, want := jsonstr.AppendQuotedHTML(nil, s), mustMarshal(t, s); string(got) != string(want) {
					t.Fatalf("AppendQuotedHTML(%q) = %s, json.Marshal %s", s, got, want)
				}
				if got, want := jsonstr.AppendQuotedNoHTML(nil, s), mustEncodeNoHTML(t, s); string(got) != string(want) {
					t.Fatalf("AppendQuotedNoHTML(%q) = %s, the Encoder %s", s, got, want)
				}
			}
		}
	}
}

// escapeBytewise is AppendEscaped's contract, written plainly.
func escapeBytewise(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i-size : i])
		}
	}
	return b.String()
}

// mustMarshal is json.Marshal of s: AppendQuotedHTML's contract.
func mustMarshal(t *testing.T, s string) []byte {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustEncodeNoHTML is s as an Encoder with SetEscapeHTML(false) writes it.
func mustEncodeNoHTML(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// FuzzAppendFloat: AppendFloat writes every float64 and float32 as
// encoding/json does, and refuses what encoding/json refuses.
func FuzzAppendFloat(f *testing.F) {
	for _, v := range []float64{0, -0.0, 1, -1.5, 1e-6, 9.99e-7, 1e20, 1e21, 1e-9, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.NaN(), 3.4e38, 1.17e-38} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		for _, bits := range []int{64, 32} {
			var want []byte
			var err error
			if bits == 32 {
				if v32 := float32(v); !math.IsInf(float64(v32), 0) || math.IsInf(v, 0) {
					want, err = json.Marshal(v32)
					v = float64(v32)
				} else {
					continue // out of float32's range: no float32 to write
				}
			} else {
				want, err = json.Marshal(v)
			}
			got, gotErr := jsonstr.AppendFloat([]byte("x"), v, bits)
			if (err != nil) != (gotErr != nil) {
				t.Fatalf("%v as float%d: error %v, encoding/json's %v", v, bits, gotErr, err)
			}
			if err == nil && string(got) != "x"+string(want) {
				t.Fatalf("%v as float%d: %s, encoding/json writes %s", v, bits, got[1:], want)
			}
			if err != nil && string(got) != "x" {
				t.Fatalf("%v as float%d: wrote %q with the error", v, bits, got)
			}
		}
	})
}
