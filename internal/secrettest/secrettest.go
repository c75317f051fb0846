// Package secrettest holds the fake secrets and the places a hook payload
// carries text, for the tests that prove no secret is stored in clear: the
// privacy rules' unit tests and the end-to-end test of every ingest path.
//
// The secrets are assembled at run time so that the repository holds no
// string a secret scanner would flag.
package secrettest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

// Secrets of the kinds most often seen, also used alone by tests.
var (
	GitHub       = "ghp_" + strings.Repeat("a1B2c3D4e5F6", 3)
	AWSAccessKey = "AKIA" + "IOSFODNN7EXAMPLE"
	AWSSecret    = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	OpenAI       = "sk-" + strings.Repeat("Ab3dEf6hIj9L", 4)
	Anthropic    = "sk-ant-api03-" + strings.Repeat("Xy7_Qw2-Er5t", 8)
	JWT          = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0" + "." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)

// Sample is one secret of a kind the redactor knows: Text is what an agent
// would see (the secret with the context its kind needs, such as the name
// of a variable), Secret the part that must never be stored.
type Sample struct {
	Kind, Text, Secret string
}

// Samples returns a secret of every kind, assembled at run time so that the
// repository holds no string a secret scanner would flag.
func Samples() []Sample {
	alnum36 := strings.Repeat("a1B2c3D4e5F6", 3)
	pemBody := "MIIEowIBAAKCAQEA7bq" + strings.Repeat("x2Zq", 16) + "\n" + strings.Repeat("Qm9vb2", 10) + "==\n"
	pemKey := "-----BEGIN RSA " + "PRIVATE KEY-----\n" + pemBody + "-----END RSA " + "PRIVATE KEY-----"
	b64Key := base64.StdEncoding.EncodeToString([]byte(pemKey + "\n"))
	pemLine := "Lk4Vr8" + strings.Repeat("Tz2Wq6Hn9Pd3", 4) + "Xc5Jm7Bv1Ns" // a line of a key's body
	awsCSV := "Kq7/Xw2" + strings.Repeat("Zr9Lm4", 4) + "Tv+8Np1Qa"         // 40 bytes
	s := func(kind, secret string) Sample { return Sample{kind, secret, secret} }
	// NTLM hashes (pass the hash): the LM hash of the empty password, and NT hashes.
	lmHash := strings.Repeat("aad3b435b51404ee", 2)
	ntHash, ntHash2 := "c3a9f1e07b5d4286"+"a1f0e9d8c7b6a543", "7e21b0c95fd3a864"+"0b9c1d2e3f4a5b6c"
	return []Sample{
		s("anthropic_key", Anthropic),
		s("openai_key", OpenAI),
		s("openai_key", "sk-proj-"+strings.Repeat("Tq9_Zx1-Mn4b", 12)),
		s("github_token", GitHub),
		s("github_token", "github_pat_11ABCDEFG0"+strings.Repeat("x9Y8z7W6v5", 6)),
		s("gitlab_token", "glpat-"+"Ab1Cd2Ef3Gh4Ij5Kl6Mn"),
		s("slack_token", "xoxb-123456789012-1234567890123-"+"AbCdEfGhIjKlMnOpQrStUvWx"),
		{"slack_token", "https://hooks.slack.com/services/T0A1B2C3D/B0A1B2C3D/" + alnum36[:24], "T0A1B2C3D/B0A1B2C3D/" + alnum36[:24]},
		{"discord_webhook", "https://discord.com/api/webhooks/123456789012345678/" + strings.Repeat("Ab3_dEf-6h", 7), strings.Repeat("Ab3_dEf-6h", 7)},
		s("aws_access_key_id", AWSAccessKey),
		s("aws_access_key_id", "ASIA"+"Y34FZKBOKMUTVV7A"),
		{"aws_secret_access_key", "AWS_SECRET_ACCESS_KEY=" + AWSSecret, AWSSecret},
		s("google_api_key", "AIza"+"SyA-1234567890abcdefghijklmnopqrstu"),
		s("stripe_key", "sk_live_"+"4eC39HqLyjWDarjtT1zdp7dc"),
		s("stripe_key", "rk_test_"+"4eC39HqLyjWDarjtT1zdp7dc"),
		s("stripe_key", "whsec_"+alnum36[:32]),
		s("npm_token", "npm_"+alnum36),
		s("huggingface_token", "hf_"+"AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"),
		s("sendgrid_key", "SG."+"abcdefghijklmnopqrstuv"+"."+strings.Repeat("Ab1_", 11)),
		s("pypi_token", "pypi-AgEIcHlwaS5vcmc"+strings.Repeat("Zx9Yw8", 10)),
		s("digitalocean_token", "dop_v1_"+strings.Repeat("0a1b2c3d", 8)),
		s("docker_token", "dckr_pat_"+"Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr"),
		s("jwt", JWT),
		{"authorization", "Authorization: Bearer zq8Xv2Lm9Pw4Rt6Y", "zq8Xv2Lm9Pw4Rt6Y"},
		{"cookie", "Cookie: session=Qm3Xr8Zt2Wv7Ly4N", "Qm3Xr8Zt2Wv7Ly4N"},
		{"private_key", pemKey, pemBody[:40]},
		{"url_password", "postgres://app:Pw7Xq2Zr9Lm4@db.example.com:5432/app", "Pw7Xq2Zr9Lm4"},
		{"password", "DB_PASSWORD=Hv8Rq3Xz7Wm2", "Hv8Rq3Xz7Wm2"},
		// Passwords on the command lines of tools: a flag's value, a
		// flag's pass: argument, a positional argument, user%password.
		{"password", "redis-cli -a Rq7Xw2Zk9Lm4 ping", "Rq7Xw2Zk9Lm4"},
		{"password", "openssl rsa -in k.pem -passin pass:Hq4Zx8Wr2Nv6 -out o.pem", "Hq4Zx8Wr2Nv6"},
		{"password", "htpasswd -b .htpasswd alice Vm3Lq9Xt5Rz8", "Vm3Lq9Xt5Rz8"},
		{"password", "smbclient //srv/share -U alice%Jw6Pk2Zr8Xq4 -c ls", "Jw6Pk2Zr8Xq4"},
		{"password", `htpasswd -bc .htpasswd "John Doe" Tw4Rk8Zq2Mx6`, "Tw4Rk8Zq2Mx6"},
		{"password", "cmd /c net user bob Pz7Wq3Xk9Rv2 /add", "Pz7Wq3Xk9Rv2"},
		{"password", "smbmap -u bob -p Kx5Rm9Wq3Zt7 -H srv", "Kx5Rm9Wq3Zt7"},
		{"password", "netexec smb srv -u bob -p Qz8Tv4Xm6Wr2", "Qz8Tv4Xm6Wr2"},
		{"password", "nxc smb srv -u bob -p Qz8Tv4Xm6Wr2 Wk3Rp7Zn5Xq9 --shares", "Wk3Rp7Zn5Xq9"},
		{"password", "nxc smb srv -u bob -p $PASS Vr6Kq2Wz8Xm4 --shares", "Vr6Kq2Wz8Xm4"},
		{"password", "nxc smb srv -u bob -p ${PASS:-x} Zm7Rw3Xq9Kt5 --shares", "Zm7Rw3Xq9Kt5"},
		{"password", "nxc smb srv -u bob -H " + lmHash + ":" + ntHash, ntHash},
		{"password", "nxc smb srv -u bob -H=" + lmHash + ":" + ntHash2, ntHash2},
		{"password", "nxc smb srv -u bob -p=Wq4Zt8Xr2Kv6 --shares", "Wq4Zt8Xr2Kv6"},
		{"password", "impacket-psexec -hashes :" + ntHash2 + " corp/bob@srv", ntHash2},
		{"password", "powershell -ExecutionPolicy Bypass -Command net user bob Hn4Wq8Zr2Tx6 /add", "Hn4Wq8Zr2Tx6"},
		{"password", `mysql -u root -pMq5Zr\ Tx8Wk3Lp app`, "Tx8Wk3Lp"},
		// The default of a shell parameter, written in the command.
		{"password", "PGPASSWORD=${PGPASSWORD:-Nx4Wq8Zr2Kt6} psql -h db", "Nx4Wq8Zr2Kt6"},
		// Every operator of bash's that takes a word, a bare PASS, a
		// default longer than the braces are first read for, a nested
		// expansion in it.
		{"password", "echo ${DB_PASSWORD-Kw7Zr3Xq9Mt5}", "Kw7Zr3Xq9Mt5"},
		{"password", "echo ${PASS:-Rz4Xm8Wq2Tv6}", "Rz4Xm8Wq2Tv6"},
		{"password", "DB_PASSWORD=${A:-" + strings.Repeat("Tq6Wx2Zr8Km4", 24) + "Hx5Vn9Pc3Lj7} ./run", "Hx5Vn9Pc3Lj7"},
		{"password", "echo ${DB_PASSWORD:-Nv3Qx8${SUFFIX}Wr5Kz2Lm7P}", "Wr5Kz2Lm7P"},
		{"password", "DB_PASSWORD=Hd4Kx9${SUFFIX}Qm7Zt3Wv5R ./run", "Qm7Zt3Wv5R"},
		{"secret", "export API_TOKEN=Rv8$(cat part)Lx3Zq6Nw9T", "Lx3Zq6Nw9T"},
		{"password", "echo ${DB_PASSWORD:-${VAULT_PW}Tz5Wq8Kr2Mx}", "Tz5Wq8Kr2Mx"},
		{"url_password", "curl https://app:${PW:-" + strings.Repeat("Gm2Xr7Vk4Qz9", 24) + "Bn6Hw3Jt8Ly5}@db.example.com/", "Bn6Hw3Jt8Ly5"},
		{"password", "curl -u app:${PW:-" + strings.Repeat("Gm2Xr7Vk4Qz9", 24) + "Cq7Jn4Ws9Pd2} https://x", "Cq7Jn4Ws9Pd2"},
		// A URL's user part that is such a default, its braces closed or not.
		{"url_password", "curl https://${U:-" + strings.Repeat("Gm2Xr7Vk4Qz9", 24) + "}:Wd3Kp8Zx5Rt7@db.example.com/", "Wd3Kp8Zx5Rt7"},
		{"url_password", "curl https://${U:-" + strings.Repeat("Gm2Xr7Vk4Qz9", 24) + ":Fz6Lq2Vn9Hc4@db.example.com/", "Fz6Lq2Vn9Hc4"},
		{"url_password", "curl https://${U:-app:Mb5Tw8Jq3Ys6@db.example.com}/x", "Mb5Tw8Jq3Ys6"},
		{"url_password", "curl https://${U:-" + strings.Repeat("Gm2Xr7Vk4Qz9", 24) + ":Pc7Hn4Rd2Wv9@db.example.com}:8443/x", "Pc7Hn4Rd2Wv9"},
		// A command substitution among NetExec's passwords.
		{"password", "nxc smb srv -u bob -p $(cat pw.txt) Jm6Tz2Wx8Rq4 --shares", "Jm6Tz2Wx8Rq4"},
		{"secret", "API_TOKEN=Tz5Nq8Xw3Rv6", "Tz5Nq8Xw3Rv6"},
		// Secrets known by what stands beside them, as files and tools
		// write them: the CSV of an AWS access key, a .netrc entry, a
		// kubeconfig's key in base64, Laravel's APP_KEY.
		{"aws_secret_access_key", "AKIA" + "QUMPMHS49PJ96ARB," + awsCSV, awsCSV},
		{"password", "machine api.example.com login deploy password Wq7Xr2Zk9Lm4Tv", "Wq7Xr2Zk9Lm4Tv"},
		{"private_key", "client-key-data: " + b64Key, b64Key[24:88]},
		// The same as tools that print files line by line show them: a
		// .netrc entry under cat -n, a key cut before its END line under
		// grep -rn, a key's tail under a diff's marks.
		{"password", "     1\tmachine api.example.com\n     2\t  login deploy\n     3\t  password Hv6Qz3Wx8Kt2Rm", "Hv6Qz3Wx8Kt2Rm"},
		{"private_key", "certs/tls.key:1:-----BEGIN " + "PRIVATE KEY-----\ncerts/tls.key:2:MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\ncerts/tls.key:3:" + pemLine, pemLine},
		{"private_key", " MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-" + pemLine + "\n+" + pemLine[1:] + "A\n -----END " + "PRIVATE KEY-----", pemLine},
		// grep -r and git grep without -n: the path alone before each line.
		{"password", "home/.netrc:machine api.example.com\nhome/.netrc:  login deploy\nhome/.netrc:  password Rk4Wz8Tq2Xn6Hm", "Rk4Wz8Tq2Xn6Hm"},
		{"private_key", "certs/tls.key:-----BEGIN " + "PRIVATE KEY-----\ncerts/tls.key:MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\ncerts/tls.key:" + pemLine, pemLine},
		// grep -r password ~: one line of a .netrc among other files'
		// lines, known by its path; and a key's tail under its path
		// alone, its BEGIN line not printed.
		{"password", "README.md:Set the password in ~/.netrc first.\nhome/.netrc:  password Lx7Tq3Wz9Rk2Vm", "Lx7Tq3Wz9Rk2Vm"},
		// A .netrc's account, the second password ftp sends, in an entry
		// and on a line grep -r account prints alone among others.
		{"password", "machine ftp.example.com login deploy account Vq3Hx8Tz5Wn2Kd", "Vq3Hx8Tz5Wn2Kd"},
		{"password", "README.md:Open an account first.\nhome/.netrc:  account Pz6Rm2Xk9Lw4Tj", "Pz6Rm2Xk9Lw4Tj"},
		// grep -r -A, -B, -C: the lines around a match behind the path
		// and a '-'; and a Windows path before the line.
		{"password", "home/.netrc:  login deploy\nhome/.netrc-  password Qw5Zt8Kn3Xr7Vb", "Qw5Zt8Kn3Xr7Vb"},
		{"private_key", "my-certs/tls.key-MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nmy-certs/tls.key-" + pemLine + "\nmy-certs/tls.key:-----END " + "PRIVATE KEY-----", pemLine},
		{"password", "README.md:Set the password in _netrc first.\r\nC:\\Users\\dev\\_netrc:  password Tn4Wx9Kq2Zr6Lm", "Tn4Wx9Kq2Zr6Lm"},
		{"private_key", "certs/tls.key:MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\ncerts/tls.key:" + pemLine + "\ncerts/tls.key:-----END " + "PRIVATE KEY-----", pemLine},
		{"secret", "APP_KEY=base64:" + "lQxmJXKm7d0U4Lxa" + "reAlUx6iyO+opCKW3Ffe6PILpUc=", "lQxmJXKm7d0U4Lxa" + "reAlUx6iyO+opCKW3Ffe6PILpUc="},
	}
}

// Placement puts a secret's text somewhere a payload carries text.
type Placement struct {
	Name string
	// Payload returns the payload with the text placed; lit writes the
	// text as a JSON string literal, each placement choosing how.
	Payload func(lit func(string) string, text string) string
}

// IDs are the members every placement's payload starts with: one session.
const IDs = `"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d.jsonl","cwd":"/home/dev/src/demo"`

// Placements returns every place a payload carries text: prompts,
// commands, nested input, keys, written files, errors, stdout and stderr
// at the start, after a newline or a tab and around the preview's cut, MCP
// content, the tool_response of each tool, Codex outputs, batches.
func Placements() []Placement {
	post := func(tool, input, response string) string {
		return `{` + IDs + `,"hook_event_name":"PostToolUse","tool_name":"` + tool + `","tool_input":` + input +
			`,"tool_response":` + response + `,"tool_use_id":"toolu_01"}`
	}
	big := strings.Repeat("build output line ✓\n", 400) // 8 KiB: previews take the long path
	return []Placement{
		{"prompt", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"UserPromptSubmit","prompt":` + lit(x) + `}`
		}},
		{"prompt after a newline", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"UserPromptSubmit","prompt":` + lit("use this:\n"+x) + `}`
		}},
		{"command", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":` + lit("echo ok\n"+x) + `},"tool_use_id":"t"}`
		}},
		{"nested in input", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"PreToolUse","tool_name":"mcp__api__call","tool_input":{"request":{"env":[{"value":` + lit(x) + `}]}},"tool_use_id":"t"}`
		}},
		{"key of input", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"PreToolUse","tool_name":"mcp__api__call","tool_input":{"headers":{` + lit(x) + `:"v"}},"tool_use_id":"t"}`
		}},
		{"key of the payload", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"Notification",` + lit(x) + `:1}`
		}},
		{"written file", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/w/.env","content":` + lit("# env\n"+x+"\n") + `},"tool_use_id":"t"}`
		}},
		{"error", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"make"},"tool_use_id":"t","error":` + lit("Exit code 1\n"+x) + `}`
		}},
		{"stdout start", func(lit func(string) string, x string) string {
			return post("Bash", `{"command":"env"}`, `{"stdout":`+lit(x)+`,"stderr":"","interrupted":false}`)
		}},
		{"stdout second line", func(lit func(string) string, x string) string {
			return post("Bash", `{"command":"env"}`, `{"stdout":`+lit("HOME=/root\n"+x+"\n")+`,"stderr":"","interrupted":false}`)
		}},
		{"stderr after a tab", func(lit func(string) string, x string) string {
			return post("Bash", `{"command":"env"}`, `{"stdout":"","stderr":`+lit("warning:\t"+x)+`,"interrupted":false}`)
		}},
		{"stdout, long, near the head cut", func(lit func(string) string, x string) string {
			return post("Bash", `{"command":"env"}`, `{"stdout":`+lit(big[:480]+x+"\n"+big)+`}`)
		}},
		{"stdout, long, at the end", func(lit func(string) string, x string) string {
			return post("Bash", `{"command":"env"}`, `{"stdout":`+lit(big+big+x)+`,"stderr":""}`)
		}},
		{"MCP content array", func(lit func(string) string, x string) string {
			return post("mcp__vault__read", `{"path":"kv/app"}`, `[{"type":"text","text":`+lit("found:\n"+x)+`}]`)
		}},
		{"MCP content object", func(lit func(string) string, x string) string {
			return post("mcp__vault__read", `{"path":"kv/app"}`, `{"content":[{"type":"text","text":`+lit("found:\n"+x)+`}],"isError":false}`)
		}},
		{"Read", func(lit func(string) string, x string) string {
			return post("Read", `{"file_path":"/w/.env"}`, `{"type":"text","file":{"filePath":"/w/.env","content":`+lit("A=1\n"+x+"\n")+`,"numLines":2}}`)
		}},
		{"Edit", func(lit func(string) string, x string) string {
			return post("Edit", `{"file_path":"/w/a","old_string":"a","new_string":`+lit(x)+`}`,
				`{"filePath":"/w/a","oldString":"a","newString":`+lit(x)+`,"originalFile":`+lit("a\n"+x)+`,"structuredPatch":[{"lines":[`+lit("+"+x)+`]}]}`)
		}},
		{"Grep", func(lit func(string) string, x string) string {
			return post("Grep", `{"pattern":"KEY"}`, `{"mode":"content","numFiles":1,"filenames":[],"content":`+lit("a.env:3:"+x)+`}`)
		}},
		{"WebFetch", func(lit func(string) string, x string) string {
			return post("WebFetch", `{"url":"https://x"}`, `{"bytes":9,"code":200,"result":`+lit("page\n"+x)+`,"url":"https://x"}`)
		}},
		{"Agent", func(lit func(string) string, x string) string {
			return post("Agent", `{"prompt":"find keys"}`, `{"status":"completed","agentId":"a1","content":[{"type":"text","text":`+lit("Found:\n"+x)+`}]}`)
		}},
		{"Codex output string", func(lit func(string) string, x string) string {
			return post("Bash", `{"command":"env"}`, lit("Exit code: 0\nOutput:\n"+x+"\n"))
		}},
		{"Codex JSON text in a string", func(lit func(string) string, x string) string {
			inner, _ := json.Marshal(map[string]string{"output": "ok\n" + x})
			return post("spawn_agent", `{"message":"go"}`, lit(string(inner)))
		}},
		{"Codex JSON text in a string, long, at the end", func(lit func(string) string, x string) string {
			// The preview's tail is cut from the middle of the JSON text,
			// where a line break still reads \n.
			inner, _ := json.Marshal(map[string]string{"output": big + big + "ok\n" + x})
			return post("exec_command", `{"cmd":"env"}`, lit(string(inner)))
		}},
		{"tool_calls", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Bash","tool_input":{"command":` + lit("echo\n"+x) +
				`},"tool_use_id":"t1","tool_response":` + lit("out\n"+x) + `},{"tool_name":"mcp__v__r","tool_input":{` + lit(x) + `:1},"tool_use_id":"t2","tool_response":[{"type":"text","text":` + lit("\t"+x) + `}]}]}`
		}},
		{"statusLine and others", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"Stop","last_assistant_message":` + lit("Done.\n"+x) + `,"background_tasks":[{"command":` + lit(x) + `}]}`
		}},
		// A key that repeats: readers keep its last value, which is all the
		// rules see; the earlier one must not be stored as it came.
		{"repeated prompt", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"UserPromptSubmit","prompt":` + lit(x) + `,"prompt":"hello"}`
		}},
		{"repeated prompt, the key escaped", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"UserPromptSubmit","pro\u006dpt":` + lit(x) + `,"prompt":"hello"}`
		}},
		{"repeated tool_input", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":` + lit("echo\n"+x) + `},"tool_input":{"command":"ls"},"tool_use_id":"t"}`
		}},
		{"repeated key in tool_input", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":` + lit("echo\n"+x) + `,"command":"ls"},"tool_use_id":"t"}`
		}},
		{"repeated id", func(lit func(string) string, x string) string {
			return `{"session_id":` + lit(x) + `,` + IDs + `,"hook_event_name":"Notification","message":"hi"}`
		}},
		{"repeated tool_response", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"env"},"tool_response":{"stdout":` + lit(x) +
				`},"tool_response":null,"tool_use_id":"toolu_01"}`
		}},
		{"repeated key of a capture object", func(lit func(string) string, x string) string {
			return post("Bash", `{"command":"env"}`, `{"hookwatch_capture":"none","bytes":`+lit(x)+`,"bytes":5}`)
		}},
		{"repeated key of a capture object in a batch", func(lit func(string) string, x string) string {
			return `{` + IDs + `,"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Bash","tool_input":{"command":"env"},"tool_use_id":"t1","tool_response":{"hookwatch_capture":"none","bytes":` +
				lit(x) + `,"bytes":5}}]}`
		}},
	}
}

// Literals are the ways a JSON string can be written: as encoding/json
// writes it, with every '/' escaped, and with every letter and digit of the
// secret as a \u escape.
var Literals = []struct {
	Name string
	Lit  func(string) string
}{
	{"plain", func(s string) string { b, _ := json.Marshal(s); return string(b) }},
	{"escaped slashes", func(s string) string {
		b, _ := json.Marshal(s)
		return strings.ReplaceAll(string(b), "/", `\/`)
	}},
	{"unicode escapes", func(s string) string {
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range s {
			switch {
			case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
				fmt.Fprintf(&b, `\u%04X`, r)
			default:
				q, _ := json.Marshal(string(r))
				b.Write(q[1 : len(q)-1])
			}
		}
		b.WriteByte('"')
		return b.String()
	}},
}

// Leaks reports whether secret can be read in out: in its bytes, or in the
// text of any of its strings decoded once, twice or three times (a preview
// holds JSON text in a string, a Codex output JSON text in that).
func Leaks(out []byte, secret string) bool {
	texts := [][]byte{out}
	for level := 0; level < 4 && len(texts) > 0; level++ {
		var next [][]byte
		for _, text := range texts {
			if bytes.Contains(text, []byte(secret)) {
				return true
			}
			it := jsonscan.NewStrings(text)
			for s, ok := it.Next(); ok; s, ok = it.Next() {
				if bytes.IndexByte(text[s.Start:s.End], '\\') >= 0 {
					next = append(next, jsonscan.AppendDecoded(nil, text[s.Start:s.End]))
				}
			}
		}
		texts = next
	}
	return false
}
