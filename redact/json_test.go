package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

func TestJSON(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		got, n := JSON([]byte(in))
		if string(got) != want {
			t.Errorf("JSON(%s)\n got %s\nwant %s", in, got, want)
		}
		if wantN := strings.Count(want, "[REDACTED:") - strings.Count(in, "[REDACTED:"); n != wantN {
			t.Errorf("JSON(%s): n = %d, want %d", in, n, wantN)
		}
		if json.Valid([]byte(in)) != json.Valid(got) {
			t.Errorf("JSON(%s) = %s: validity changed", in, got)
		}
		if again, m := JSON(got); !bytes.Equal(again, got) || m != 0 {
			t.Errorf("JSON is not idempotent on %s: %s (n=%d)", got, again, m)
		}
	}

	// Keys, numbers, order and whitespace stay; only string values change.
	f(`{"b": 1.5e3, "a": [true, false, null], "command": "export DB_PASSWORD=hunter2", "z": {}}`,
		`{"b": 1.5e3, "a": [true, false, null], "command": "export DB_PASSWORD=`+r("password")+`", "z": {}}`)
	f("[\n  \""+ghp+"\",\n  -0.0\n]", "[\n  \""+r("github_token")+"\",\n  -0.0\n]")
	f(`"`+akia+`"`, `"`+r("aws_access_key_id")+`"`)

	// Escaped strings are decoded before redaction and re-encoded after.
	f(`{"command":"curl -H \"Authorization: Bearer abc123\" https://api.example.com\necho done"}`,
		`{"command":"curl -H \"Authorization: Bearer `+r("authorization")+`\" https://api.example.com\necho done"}`)
	f(`{"k":"\u0041KIAIOSFODNN7EXAMPLE \u00e9\t"}`, `{"k":"`+r("aws_access_key_id")+" \u00e9\\t\"}")
	f(`{"cmd":"echo \"x\" && PASSWORD=\"hunter 2\" ./run"}`, `{"cmd":"echo \"x\" && PASSWORD=\"`+r("password")+`\" ./run"}`)

	// A key that names a secret redacts its whole string value.
	f(`{"password":"hunter2","user":"app"}`, `{"password":"`+r("password")+`","user":"app"}`)
	f(`{"api_key":"`+aiza+`"}`, `{"api_key":"`+r("google_api_key")+`"}`)
	f(`{"headers":{"Authorization":"Bearer abc123","Accept":"*/*"}}`, `{"headers":{"Authorization":"Bearer `+r("authorization")+`","Accept":"*/*"}}`)
	f(`{"authorization":"abc123"}`, `{"authorization":"`+r("authorization")+`"}`)
	f(`{"pass\u0077ord":"hunter2"}`, `{"pass\u0077ord":"`+r("password")+`"}`)
	f(`{"client_secret":"a b c"}`, `{"client_secret":"`+r("secret")+`"}`)
	f(`{"Cookie":"session=abc"}`, `{"Cookie":"`+r("cookie")+`"}`)
	f(`{"password":"Passw0rd123"}`, `{"password":"`+r("password")+`"}`)
	f(`{"prompt":"my password is DB_PASSWORD=SuperSecretPw99"}`, `{"prompt":"my password is DB_PASSWORD=`+r("password")+`"}`)
	f(`{"password":"#Xk93mzPq77"}`, `{"password":"`+r("password")+`"}`)
	f(`{"env":{"DB_PASSWORD":"!Xk93mzPq77"}}`, `{"env":{"DB_PASSWORD":"`+r("password")+`"}}`)
	f(`{"password":"!hunter","token":"*abc","secret":"#f8f8f2"}`, `{"password":"`+r("password")+`","token":"`+r("secret")+`","secret":"`+r("secret")+`"}`)
	f(`{"command":"mysql -u root -pXk93mzPq77 db"}`, `{"command":"mysql -u root -p`+r("password")+` db"}`)
	f(`{"command":"sshpass -p Xk93mzPq77 ssh h"}`, `{"command":"sshpass -p `+r("password")+` ssh h"}`)
	f(`{"command":"docker login -u me -p Xk93mzPq77"}`, `{"command":"docker login -u me -p `+r("password")+`"}`)

	f(`{"env":{"DB_PASSWORD":"${PASS:-Realpw9x}","API_TOKEN":"${T:-`+ghp+`}","SECRET":"${S:-two words}"}}`,
		`{"env":{"DB_PASSWORD":"${PASS:-`+r("password")+`}","API_TOKEN":"${T:-`+r("github_token")+`}","SECRET":"${S:-`+r("secret")+`}"}}`)
	f(`{"password":"${`+ghp+`-x1}"}`, `{"password":"${`+r("github_token")+`-`+r("password")+`}"}`) // the rest is text still
	long := strings.Repeat("Xk93mzPq77", 30)
	f(`{"env":{"DB_PASSWORD":"${A:-`+long+`}","API_TOKEN":"${A:-x${B}}"},"command":"echo ${PASS-pw} ${DB_PASSWORD:-`+long+`}"}`,
		`{"env":{"DB_PASSWORD":"${A:-`+r("password")+`}","API_TOKEN":"${A:-`+r("secret")+`}"},"command":"echo ${PASS-`+r("password")+`} ${DB_PASSWORD:-`+r("password")+`}"}`)

	// A brace inside an expansion opens nothing, as in bash: the first
	// } closes it (the default p{ss; S3{cr, then et after it, one word);
	// a default whose braces do not close runs to the string's end, and
	// is redacted as a value all the same, as on a command line.
	f(`{"env":{"DB_PASSWORD":"${PASS:-p{ss}","API_TOKEN":"${T:-S3{cr}et","GITHUB_TOKEN":"${K:-S3cr"}}`,
		`{"env":{"DB_PASSWORD":"${PASS:-`+r("password")+`}","API_TOKEN":"`+r("secret")+`","GITHUB_TOKEN":"${K:-`+r("secret")+`"}}`)

	// Text after an expansion makes one word with it, in a string under
	// a secret's key as in a command.
	f(`{"env":{"DB_PASSWORD":"${VAULT_PW}Xk93","API_TOKEN":"${A:-${B}x}","SECRET":"${A:-x}Xk93"},"command":"export API_TOKEN=abc$(cat x)def"}`,
		`{"env":{"DB_PASSWORD":"`+r("password")+`","API_TOKEN":"${A:-`+r("secret")+`}","SECRET":"`+r("secret")+`"},"command":"export API_TOKEN=`+r("secret")+`"}`)

	// …unless it is empty, a reference, not a string, or not a secret-bearing key.
	f(`{"password":"${A:-}","token":"${A:-$B}","secret":"${A:?need A}","api_key":"${A#x}","DB_PASSWORD":"${A:-${B}}"}`,
		`{"password":"${A:-}","token":"${A:-$B}","secret":"${A:?need A}","api_key":"${A#x}","DB_PASSWORD":"${A:-${B}}"}`)
	f(`{"password":"${HOME}/.pw","token":"$(cat f)","secret":"${A}${B}"}`, `{"password":"${HOME}/.pw","token":"$(cat f)","secret":"${A}${B}"}`)
	f(`{"password":""}`, `{"password":""}`)
	f(`{"token":"$TOKEN","api_key":"${API_KEY}"}`, `{"token":"$TOKEN","api_key":"${API_KEY}"}`)
	f(`{"password":12345,"token":null,"secret":true}`, `{"password":12345,"token":null,"secret":true}`)
	f(`{"Authorization":"Bearer"}`, `{"Authorization":"Bearer"}`)
	f(`{"max_tokens":"100","tokenizer":"bpe","input_tokens":3}`, `{"max_tokens":"100","tokenizer":"bpe","input_tokens":3}`)
	f(`{"tokens":["a","b"]}`, `{"tokens":["a","b"]}`)
	f(`{"password":["hunter2"]}`, `{"password":["hunter2"]}`)
	f(`{"password":"#{db_password}","token":"@token","secret":"***","api_key":"<api-key>"}`, `{"password":"#{db_password}","token":"@token","secret":"***","api_key":"<api-key>"}`)
	f(`{"password":"# set in .env","token":"!"}`, `{"password":"# set in .env","token":"!"}`)

	// Keys are redacted like values, and so are escaped secrets.
	f(`{"`+ghp+`":1,"b":{"`+akia+`":"x"}}`, `{"`+r("github_token")+`":1,"b":{"`+r("aws_access_key_id")+`":"x"}}`)
	f(`{"url":"postgres:\/\/app:hunter2@db.example.com\/x"}`, `{"url":"postgres://app:`+r("url_password")+`@db.example.com/x"}`)
	f(`{"stdout":"line 1\n`+ghp+`\tdone"}`, `{"stdout":"line 1\n`+r("github_token")+`\tdone"}`)

	// A string holding JSON text (a Codex tool's output) is redacted as JSON
	// in turn: inside it the secret follows the escape "\n".
	f(`{"tool_response":"{\"out\":\"ok\\n`+akia+`\"}"}`, `{"tool_response":"{\"out\":\"ok\\n`+r("aws_access_key_id")+`\"}"}`)

	// Text that is not valid JSON has its strings redacted all the same:
	// breaking the syntax around a secret does not let it through.
	f(`{"a":"`+ghp, `{"a":"`+r("github_token"))
	f(`{"a" "`+ghp+`"}`, `{"a" "`+r("github_token")+`"}`)
	f(`["`+ghp+`",]`, `["`+r("github_token")+`",]`)
	f(`{"password":"hunter2",}`, `{"password":"`+r("password")+`",}`)

	// Text without secrets is returned unchanged, valid or not.
	for _, in := range []string{
		``, ` `, `{`, `{"a":"x"`, `{"a" "b"}`, `01`, `1.`, `-`, `1e`, `"\x"`, "\"\x01\"", `"\u12"`, `tru`, `{"a":1]`, `[}`,
		`{"a":"no secret \u00e9 \/ \n"}`,
	} {
		got, n := JSON([]byte(in))
		if string(got) != in || n != 0 {
			t.Errorf("JSON(%q) = %q, %d; want it unchanged", in, got, n)
		}
	}
}

func TestJSONReturnsInput(t *testing.T) {
	raw := readFile(t, "testdata/pretooluse-bash.json")
	out, n := JSON(raw)
	if n != 0 || &out[0] != &raw[0] {
		t.Fatalf("JSON copied a payload without secrets (n=%d)", n)
	}
	if allocs := testing.AllocsPerRun(100, func() { JSON(raw) }); allocs != 0 {
		t.Errorf("JSON allocates %v times on a payload without secrets, want 0", allocs)
	}
}

func TestJSONDepth(t *testing.T) {
	f := func(depth int) {
		t.Helper()
		in := []byte(strings.Repeat("[", depth) + `"` + ghp + `"` + strings.Repeat("]", depth))
		got, n := JSON(in)
		if n != 1 || bytes.Contains(got, []byte(ghp)) {
			t.Errorf("depth %d: n = %d, secret kept", depth, n)
		}
		if json.Valid(got) != json.Valid(in) {
			t.Errorf("depth %d: validity changed", depth)
		}
	}
	f(1)
	f(jsonscan.MaxDepth)
	f(jsonscan.MaxDepth + 1)
	f(100000)
}

func FuzzJSON(f *testing.F) {
	f.Add(readFile(f, "testdata/pretooluse-bash.json"))
	for _, s := range []string{
		`{"password":"${A}x","token":"${B:-${C}y}z","c":"DB_PASSWORD=a$(b)c` + "`d`" + `e"}`,
		`{"command":"curl -H \"Authorization: Bearer abc\" x"}`, `{"password":"x1"}`, `["\ud800\udc00","\ud800"]`,
		`{"a":[1,-2.5e+3,true,false,null,{}]}`, `"` + ghp + `"`, `{"k":"\u0041KIAIOSFODNN7EXAMPLE"}`,
		`{"Authorization":"Bearer [REDACTED:authorization]"}`, `{"pem":"` + strings.ReplaceAll(pemRSA, "\n", `\n`) + `"}`,
		`{"password":"${A:-x1}","token":" ${B:+y z} ","c":"DB_PASSWORD=${A-\"b\"}"}`,
		`{"password":"${A:-` + strings.Repeat("x1", 200) + `}","c":"echo ${PASS?y} $(cat f)\n${DB_PASSWORD:-a${B}"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		orig := bytes.Clone(in)
		out, n := JSON(in)
		if !bytes.Equal(in, orig) {
			t.Fatal("JSON modified its input")
		}
		if (n == 0) != bytes.Equal(out, in) {
			t.Fatalf("n = %d does not match the change: %q -> %q", n, in, out)
		}
		if again, m := JSON(out); !bytes.Equal(again, out) || m != 0 {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, out, again)
		}
		if !json.Valid(in) {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("valid input gave invalid output: %q -> %q", in, out)
		}
		if (n == 0) != bytes.Equal(out, in) {
			t.Fatalf("n = %d does not match the change: %q -> %q", n, in, out)
		}
		if again, m := JSON(out); !bytes.Equal(again, out) || m != 0 {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, out, again)
		}
		if a, b := shape(t, in), shape(t, out); a != b {
			t.Fatalf("structure or keys changed:\n%s\n%s", a, b)
		}
	})
}

// shape renders a JSON value with every string value blanked and every key
// redacted, so that two values with the same keys, numbers and structure
// render the same.
func shape(t *testing.T, raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b strings.Builder
	type frame struct{ obj, wantKey bool }
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return b.String()
		}
		if err != nil {
			t.Fatalf("cannot decode %q: %v", raw, err)
		}
		closing := tok == json.Delim('}') || tok == json.Delim(']')
		isKey := false
		if top := len(stack) - 1; top >= 0 && stack[top].obj && !closing {
			isKey = stack[top].wantKey
			stack[top].wantKey = !isKey
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, frame{obj: true, wantKey: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
			}
			b.WriteString(v.String())
		case string:
			if isKey {
				v, _ = String(v) // keys are redacted too
				fmt.Fprintf(&b, "%q:", v)
			} else {
				b.WriteString(`"",`)
			}
		default:
			fmt.Fprintf(&b, "%v,", v)
		}
	}
}

func readFile(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

func BenchmarkString(b *testing.B) {
	bench := func(name, s string) {
		b.Run(name, func(b *testing.B) {
			_, n := String(s)
			b.ReportMetric(float64(n), "secrets")
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				String(s)
			}
		})
	}
	bench("shell-1KiB", shell1KiB)
	bench("source-1MiB", goSource(b, 1<<20))
	bench("secrets-1KiB", secrets1KiB())
}

func BenchmarkJSON(b *testing.B) {
	bench := func(name string, raw []byte) {
		b.Run(name, func(b *testing.B) {
			_, n := JSON(raw)
			b.ReportMetric(float64(n), "secrets")
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				JSON(raw)
			}
		})
	}
	raw := readFile(b, "testdata/pretooluse-bash.json")
	bench("pretooluse", raw)
	withSecret := bytes.Replace(raw, []byte(`go vet ./... 2>&1; exit 3`),
		[]byte(`curl -H \"Authorization: Bearer abc123\" https://api.example.com/v1/x && PGPASSWORD=hunter2 psql -h db`), 1)
	bench("pretooluse-secrets", withSecret)
}

// shell1KiB is a long, realistic shell command without secrets.
var shell1KiB = func() string {
	const line = `cd /home/dev/src/demo && go test ./... -run 'TestParse|TestApply' -count=1 2>&1 | tee /tmp/test.log; ` +
		`grep -rn "func (s \*Server)" --include=*.go internal/ | head -50 && docker build -t registry.example.com/app:1.2.3 ` +
		`--build-arg VERSION=1.2.3 --build-arg GOFLAGS=-mod=mod . && kubectl -n staging set image deploy/app app=registry.example.com/app:1.2.3 ` +
		`&& curl -fsS -H 'Accept: application/json' "http://localhost:8080/healthz?verbose=1" | jq -r '.checks[] | select(.ok == false) | .name' ; `
	s := strings.Repeat(line, 1024/len(line)+1)
	return s[:1024]
}()

// secrets1KiB is shell1KiB with several secrets mixed in.
func secrets1KiB() string {
	s := `export GITHUB_TOKEN=` + ghp + ` AWS_ACCESS_KEY_ID=` + akia + ` AWS_SECRET_ACCESS_KEY=` + awsSecret + `; ` +
		`curl -H "Authorization: Bearer ` + jwt + `" https://api.example.com/v1/me; ` +
		`psql postgres://app:hunter2@db:5432/app -c 'select 1'; OPENAI_API_KEY=` + openai + ` python run.py; ` + shell1KiB
	return s[:1024]
}

// goSource returns size bytes of real Go source code: the standard library's
// net/http and net packages, which every Go installation has.
func goSource(b *testing.B, size int) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("cannot find GOROOT: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	files, _ := filepath.Glob(filepath.Join(src, "net", "http", "*.go"))
	more, _ := filepath.Glob(filepath.Join(src, "net", "*.go"))
	files = append(files, more...)
	var buf bytes.Buffer
	for _, name := range files {
		if buf.Len() >= size {
			break
		}
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		buf.Write(data)
	}
	if buf.Len() < size {
		b.Skipf("only %d bytes of Go source", buf.Len())
	}
	return buf.String()[:size]
}

// TestJSONRangeOpenKey: a piece that starts inside the body of a private
// key with no END line (a cut log), further from its BEGIN line than any
// window a caller reads around the piece, is redacted as the key's rest;
// base64 with no BEGIN line before it, or after a key's END line, is not.
func TestJSONRangeOpenKey(t *testing.T) {
	body := strings.Repeat("MIIEowIBAAKCAQEA7bqx2Zq\n", 400)
	begin := "-----BEGIN RSA " + "PRIVATE KEY-----\n"
	end := "-----END RSA " + "PRIVATE KEY-----\n"
	for _, c := range []struct {
		name, text string
		redacted   bool
	}{
		{"open key", "log\n" + begin + body, true},
		{"open key, then text", "log\n" + begin + body + "[cut] done", true},
		{"base64 alone", "log\n" + body, false},
		{"after a closed key", begin + "MIIE\n" + end + body, false},
	} {
		raw, _ := json.Marshal(c.text)
		from := len(raw) - 2000
		out, n := JSONRange(raw, from, len(raw))
		if got := strings.Contains(string(out), "MIIEowIBAAKCAQEA"); got == c.redacted || (n > 0) != c.redacted {
			t.Errorf("%s: JSONRange = %d redactions, %.120q…", c.name, n, out)
		}
		if c.redacted && !strings.HasPrefix(string(out), "[REDACTED:private_key]") {
			t.Errorf("%s: the piece does not start with the key's marker: %.120q", c.name, out)
		}
		if strings.HasSuffix(c.text, "done") && !strings.HasSuffix(string(out), `[cut] done"`) {
			t.Errorf("%s: the text after the key is lost: %.120q", c.name, out)
		}
	}
}
