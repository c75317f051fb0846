package redact

import (
	"encoding/json"
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
	{"p-flags", " -p"},
	{"login-p-flags", "login -p -p "},
	{"short-flags", " -a -w -s -U"},
	{"tool-flags", "redis-cli -a ldapsearch -w "},
	{"pass-source", " -passin pass:"},
	{"htpasswd", "htpasswd -b "},
	{"htpasswd-quote", "htpasswd -b '"},
	{"rabbitmqctl", "rabbitmqctl add_user "},
	{"net-use", "\nnet use \\\\a "},
	{"cmd-net", "cmd /c net use \\\\a "},
	{"shell-switches", "/c /x/net "},
	{"htpasswd-escaped-quote", `htpasswd -b \"`},
	{"netexec", "nxc -p "},
	{"netexec-many", "nxc -p a "},
	{"netexec-placeholders", "nxc -p $A $B '' "},
	{"netexec-defaults", "nxc -p ${A:-x} ${B#-p} "},
	{"netexec-open-braces", "nxc -p ${A:-${ "},
	{"defaults", "DB_PASSWORD=${A:-"},
	{"named-defaults", "${DB_PASSWORD:-${"},
	{"url-defaults", "a://${A:-b:${"},
	{"user-defaults", "curl -u ${A:-"},
	{"param-operators", "${PASS?a ${PASS+b${"},
	{"long-defaults", "${DB_PASSWORD:-a "},
	{"long-defaults-closed", "${DB_PASSWORD:-a(}"},
	{"word-expansions", "token=a${b}"},
	{"word-substitutions", "token=a$("},
	{"word-backquotes", "token=a`b"},
	{"word-open-braces", "token=a${b:-token=c${"},
	{"lead-expansions", `token="${b}${`},
	{"url-long-defaults", "a://b:${A:-"},
	{"url-user-braces", "a://${"},
	{"url-user-long-defaults", "a://${A:-" + strings.Repeat("b", 300)},
	{"url-user-long-defaults-closed", "a://${A:-" + strings.Repeat("b", 300) + "}:c"},
	{"url-user-long-defaults-colons", "a://${A:-" + strings.Repeat("b:", 150)},
	{"url-userinfo-defaults", "a://${A:-b" + strings.Repeat(":@", 120) + "}"},
	{"url-userinfo-long-defaults", "a://${A:-" + strings.Repeat(":@", 150) + "}"},
	{"user-long-defaults", "curl -u a:${A:-"},
	{"netexec-substitutions", "nxc -p $(a "},
	{"netexec-hash", "nxc -H aad3b435b51404eeaad3b435b51404ee:"},
	{"netexec-attached", "nxc -H=aad3b435b51404eeaad3b435b51404ee:"},
	{"hashes", " -hashes :"},
	{"hashes-attached", " -hashes=:"},
	{"escaped-blanks", `-p a\ `},
	{"escaped-json-blanks", `-p a\\ `},
	{"ps-switches", "-ep x -c net user "},
	{"vault-login", "vault login "},
	{"aws-key-ids", "AKIAABCDEFGHIJKLMNOP,"},
	{"aws-key-id-words", "AKIAABCDEFGHIJKLMNOP " + strings.Repeat("Ab/", 13) + " "},
	{"base64-pem", "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Foa2lHOXcw\n    "},
	{"base64-pem-begin", " LS0tLS1CRUdJTi"},
	{"netrc", "login a password "},
	{"netrc-blanks", "login \n password \t"},
	{"netrc-prefixes", "1:\n     2\t\n3-login a password "},
	{"pem-begin-prefixes", "a/b.key:1:-----BEGIN RSA PRIVATE KEY-----\na/b.key:2:"},
	{"netrc-paths", "a/.netrc:\na/.netrc:login a password "},
	{"netrc-paths-long-lines", "a:" + strings.Repeat("b", 1000) + "\na:login a password "},
	{"pem-begin-paths", "a/b.key:-----BEGIN RSA PRIVATE KEY-----\na/b.key:"},
	{"pem-end-prefixes", "     1\tQUFBQUFBQUFBQUFBQUFBQUFB\n+-----END RSA PRIVATE KEY-----\n"},
	{"pem-end-numbers", "1:-----END RSA PRIVATE KEY-----"},
	{"pem-end-paths", "a/b.key:QUFBQUFBQUFBQUFBQUFBQUFB\na/b.key:-----END RSA PRIVATE KEY-----\n"},
	{"pem-end-path-runs", "a:-----END RSA PRIVATE KEY-----"},
	{"netrc-path-lines", "a/.netrc:password $X account $Y\n"},
	{"netrc-path-long-lines", "a/.netrc:" + strings.Repeat("password $X ", 100) + "\n"},
	{"netrc-path-no-break", "a/.netrc:password $X "},
	{"netrc-account", "login a password b account "},
	{"netrc-accounts", "account "},
	{"netrc-path-accounts", "a/.netrc:account account \n"},
	{"context-dashes", "a.b-"},
	{"context-dash-lines", "a/b-c-d-e\n"},
	{"context-dash-json-lines", `a/b-c-d-e\n`},
	{"windows-paths", `C:\a\n-`},
	{"windows-path-lines", "C:\\a\\.netrc-password \n"},
	{"windows-path-breaks", `C:\n\r`},
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

// TestJSONHostile redacts JSON built to make the walker rescan: strings
// that hold JSON text that holds JSON text, keys that name secrets, cut
// escapes. Each is read in linear time and redacted idempotently.
func TestJSONHostile(t *testing.T) {
	const n = 1 << 20
	nested := `{"a":"x"}`
	for len(nested) < n {
		q, _ := json.Marshal(nested + " " + nested)
		nested = `[` + string(q) + `]`
	}
	for name, in := range map[string]string{
		"nested JSON text": nested,
		"secret keys":      `{` + strings.Repeat(`"password":"hunter22",`, n/22) + `"x":1}`,
		"key runs":         strings.Repeat(`"token":`, n/8),
		"cut escapes":      strings.Repeat(`"\u00`, n/5),
		"open strings":     strings.Repeat(`["{\"`, n/5),
	} {
		out, _ := JSON([]byte(in))
		if again, m := JSON(out); m != 0 || string(again) != string(out) {
			t.Errorf("%s: not idempotent", name)
		}
	}
}
