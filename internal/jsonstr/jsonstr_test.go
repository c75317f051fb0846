package jsonstr_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/internal/jsonstr"
)

func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"b\\s", "\b\f\n\r\t\x00\x1f", "<&>", "ü\u2028", "bad \xff\xfe", "\xc3"} {
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
	})
}
