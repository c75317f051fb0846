package redact

import (
	"strings"
	"testing"
)

// hostile are texts made of overlapping candidates, each of which would make
// a naive scanner quadratic: every detector looks ahead, and here every look
// ahead spans the rest of the text.
var hostile = []struct{ name, unit string }{
	{"sk-run", "sk-"},
	{"whsec-run", "whsec_+"},
	{"jwt-run", "eyJhbGciOiJIUzI1NiJ9."},
	{"webhook-run", "hooks.slack.com/services/"},
	{"open-quote", `api_key="a b `},
	{"open-quote-escaped", `token=\"x y `},
	{"header-open", `-H 'Cookie: $x `},
	{"value-run", "token = a.b."},
	{"pem-begin", "-----BEGIN RSA PRIVATE KEY-----\""},
	{"pem-end", "-----END RSA PRIVATE KEY-----"},
	{"url", "a://b:c"},
	{"flags", " --password --token "},
	{"assign-chain", "token=$token="},
}

func TestStringHostile(t *testing.T) {
	for _, h := range hostile {
		in := strings.Repeat(h.unit, (64<<10)/len(h.unit))
		out, _ := String(in)
		if again, m := String(out); again != out || m != 0 {
			t.Errorf("%s: not idempotent", h.name)
		}
	}
}

func BenchmarkStringHostile(b *testing.B) {
	for _, h := range hostile {
		in := strings.Repeat(h.unit, (1<<20)/len(h.unit))
		b.Run(h.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				String(in)
			}
		})
	}
}
