package redact

import (
	"strings"
	"testing"
)

// Fake secrets are assembled at run time so that the repository holds no
// string that a secret scanner would flag.
var (
	alnum36   = strings.Repeat("a1B2c3D4e5F6", 3)                   // 36
	mixed48   = strings.Repeat("Ab3dEf6hIj9L", 4)                   // 48
	anthropic = "sk-ant-api03-" + strings.Repeat("Xy7_Qw2-Er5t", 8) // 96 after the prefix
	openai    = "sk-" + mixed48
	openaiPrj = "sk-proj-" + strings.Repeat("Tq9_Zx1-Mn4b", 12)
	ghp       = "ghp_" + alnum36
	ghs       = "ghs_" + alnum36
	ghPAT     = "github_pat_11ABCDEFG0" + strings.Repeat("x9Y8z7W6v5", 6)
	glpat     = "glpat-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn"
	xoxb      = "xoxb-123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"
	akia      = "AKIA" + "IOSFODNN7EXAMPLE"
	asia      = "ASIA" + "Y34FZKBOKMUTVV7A"
	awsSecret = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	aiza      = "AIza" + "SyA-1234567890abcdefghijklmnopqrstu" // 35 after the prefix
	skLive    = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
	rkLive    = "rk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
	skTest    = "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc"
	npm       = "npm_" + alnum36
	hf        = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"
	sendgrid  = "SG." + "abcdefghijklmnopqrstuv" + "." + strings.Repeat("Ab1_", 11)
	jwt       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0" + "." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	pemBody   = "MIIEowIBAAKCAQEA7bq" + strings.Repeat("x2Zq", 16) + "\n" + strings.Repeat("Qm9vb2", 10) + "==\n"
	pemRSA    = "-----BEGIN RSA " + "PRIVATE KEY-----\n" + pemBody + "-----END RSA " + "PRIVATE KEY-----"
)

func r(kind string) string { return "[REDACTED:" + kind + "]" }

func TestString(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		got, n := String(in)
		if got != want {
			t.Errorf("String(%q)\n got %q\nwant %q", in, got, want)
		}
		if wantN := strings.Count(want, "[REDACTED:") - strings.Count(in, "[REDACTED:"); n != wantN {
			t.Errorf("String(%q): n = %d, want %d", in, n, wantN)
		}
		if again, m := String(got); again != got || m != 0 {
			t.Errorf("String is not idempotent on %q: %q (n=%d)", got, again, m)
		}
	}

	// anthropic_key
	f("ANTHROPIC_API_KEY="+anthropic, "ANTHROPIC_API_KEY="+r("anthropic_key"))
	f("use "+anthropic+" for now", "use "+r("anthropic_key")+" for now")
	f("sk-ant-short", "sk-ant-short")

	// openai_key
	f("export OPENAI_API_KEY="+openai, "export OPENAI_API_KEY="+r("openai_key"))
	f(`client = OpenAI(api_key="`+openaiPrj+`")`, `client = OpenAI(api_key="`+r("openai_key")+`")`)
	f("pip install scikit-learn sk-learn", "pip install scikit-learn sk-learn")
	f("task-"+mixed48, "task-"+mixed48) // sk- inside a word
	f(".sk-this-is-a-very-long-kebab-case-class-name-for-css {}", ".sk-this-is-a-very-long-kebab-case-class-name-for-css {}")

	// github_token
	f("git clone https://"+ghp+"@github.com/o/r.git", "git clone https://"+r("github_token")+"@github.com/o/r.git")
	f("git remote set-url origin https://x-access-token:"+ghs+"@github.com/o/r", "git remote set-url origin https://x-access-token:"+r("github_token")+"@github.com/o/r")
	f("GH_TOKEN="+ghPAT+" gh pr list", "GH_TOKEN="+r("github_token")+" gh pr list")
	f("the ghp_ prefix marks a personal token", "the ghp_ prefix marks a personal token")
	f("ghp_tooShort123", "ghp_tooShort123")

	// gitlab_token
	f("curl --header \"PRIVATE-TOKEN: "+glpat+"\" https://gitlab.example.com/api/v4/projects",
		"curl --header \"PRIVATE-TOKEN: "+r("gitlab_token")+"\" https://gitlab.example.com/api/v4/projects")
	f("glpat-short", "glpat-short")

	// slack_token
	f("SLACK_BOT="+xoxb, "SLACK_BOT="+r("slack_token"))
	f(`curl -X POST -d '{"text":"hi"}' https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX`,
		`curl -X POST -d '{"text":"hi"}' https://hooks.slack.com/services/`+r("slack_token"))
	f("see https://hooks.slack.com/ for webhooks; xoxb- tokens are bots", "see https://hooks.slack.com/ for webhooks; xoxb- tokens are bots")

	// aws_access_key_id and aws_secret_access_key
	f("AWS_ACCESS_KEY_ID="+akia+" aws s3 ls", "AWS_ACCESS_KEY_ID="+r("aws_access_key_id")+" aws s3 ls")
	f(`{"AccessKeyId": "`+asia+`"}`, `{"AccessKeyId": "`+r("aws_access_key_id")+`"}`)
	f("aws_secret_access_key = "+awsSecret+"\n", "aws_secret_access_key = "+r("aws_secret_access_key")+"\n")
	f("export AWS_SECRET_ACCESS_KEY="+awsSecret, "export AWS_SECRET_ACCESS_KEY="+r("aws_secret_access_key"))
	f(`"SecretAccessKey": "`+awsSecret+`",`, `"SecretAccessKey": "`+r("aws_secret_access_key")+`",`)
	f("x"+akia, "x"+akia) // inside a word
	f(akia+"X", akia+"X") // 17 characters
	f("AKIA is the prefix", "AKIA is the prefix")

	// google_api_key
	f("https://maps.googleapis.com/maps/api/geocode/json?address=x&key="+aiza, "https://maps.googleapis.com/maps/api/geocode/json?address=x&key="+r("google_api_key"))
	f("AIzaShort", "AIzaShort")

	// stripe_key
	f("stripe.api_key = '"+skLive+"'", "stripe.api_key = '"+r("stripe_key")+"'")
	f("curl https://api.stripe.com/v1/charges -u "+skTest+":", "curl https://api.stripe.com/v1/charges -u "+r("stripe_key")+":")
	f("key "+rkLive, "key "+r("stripe_key"))
	f("sk_live_short", "sk_live_short")

	// other vendors
	f("//registry.npmjs.org/:_authToken="+npm, "//registry.npmjs.org/:_authToken="+r("npm_token"))
	f("huggingface-cli login --token "+hf, "huggingface-cli login --token "+r("huggingface_token"))
	f("SENDGRID="+sendgrid, "SENDGRID="+r("sendgrid_key"))

	// jwt
	f("curl -b session="+jwt+" x", "curl -b session="+r("jwt")+" x")
	f("a header eyJhbGciOiJIUzI1NiJ9 alone", "a header eyJhbGciOiJIUzI1NiJ9 alone")

	// authorization
	f(`curl -H "Authorization: Bearer abc.def-123" https://api.example.com`, `curl -H "Authorization: Bearer `+r("authorization")+`" https://api.example.com`)
	f(`curl -H 'Authorization: Basic dXNlcjpwYXNz' -H 'Accept: */*' x`, `curl -H 'Authorization: Basic `+r("authorization")+`' -H 'Accept: */*' x`)
	f(`curl -H 'authorization: Digest username="u", response="6629fae4"' x`, `curl -H 'authorization: Digest `+r("authorization")+`' x`)
	f(`fetch(url, {headers: {"Authorization": "Token s3cr3t"}})`, `fetch(url, {headers: {"Authorization": "Token `+r("authorization")+`"}})`)
	f("GET / HTTP/1.1\r\nAuthorization: Bearer abc123\r\nHost: x\r\n", "GET / HTTP/1.1\r\nAuthorization: Bearer "+r("authorization")+"\r\nHost: x\r\n")
	f("Proxy-Authorization: Basic Zm9vOmJhcg==", "Proxy-Authorization: Basic "+r("authorization"))
	f(`req.Header.Set("Authorization", "Bearer abc123")`, `req.Header.Set("Authorization", "Bearer `+r("authorization")+`")`)
	f(`{\"Authorization\":\"Bearer abc123\"}`, `{\"Authorization\":\"Bearer `+r("authorization")+`\"}`)
	f(`curl -H "Authorization: Bearer $TOKEN" x`, `curl -H "Authorization: Bearer $TOKEN" x`)
	f(`curl -H "Authorization: Bearer ${GITHUB_TOKEN}" x`, `curl -H "Authorization: Bearer ${GITHUB_TOKEN}" x`)
	f(`curl -H "Authorization: token $(gh auth token)" x`, `curl -H "Authorization: token $(gh auth token)" x`)
	f("Send the Authorization header with every request.", "Send the Authorization header with every request.")
	f(`authorization = request.headers["Authorization"]`, `authorization = request.headers["Authorization"]`)
	f(`headers = {"Authorization": f"Bearer {token}"}`, `headers = {"Authorization": f"Bearer {token}"}`)
	f("Authorization: Bearer\n", "Authorization: Bearer\n")
	f("  authorization: authHeader,", "  authorization: authHeader,")

	// cookie
	f(`curl -H 'Cookie: session=abc123; theme=dark' x`, `curl -H 'Cookie: `+r("cookie")+`' x`)
	f("Set-Cookie: id=a3fWa; Expires=Thu, 21 Oct 2021 07:28:00 GMT\r\n", "Set-Cookie: "+r("cookie")+"\r\n")

	// private_key
	f("cat > id_rsa <<EOF\n"+pemRSA+"\nEOF", "cat > id_rsa <<EOF\n"+r("private_key")+"\nEOF")
	f(`{"key":"`+strings.ReplaceAll(pemRSA, "\n", `\n`)+`"}`, `{"key":"`+r("private_key")+`"}`)
	f("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", r("private_key"))      // cut before END
	f("AAAAB3NzaC1yc2EAAAADAQABAAABAQC7\nQm9vb2Qm9vb2\n-----END RSA PRIVATE KEY-----\n", r("private_key")+"\n") // only the tail
	f("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----")
	f("-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----")
	f("grep -l -- '-----END RSA PRIVATE KEY-----' *.pem", "grep -l -- '-----END RSA PRIVATE KEY-----' *.pem")

	// lines as cat -n, grep -n and a diff print them: the prefix stays
	f("     1\t-----BEGIN OPENSSH PRIVATE KEY-----\n     2\tb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "     1\t"+r("private_key"))
	f("    24\tAAAAB3NzaC1yc2EAAAADAQABAAABAQC7\n    25\tQm9vb2Qm9vb2\n    26\t-----END RSA PRIVATE KEY-----\n", "    24\t"+r("private_key")+"\n")
	f(" AAAAB3NzaC1yc2EAAAADAQABAAABAQC7\n-Qm9vb2Qm9vb2\n+Qm9vb2Qm9vb3\n -----END RSA PRIVATE KEY-----", " "+r("private_key"))
	f("a/k.pem:1:-----BEGIN RSA PRIVATE KEY-----\na/k.pem:2:MIIEowIBAAKCAQEA7bq", "a/k.pem:1:"+r("private_key"))
	f("     1\tmachine h\n     2\t  login u\n     3\t  password Xk93mzPq77", "     1\tmachine h\n     2\t  login u\n     3\t  password "+r("password"))
	f("1:machine h\n2-login u\n3-password Xk93mzPq77\n", "1:machine h\n2-login u\n3-password "+r("password")+"\n")
	f("+machine h\n+  login u\n+  password Xk93mzPq77", "+machine h\n+  login u\n+  password "+r("password"))
	f("     1\tlogin u\n     2\tpassword Xk93mzPq77", "     1\tlogin u\n     2\tpassword Xk93mzPq77") // no machine: no entry
	// account, the second password ftp sends, in an entry or on a line
	// of its own; prose has accounts too.
	f("machine h login u password Hq8Wz3Lm account Zr5Tw2Qn", "machine h login u password "+r("password")+" account "+r("password"))
	f("machine h login u account Zr5Tw2Qn", "machine h login u account "+r("password"))
	f("     1\tmachine h\n     2\t  login u\n     3\t  password Hq8Wz3Lm\n     4\t  account Zr5Tw2Qn",
		"     1\tmachine h\n     2\t  login u\n     3\t  password "+r("password")+"\n     4\t  account "+r("password"))
	f("home/.netrc:  account Zr5Tw2Qn", "home/.netrc:  account "+r("password"))
	f("home/.netrc:account Zr5Tw2Qn\n", "home/.netrc:account "+r("password")+"\n")
	f("Create an account Zr5Tw2Qn first", "Create an account Zr5Tw2Qn first")
	f("the login form account Zr5Tw2Qn", "the login form account Zr5Tw2Qn")
	f("README.md:open an account at the bank", "README.md:open an account at the bank")
	f("accounts accept accurate access", "accounts accept accurate access")

	// grep -r -A/-B/-C prints the lines around a match behind its path
	// and a '-' (path-NN- with -n): they are the file's lines as the
	// match's are; ordinary text with hyphens keeps its words.
	f("home/.netrc:  login u\nhome/.netrc-  password Xk93mzPq77", "home/.netrc:  login u\nhome/.netrc-  password "+r("password"))
	f("home/.netrc-  password Xk93mzPq77", "home/.netrc-  password "+r("password"))
	f("home/.netrc-3-  password Xk93mzPq77\nhome/.netrc:4:  account Zr5Tw2Qn",
		"home/.netrc-3-  password "+r("password")+"\nhome/.netrc:4:  account "+r("password"))
	f("certs/tls.key-MIIEowIBAAKCAQEA7bqx2Zqx2Zqx2Zq\ncerts/tls.key-Qm9vb2Qm9vb2Qm9vb2Qm9vb2\ncerts/tls.key:-----END RSA PRIVATE KEY-----",
		"certs/tls.key-"+r("private_key"))
	f("my-certs/tls-1.key-MIIEowIBAAKCAQEA7bqx2Zqx2Zqx2Zq\nmy-certs/tls-1.key-Qm9vb2Qm9vb2Qm9vb2Qm9vb2\nmy-certs/tls-1.key:-----END RSA PRIVATE KEY-----",
		"my-certs/tls-1.key-"+r("private_key"))
	f("certs/tls.key-7-MIIEowIBAAKCAQEA7bqx2Zqx2Zqx2Zq\ncerts/tls.key-8-Qm9vb2Qm9vb2Qm9vb2Qm9vb2\ncerts/tls.key:9:-----END RSA PRIVATE KEY-----",
		"certs/tls.key-7-"+r("private_key"))
	f("a/.env-3-AWS_SECRET_ACCESS_KEY="+awsSecret, "a/.env-3-AWS_SECRET_ACCESS_KEY="+r("aws_secret_access_key"))
	f("a/.env-AWS_SECRET_ACCESS_KEY="+awsSecret+"\na/.env:DEBUG=1", "a/.env-AWS_SECRET_ACCESS_KEY="+r("aws_secret_access_key")+"\na/.env:DEBUG=1")
	f("well-known password-less\nwell-being password-free", "well-known password-less\nwell-being password-free")
	f("docs/faq.md-set the password in ~/.netrc\ndocs/faq.md:the login form", "docs/faq.md-set the password in ~/.netrc\ndocs/faq.md:the login form")
	f("x-machine h\nx-login u", "x-machine h\nx-login u")

	// Windows paths before the line: their backslashes, \n and \r
	// among them, are the path's.
	f(`C:\Users\x\.netrc:password Xk93mzPq77`, `C:\Users\x\.netrc:password `+r("password"))
	f(`C:\Users\name\_netrc:  password Xk93mzPq77`, `C:\Users\name\_netrc:  password `+r("password"))
	f(`C:\Users\bob\.netrc-3-  account Zr5Tw2Qn`, `C:\Users\bob\.netrc-3-  account `+r("password"))
	f(`C:\repo\.env:3:API_KEY=abc123`, `C:\repo\.env:3:API_KEY=`+r("secret"))
	f(`C:\repo\certs\tls.key:1:-----BEGIN RSA PRIVATE KEY-----`+"\n"+`C:\repo\certs\tls.key:2:MIIEowIBAAKCAQEA7bq`,
		`C:\repo\certs\tls.key:1:`+r("private_key"))
	f(`C:\repo\certs\tls.key:MIIEowIBAAKCAQEA7bqx2Zqx2Zqx2Zq`+"\r\n"+`C:\repo\certs\tls.key:Qm9vb2Qm9vb2Qm9vb2Qm9vb2`+"\r\n"+`C:\repo\certs\tls.key:-----END RSA PRIVATE KEY-----`,
		`C:\repo\certs\tls.key:`+r("private_key"))
	f(`C:\src\my-certs\tls.key-MIIEowIBAAKCAQEA7bqx2Zqx2Zqx2Zq`+"\n"+`C:\src\my-certs\tls.key-Qm9vb2Qm9vb2Qm9vb2Qm9vb2`+"\n"+`C:\src\my-certs\tls.key:-----END RSA PRIVATE KEY-----`,
		`C:\src\my-certs\tls.key-`+r("private_key"))
	f(`C:\notes\readme.txt:set the password in C:\Users\x\_netrc`, `C:\notes\readme.txt:set the password in C:\Users\x\_netrc`)

	// url_password
	f("psql postgres://app:s3cr3t@db.internal:5432/app", "psql postgres://app:"+r("url_password")+"@db.internal:5432/app")
	f("REDIS_URL=redis://:p%40ss@cache:6379/0", "REDIS_URL=redis://:"+r("url_password")+"@cache:6379/0")
	f("mongodb+srv://admin:hunter2@cluster0.example.net/?retryWrites=true", "mongodb+srv://admin:"+r("url_password")+"@cluster0.example.net/?retryWrites=true")
	f("curl http://localhost:8080/healthz", "curl http://localhost:8080/healthz")
	f("ssh://git@github.com:22/o/r", "ssh://git@github.com:22/o/r")
	f("postgres://app:@db/app", "postgres://app:@db/app")
	f("postgres://app:$PGPASSWORD@db/app", "postgres://app:$PGPASSWORD@db/app")
	f("https://example.com/@user:foo", "https://example.com/@user:foo")
	f("git@github.com:org/repo.git", "git@github.com:org/repo.git")

	// password and secret assignments
	f("export DB_PASSWORD=hunter2", "export DB_PASSWORD="+r("password"))
	f("PGPASSWORD=hunter2 psql -h db -U app", "PGPASSWORD="+r("password")+" psql -h db -U app")
	f("mysql --password=hunter2 -u root", "mysql --password="+r("password")+" -u root")
	f("mysql --password hunter2 -u root", "mysql --password "+r("password")+" -u root")
	f("db:\n  password: hunter2\n", "db:\n  password: "+r("password")+"\n")
	f("DB_PASS=x9y8z7", "DB_PASS="+r("password"))
	f(`password = "correct horse battery staple"`, `password = "`+r("password")+`"`)
	f(`cfg := Config{Password: "hunter2", User: "app"}`, `cfg := Config{Password: "`+r("password")+`", User: "app"}`)
	f(`{"user":"app","password":"hunter2"}`, `{"user":"app","password":"`+r("password")+`"}`)
	f(`echo {\"password\":\"hunter2\"} > creds.json`, `echo {\"password\":\"`+r("password")+`\"} > creds.json`)
	f(`psql -c "ALTER USER app WITH PASSWORD 'hunter2'"`, `psql -c "ALTER USER app WITH PASSWORD '`+r("password")+`'"`)
	f(`CREATE USER 'app'@'%' IDENTIFIED BY 'hunter2';`, `CREATE USER 'app'@'%' IDENTIFIED BY '`+r("password")+`';`)
	f("curl -u admin:hunter2 https://x", "curl -u admin:"+r("password")+" https://x")
	f("curl --user 'admin:hunter2' https://x", "curl --user 'admin:"+r("password")+"' https://x")
	f("CLIENT_SECRET=abc123def ./run", "CLIENT_SECRET="+r("secret")+" ./run")
	f("docker build --build-arg NPM_TOKEN=abc123 .", "docker build --build-arg NPM_TOKEN="+r("secret")+" .")
	f(`curl -H "X-Api-Key: abc123" x`, `curl -H "X-Api-Key: `+r("secret")+`" x`)
	f("GET /callback?code=1&access_token=abc123&state=x", "GET /callback?code=1&access_token="+r("secret")+"&state=x")
	f(`'api_key' => 'abc123',`, `'api_key' => '`+r("secret")+`',`)
	f(`os.environ.setdefault("API_KEY", "abc123")`, `os.environ.setdefault("API_KEY", "`+r("secret")+`")`)
	f(`SECRET_KEY = 'django-insecure-abc123'`, `SECRET_KEY = '`+r("secret")+`'`)
	f(`apiKey: "abc123",`, `apiKey: "`+r("secret")+`",`)
	f("ngrok config add-authtoken 2abc_DEF", "ngrok config add-authtoken 2abc_DEF") // no separator: not an assignment
	f("https://bucket.s3.amazonaws.com/k?X-Amz-Credential=x&X-Amz-Security-Token=abc123&X-Amz-Signature=0f1e2d3c",
		"https://bucket.s3.amazonaws.com/k?X-Amz-Credential=x&X-Amz-Security-Token="+r("secret")+"&X-Amz-Signature="+r("secret"))
	f("POSTGRES_PASSWORD: example1", "POSTGRES_PASSWORD: "+r("password"))
	f("POSTGRES_PASSWORD: example\n", "POSTGRES_PASSWORD: "+r("password")+"\n")

	// A parameter's default is a value written in the text, in a compose
	// file as in a header; a token there keeps its kind, and one too
	// short to be a Stripe key is a secret by its name.
	f("  POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-changeme}\n", "  POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-"+r("password")+"}\n")
	f(`curl -H "Authorization: Bearer ${TOKEN:-abc123}" x`, `curl -H "Authorization: Bearer ${TOKEN:-`+r("authorization")+`}" x`)
	f("echo ${STRIPE_KEY:-"+skLive+"} ${AWS_KEY_ID-"+akia+"}", "echo ${STRIPE_KEY:-"+r("stripe_key")+"} ${AWS_KEY_ID-"+r("aws_access_key_id")+"}")
	f("echo ${TOKEN:-sk_live_abcdef123456}", "echo ${TOKEN:-"+r("secret")+"}")
	f("echo sk_live_abcdef123456", "echo sk_live_abcdef123456")

	// Passwords and tokens that contain a keyword of a secret's name are
	// values, not names.
	f("DB_PASSWORD=Passw0rd123", "DB_PASSWORD="+r("password"))
	f("export PGPASSWORD=mypass2024", "export PGPASSWORD="+r("password"))
	f("Password=SuperSecretPw99", "Password="+r("password"))
	f("TOKEN=SuperSecretPw99", "TOKEN="+r("secret"))
	f("GITHUB_TOKEN=tokenXk93mzPq77abc", "GITHUB_TOKEN="+r("secret"))
	f("STRIPE_SECRET=key_9f8e7d6c5b4a", "STRIPE_SECRET="+r("secret"))
	f("my password is DB_PASSWORD=SuperSecretPw99", "my password is DB_PASSWORD="+r("password"))
	f(`password := "Passw0rd123"`, `password := "`+r("password")+`"`)
	f("--master-user-password secret99", "--master-user-password "+r("password"))

	// Nor are values that start with punctuation, quoted or not.
	f("DB_PASSWORD=!Xk93mzPq77", "DB_PASSWORD="+r("password"))
	f("DB_PASSWORD=#Xk93mzPq77", "DB_PASSWORD="+r("password"))
	f("DB_PASSWORD=@Xk93mzPq77", "DB_PASSWORD="+r("password"))
	f("DB_PASSWORD=+Xk93mzPq77", "DB_PASSWORD="+r("password"))
	f("DB_PASSWORD=&Xk93mzPq77 ./run", "DB_PASSWORD=&Xk93mzPq77 ./run") // & ends a shell word: a background job
	f(`DB_PASSWORD="!Xk93mzPq77"`, `DB_PASSWORD="`+r("password")+`"`)
	f(`DB_PASSWORD="#Xk93mzPq77"`, `DB_PASSWORD="`+r("password")+`"`)
	f(`{"password":"#Xk93mzPq77"}`, `{"password":"`+r("password")+`"}`)
	f(`{"env":{"DB_PASSWORD":"!Xk93mzPq77"}}`, `{"env":{"DB_PASSWORD":"`+r("password")+`"}}`)

	// The -p of the commands whose -p takes a password.
	f("mysql -u root -pXk93mzPq77 db", "mysql -u root -p"+r("password")+" db")
	f("mysql -uroot -p'Xk93mzPq77' db", "mysql -uroot -p'"+r("password")+"' db")
	f("docker exec -it db mysql -uroot -pXk93mzPq77 app", "docker exec -it db mysql -uroot -p"+r("password")+" app")
	f(`bash -c "mysqldump -pXk93mzPq77 app > a.sql"`, `bash -c "mysqldump -p`+r("password")+` app > a.sql"`)
	f("sshpass -p Xk93mzPq77 ssh h", "sshpass -p "+r("password")+" ssh h")
	f("sshpass -pXk93mzPq77 ssh -p 2222 h", "sshpass -p"+r("password")+" ssh -p 2222 h")
	f("docker login -u me -p Xk93mzPq77", "docker login -u me -p "+r("password"))
	f("docker login -u me -p=Xk93mzPq77 reg", "docker login -u me -p="+r("password")+" reg")
	f("docker login -u me --password Xk93mzPq77 reg", "docker login -u me --password "+r("password")+" reg")
	f("podman login -u me -p Xk93mzPq77 quay.io", "podman login -u me -p "+r("password")+" quay.io")
	f("helm registry login -u me -p Xk93mzPq77 r", "helm registry login -u me -p "+r("password")+" r")
	f("oc login -u dev -p Xk93mzPq77 https://api", "oc login -u dev -p "+r("password")+" https://api")
	f(`{"command":"mysql -u root -pXk93mzPq77 db"}`, `{"command":"mysql -u root -p`+r("password")+` db"}`)
	f(`ok\nmysql -pXk93mzPq77 db`, `ok\nmysql -p`+r("password")+` db`)

	// …and not the -p of others, nor a -p without a password.
	f("ls -p; mkdir -p dir; grep -p x; cp -p a b; tar -pxf a.tar", "ls -p; mkdir -p dir; grep -p x; cp -p a b; tar -pxf a.tar")
	f("ssh -p 2222 host", "ssh -p 2222 host")
	f("sshpass -e ssh -p 2222 host", "sshpass -e ssh -p 2222 host")
	f("docker run --name mysql -p 3306:3306 mysql:8", "docker run --name mysql -p 3306:3306 mysql:8")
	f("docker run --name mysql -p3306:3306 mysql:8", "docker run --name mysql -p3306:3306 mysql:8")
	f("mysql -u root -p db", "mysql -u root -p db")
	f("mysql -u root -p$MYSQL_PWD db", "mysql -u root -p$MYSQL_PWD db")
	f(`sshpass -p "$PW" ssh h`, `sshpass -p "$PW" ssh h`)
	f("docker login -u me -p $TOKEN reg", "docker login -u me -p $TOKEN reg")
	f("docker login -u me --password-stdin reg", "docker login -u me --password-stdin reg")
	f("login -p root", "login -p root")

	// Not secrets: English, empty values, references, code.
	f("the token is valid; refresh the token and retry", "the token is valid; refresh the token and retry")
	f("Enter your password when asked.", "Enter your password when asked.")
	f(`password=""`, `password=""`)
	f("PASSWORD=", "PASSWORD=")
	f("PASSWORD= next", "PASSWORD= next")
	f("echo $TOKEN", "echo $TOKEN")
	f("TOKEN=${API_KEY} ./run", "TOKEN=${API_KEY} ./run")
	f("API_KEY=$API_KEY make", "API_KEY=$API_KEY make")
	f(`TOKEN="$(gh auth token)"`, `TOKEN="$(gh auth token)"`)
	f("password: ${DB_PASSWORD}", "password: ${DB_PASSWORD}")
	f("password: {{ .Values.db.password }}", "password: {{ .Values.db.password }}")
	f(`password: "{{ vault_db_password }}"`, `password: "{{ vault_db_password }}"`)
	f("password = None", "password = None")
	f("def login(user, password=None):", "def login(user, password=None):")
	f("token = getToken()", "token = getToken()")
	f("password = cfg.Password", "password = cfg.Password")
	f(`token := r.Header.Get("X-Token")`, `token := r.Header.Get("X-Token")`)
	f("self.token = token", "self.token = token")
	f("client(token=token, timeout=3)", "client(token=token, timeout=3)")
	f("  password: string;", "  password: string;")
	f("password=get_password()", "password=get_password()")
	f(`password = config["password"]`, `password = config["password"]`)
	f(`if [ "$PASSWORD" = "" ]; then`, `if [ "$PASSWORD" = "" ]; then`)
	f(`if token == "abc" {`, `if token == "abc" {`)
	f("if token != nil {", "if token != nil {")
	f("max_tokens=100 bypass=true compass=north", "max_tokens=100 bypass=true compass=north")
	f("tokenizer = load()", "tokenizer = load()")
	f("psql --no-password mydb", "psql --no-password mydb")
	f("password = %s", "password = %s")
	f("password: <your-password>", "password: <your-password>")
	f("password: ********", "password: ********")
	f("sql = 'SELECT * FROM users WHERE password = ?'", "sql = 'SELECT * FROM users WHERE password = ?'")
	f("docker run -u 1000:1000 alpine", "docker run -u 1000:1000 alpine")
	f("git push -u origin main", "git push -u origin main")
	f(`words = ["token", "password"]`, `words = ["token", "password"]`)
	f("Token: the unit a model reads.", "Token: the unit a model reads.")
	f("error acquiring upload token: creating token file", "error acquiring upload token: creating token file")
	f("--- PASS: TestApply (0.00s)\nPASS\nok  \tpkg\t0.01s", "--- PASS: TestApply (0.00s)\nPASS\nok  \tpkg\t0.01s")
	f("TCPOPT_SIGNATURE = 0x1a\nSYS_MEMFD_SECRET = 447\nILLEGAL Token = iota", "TCPOPT_SIGNATURE = 0x1a\nSYS_MEMFD_SECRET = 447\nILLEGAL Token = iota")
	f("session.secret = psk", "session.secret = psk")
	f("this._password=s._password,l=1", "this._password=s._password,l=1")
	f("\t\tSignature: algorithmIdentifier,", "\t\tSignature: algorithmIdentifier,")
	f("// update result signature: if needed", "// update result signature: if needed")
	f(`com.Token = "// indirect"`, `com.Token = "// indirect"`)
	f(`lastToken = "-" + x`, `lastToken = "-" + x`)
	f(`println("failed to revert to previous token:", err)`, `println("failed to revert to previous token:", err)`)
	f(`case "Authorization", "WWW-Authenticate", "Cookie":`, `case "Authorization", "WWW-Authenticate", "Cookie":`)
	f("password=$PASSWORD", "password=$PASSWORD")
	f("token: ${{ secrets.X }}", "token: ${{ secrets.X }}")
	f("api_key=value_of_another_key_name", "api_key=value_of_another_key_name")
	f("API_KEY=your_api_key_here", "API_KEY=your_api_key_here")
	f("token=oauth2Token sig=sha256_sig key=base64Key", "token=oauth2Token sig=sha256_sig key=base64Key")
	f("password: <password>", "password: <password>")
	f("password: ***", "password: ***")
	f("password: !secret db_password", "password: !secret db_password")
	f("password: !vault |", "password: !vault |")
	f("password: *default_pw", "password: *default_pw")
	f("password: &pw x", "password: &pw x")
	f("password: # set it in .env", "password: # set it in .env")
	f(`token = "#{ENV['TOKEN']}"`, `token = "#{ENV['TOKEN']}"`)
	f("token = @token", "token = @token")
	f("token = *ptr", "token = *ptr")
	f("password: ~", "password: ~")
	f(`url = "https://x/?token="+token+"&a=1"`, `url = "https://x/?token="+token+"&a=1"`)
	f(`        Token:              "#f8f8f2",`, `        Token:              "#f8f8f2",`)
	f("", "")

	// JSON text read as text (a preview's tail cut from a Codex output
	// that is JSON in a string): an escaped blank ends a word.
	f(`ok\n`+ghp+`\n`, `ok\n`+r("github_token")+`\n`)
	f(`err:\t`+akia+`","x":1}`, `err:\t`+r("aws_access_key_id")+`","x":1}`)
	f(`\r\n`+xoxb, `\r\n`+r("slack_token"))
	f(`\\nfoo`, `\\nfoo`)
	f(`path C:\new\tmp`, `path C:\new\tmp`)
}

func TestStringNoAlloc(t *testing.T) {
	in := strings.Repeat("go test ./... -run TestFoo -count=1 | tee out.log; password: ${X}\n", 20)
	allocs := testing.AllocsPerRun(100, func() {
		if out, n := String(in); n != 0 || out != in {
			t.Fatalf("String changed a secret-free text: %q", out)
		}
	})
	if allocs != 0 {
		t.Errorf("String allocates %v times on secret-free text, want 0", allocs)
	}
}

func TestNameKind(t *testing.T) {
	f := func(name, want string) {
		t.Helper()
		if got := nameKind(name); got != want {
			t.Errorf("nameKind(%q) = %q, want %q", name, got, want)
		}
	}
	f("DB_PASSWORD", "password")
	f("dbPassword", "password")
	f("db-passwd", "password")
	f("gpg.passphrase", "password")
	f("DB_PASS", "password")
	f("dbPass", "password")
	f("--pass", "password")
	f("bypass", "")
	f("compass", "")
	f("client_secret", "secret")
	f("GITHUB_TOKEN", "secret")
	f("x-api-key", "secret")
	f("apiKey", "secret")
	f("DJANGO_SECRET_KEY", "secret")
	f("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key")
	f("SecretAccessKey", "aws_secret_access_key")
	f("X-Amz-Signature", "signature")
	f("PASS", "")
	f("Proxy-Authorization", "authorization")
	f("Set-Cookie", "cookie")
	f("max_tokens", "")
	f("tokenizer", "")
	f("primary_key", "")
	f("APP_KEY", "secret")
	f("LARAVEL_APP_KEY", "secret")
	f("appKey", "")
	f("APP_key", "")
	f("password_hint", "")
	f("", "")
}

func TestNameLike(t *testing.T) {
	f := func(v string, want bool) {
		t.Helper()
		if got := nameLike(v); got != want {
			t.Errorf("nameLike(%q) = %v, want %v", v, got, want)
		}
	}
	f("token", true)
	f("get_password", true)
	f("s._password", true)
	f("authHeader", true)
	f("HTTPToken", true)
	f("value_of_another_key_name", true)
	f("oauth2Token", true)
	f("token2", true)
	f("sha256_sig", true)
	f("x509Cert", true)
	f("key_1", true)
	f("default-pw", true)
	f("Passw0rd123", false)
	f("SuperSecretPw99", false)
	f("mypass2024", false)
	f("tokenXk93mzPq77abc", false)
	f("key_9f8e7d6c5b4a", false)
	f("f8f8f2", false)
	f("a b", false)
	f("", false)
}

func TestClassTable(t *testing.T) {
	in := func(c byte, set string) bool { return strings.IndexByte(set, c) >= 0 }
	const (
		upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		lower = "abcdefghijklmnopqrstuvwxyz"
		digit = "0123456789"
		alnum = upper + lower + digit
	)
	for i := 0; i < 256; i++ {
		c := byte(i)
		var want uint16
		for _, d := range []struct {
			bit uint16
			set string
		}{
			{cWord, alnum + "_"},
			{cTok, alnum + "_-"},
			{cAlnum, alnum},
			{cB64, alnum + "+/="},
			{cUpNum, upper + digit},
			{cHex, digit + "abcdef"},
			{cName, alnum + "_.-"},
			{cTrig, "=:-,\\$"},
			{cTrigB, "srwgxAaenhSpPiIdvL"},
		} {
			if c != 0 && in(c, d.set) {
				want |= d.bit
			}
		}
		if class[c] != want {
			t.Errorf("class[%q] = %09b, want %09b", c, class[c], want)
		}
	}
	// Every prefix the detectors know must start with a cTrigB byte followed
	// by a byte in second, or it is never tried.
	for _, p := range []string{"sk-", "sk_", "rk_", "whsec_", "ghp_", "gho_", "github_pat_", "glpat-", "gldt-",
		"glrt-", "glptt-", "xoxb-", "xapp-", "AKIA", "ASIA", "ABIA", "ACCA", "AIza", "eyJ", "npm_", "hf_",
		"hooks.", "SG.", "pypi-", "dop_", "doo_", "dor_", "dckr_", "discord", "password ", "PASSWORD ",
		"Password ", "account ", "identified by ", "IDENTIFIED BY ", "Identified by ", "htpasswd", "rabbitmqctl", "net", "vault", "LS0tLS1CRUdJTi"} {
		if class[p[0]]&cTrigB == 0 || second[p[0]]>>(p[1]-64)&1 == 0 {
			t.Errorf("prefix %q is never tried", p)
		}
		if th := third[p[0]]; th != 0 && p[1] == byte(th>>8) && p[2] != byte(th) {
			t.Errorf("prefix %q is never tried: third[%q] wants %q", p, p[0], byte(th))
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{
		"export DB_PASSWORD=hunter2", `curl -H "Authorization: Bearer abc" x`, "postgres://u:p@h/db",
		pemRSA, pemRSA[:60], pemRSA[40:], jwt, ghp, akia, openai, "password: [REDACTED:password]",
		`{\"password\":\"x\"}`, "a=b:c,d-e", "--password --token x", "-u a:b", "sk-ant-" + mixed48,
		"https://hooks.slack.com/services/" + alnum36, "PASSWORD '", "Authorization: Bearer [REDACTED:authorization]x",
		"DB_PASSWORD=!Xk93", `password: "#f8f8f2"`,
		"mysql -uroot -pXk93 db", "sshpass -p x ssh -p 22 h", "docker login -u me -p=x",
		"redis-cli -a Xk93 ping", "redis-cli -u redis://:x@h", "zip -P x a.zip", "7z a -px a.7z",
		"openssl rsa -passin pass:x -passout env:Y", "openssl enc -k x -K 0a", "ldappasswd -w x -a y -s z",
		"htpasswd -nbC 10 u x", "smbclient -U 'D\\u%x'", "mongosh -p x", "rabbitmqctl -n n add_user u x",
		"net use Z: \\\\s\\h x /user:u", "net user u x", "keytool -storepass x -keypass y",
		"vault login s." + "Xk93mzPq77AbCdEfGhIj", "wget --ask-password x",
		`htpasswd -b f \"A B\" x`, "htpasswd -b f A\\ B x", "cmd /c net user u x", "pwsh -c net use \\\\s\\h x",
		"nxc smb h -u u -p x", "smbmap -H h -P 445 -p x",
		"nxc smb h -u u -p x 'y z' 2>&1", "nxc -H " + strings.Repeat("0a", 16) + " :" + strings.Repeat("F", 32),
		"psexec.py -hashes :" + strings.Repeat("9b", 16), "powershell -ep bypass -w 1 -c net user u x",
		"mysql -pa\\ b\\!c db", `{"c":"mysql -pa\\\\ b"}`,
		"nxc -H=" + strings.Repeat("0a", 16) + " -px y", "smbmap -p=x", "psexec.py -hashes=:" + strings.Repeat("9b", 16),
		"nxc -p ${A:-x} ${B:-" + ghp + "} y ${C%%-p z}",
		"mysql -p${P:-x} db", `DB_PASSWORD="${P:-a b}"`, "curl -u ${U:-a}:${P:-b} a://${U:-u}:${P:-p}@h",
		": ${DB_PASSWORD:=x} ${T:+" + ghp + "}", "nxc -H ${N:-" + strings.Repeat("0a", 16) + "}",
		"echo ${PASS-x} ${DB_PASSWORD?y} ${API_TOKEN:+z${B}w}", "DB_PASSWORD=${A:-" + strings.Repeat("Xk93 ", 60) + "}",
		"nxc -p $(cat f) x `g` y", "htpasswd -b f $(id -un) x",
		"DB_PASSWORD=a${b}c$(d)e`f`g h", "TOKEN=${A:-x${B}}y \"${C}z\" ${D}/e", "password: `a`b$(c",
		"curl -u a:${P:-" + strings.Repeat("x", 300) + "} https://u:${P:-" + strings.Repeat("y", 300) + "}@h",
		"a://${U:-" + strings.Repeat("x", 300) + "}:p@h a://${U:-" + strings.Repeat("y:{", 100) + ":p@h/",
		"a/.netrc:machine h\na/.netrc:login u\na/.netrc:password p", "k.pem:" + pemRSA[:60] + "\r\nk.pem:" + pemRSA[60:],
		"a/.netrc:login u\na/.netrc-password p account q", "my-k.pem-" + pemRSA[:60] + "\nmy-k.pem-" + pemRSA[60:],
		`C:\new\k.pem:` + pemRSA[40:] + "\n" + `C:\new\k.pem-x`, `C:\Users\u\_netrc-3-account a`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, n := String(in)
		if n == 0 && out != in {
			t.Fatalf("n = 0 but the text changed: %q -> %q", in, out)
		}
		if n > 0 && out == in {
			t.Fatalf("n = %d but the text did not change: %q", n, in)
		}
		if again, m := String(out); again != out || m != 0 {
			t.Fatalf("not idempotent:\n in  %q\n out %q\n again %q", in, out, again)
		}
	})
}

// TestLineBodyPathAlone: the path grep -r prints before each line of a file
// is a prefix when the line before or after starts with it too, across
// the line breaks of text and of JSON text; on a line alone, or between
// other paths, it is the line's text, unless the path names a .netrc
// file (grep -r password ~ prints one line of it).
func TestLineBodyPathAlone(t *testing.T) {
	for _, tc := range []struct {
		text string
		ls   int // the line's start
		want int // where its body starts
	}{
		{"a/.npmrc:login x\na/.npmrc:password y", 17, 26},
		{"a/.npmrc:login x\r\na/.npmrc:password y", 18, 27},
		{`a/.npmrc:login x\na/.npmrc:password y`, 18, 27},
		{`a/.npmrc:login x\r\na/.npmrc:password y`, 20, 29},
		{"a/.npmrc:  password y", 0, 0},
		{"a/.npmrc:machine h\na/.npmrc:login x", 0, 9},
		{"a/.npmrc:machine h\r\na/.npmrc:login x", 0, 9},
		{`a/.npmrc:machine h\na/.npmrc:login x`, 0, 9},
		{`a/.npmrc:machine h\r\na/.npmrc:login x`, 0, 9},
		{"a/.npmrc:machine h\nb/.npmrc:login x", 0, 0},
		{"c:x\nb/.npmrc:login x\na/.npmrc:y", 4, 4},
		{"b/.npmrc:login x\na/.npmrc:password y", 17, 17},
		{"\na/.npmrc:password y", 1, 1},
		{"a/.npmrc:\na/.npmrc:password y", 10, 19},  // an empty line of the file above
		{"main.go:x\nmain.go:  password y", 10, 19}, // diff-mark blank, as after a number
		{"a/.netrc:  password y", 0, 10},
		{"\na/_netrc:password y", 1, 10},
		{".netrc:password y", 0, 7},
		{"a/.netrc.example:password y", 0, 0},
		{"a/x.netrc:password y", 0, 0},
		{"README.md:set the password in ~/.netrc", 0, 0},
		// grep -A, -B, -C: a line of the context behind "path-", its
		// path the longest the line around shares, of a file.
		{"a/x.go:m\na/x.go-c", 9, 16},
		{"a/x.go-c\na/x.go:m", 0, 7},
		{"a-b.txt-x\na-b.txt-y", 10, 18},
		{"my-app/a.key-x\nmy-app/a.key:y", 0, 13},
		{"a/.netrc-  password y", 0, 10},
		{"a/b.txt-x\nc/d.txt-y", 10, 10},
		{"well-known\nwell-being", 11, 11},
		{"x-y\nx-z", 4, 4},
		// Windows paths, their \n and \r the path's.
		{`C:\Users\u\_netrc:password y`, 0, 18},
		{`C:\new\b.txt:x` + "\n" + `C:\new\b.txt:y`, 15, 28},
		{`C:\new\.netrc-3-password y`, 0, 16},
		{`C:\x`, 0, 0},
	} {
		if got := lineBody(tc.text, tc.ls); got != tc.want {
			t.Errorf("lineBody(%q, %d) = %d, want %d", tc.text, tc.ls, got, tc.want)
		}
	}
}
