// Package redact replaces secrets in text and JSON before hookwatch writes
// anything to disk or sends it over the network.
//
// It runs inside "hookwatch hook", a process Claude Code starts for every hook
// event, so it is written for that hot path: standard library only, nothing
// computed at package init (no package-level regexp: a hand-written scanner
// with a static byte-class table instead), and no allocation when nothing
// matches, which is the common case.
//
// A secret is replaced by "[REDACTED:<kind>]". The kinds are:
//
//	anthropic_key          sk-ant-…
//	openai_key             sk-… / sk-proj-… of realistic length and mixed case
//	github_token           ghp_ gho_ ghu_ ghs_ ghr_ github_pat_
//	gitlab_token           glpat- gldt- glrt- glptt-
//	slack_token            xoxb- xoxp- xoxa- xoxr- xoxs- xoxe- xapp-, hooks.slack.com webhook paths
//	discord_webhook        discord.com/api/webhooks/… paths
//	aws_access_key_id      AKIA / ASIA / ABIA / ACCA + 16 upper-case letters or digits
//	aws_secret_access_key  the value of aws_secret_access_key / AWS_SECRET_ACCESS_KEY / SecretAccessKey,
//	                       and 40 bytes of mixed-case base64 on an access key id's line or the
//	                       next (the console's CSV, aws configure's prompts)
//	google_api_key         AIza + 35
//	stripe_key             sk_live_ sk_test_ rk_live_ rk_test_ whsec_
//	npm_token              npm_ + 36
//	huggingface_token      hf_ + 30 or more
//	sendgrid_key           SG.<22>.<43>
//	pypi_token             pypi-AgE…
//	digitalocean_token     dop_v1_ doo_v1_ dor_v1_ + 64 hex
//	docker_token           dckr_pat_
//	jwt                    eyJ….eyJ….signature
//	authorization          the credential of an Authorization header (the scheme is kept)
//	cookie                 the value of a Cookie / Set-Cookie header
//	private_key            a whole -----BEGIN … PRIVATE KEY----- block, also when cut before
//	                       its END line or when only its END half is present, and such a
//	                       block in base64 (a kubeconfig's client-key-data)
//	url_password           the password in scheme://user:password@host (user and host are kept)
//	password               the value assigned to a name ending in PASSWORD, PASSWD, PASSPHRASE
//	                       or PASS (DB_PASSWORD=…, --password …, --pass …, password: …,
//	                       "password": "…"), SQL PASSWORD '…' / IDENTIFIED BY '…', and the
//	                       passwords of command lines: curl -u (--user) user:password, mysql -p…,
//	                       sshpass -p …, docker (podman, oc …) login -p …, redis-cli -a …,
//	                       zip and unzip -P …, 7z -p…, openssl -pass (-passin, -passout) pass:…
//	                       and -k …, apksigner --ks-pass pass:…, ldapsearch (ldapmodify, ldappasswd
//	                       …) -w …, htpasswd -b file user …, smbclient (rpcclient, net …)
//	                       -U user%…, netexec (nxc, crackmapexec, cme) -p … (every password it
//	                       takes there) and its NTLM hashes -H (--hash) LM:NT or NT, smbmap
//	                       -p …, Impacket's -hashes LM:NT (these also as -p=…, -p…, -H=…,
//	                       --hash=…, -hashes=…), mongosh (mongo, mongodump …) -p …,
//	                       rabbitmqctl add_user (change_password) user …, Windows' net use
//	                       \\host\share … and net user name … (also behind cmd /c and
//	                       powershell -Command, after PowerShell's other switches), keytool
//	                       (jarsigner) -storepass … -keypass …, the password of a .netrc
//	                       entry (machine host login user password … or passwd …), and
//	                       on a line of a file named .netrc or _netrc printed behind its
//	                       path (grep -r password ~: home/u/.netrc:password …) the value
//	                       of each password, passwd and account token, the entry's
//	                       other words unseen; a blank or punctuation escaped with a
//	                       backslash (S3cret\ pass) is part of the password
//	secret                 the value assigned to a name ending in SECRET, TOKEN, API_KEY,
//	                       SECRET_KEY, PRIVATE_KEY, SIGNATURE, APP_KEY and a few more;
//	                       openssl -K …, and the token of vault login when it is one (long,
//	                       mixed case, digits)
//
// A flag is a password only for the commands that read it so: elsewhere -p
// is a port or a path (ssh -p 22, redis-cli -p 6379, mkdir -p), and -a, -k,
// -P, -w, -H mean other things (ls -a, curl -k, scp -P 2222 and smbmap -P 445,
// wc -w, curl -H with a header, smbmap -H with its host; unzip -p pipes). A
// password given elsewhere (openssl's env:VAR and file:…, keytool's
// -storepass:env, a file of hashes after -H) or prompted for (mysql -p alone,
// 7z -p, ldapsearch -W, curl -u user, a * to net use) leaves nothing to
// redact.
//
// Files reach a payload through tools that print them line by line, each
// line behind a prefix: cat -n's and nl's number, grep -n's, rg's and git
// grep -n's path and number, grep -r's and git grep's path alone (read so
// where the line before or after starts with the same path, or where the
// path names a .netrc file), a diff's mark. A rule that follows a secret across lines (the words of a .netrc
// entry, the body of a PEM block, a private key in base64 wrapped) passes
// over such a prefix, which stays in the text.
//
// Assignments keep their name and replace only the value, and are skipped when
// the value is empty, a variable reference ($TOKEN, ${API_KEY}, {{ .x }}), a
// placeholder (<token>, %s, ***, your_api_key), a name behind a sigil
// (!secret db_password, *alias, @token, #{x}) or, in code, an expression
// (getToken(), cfg.Password, token = token, password: string). A value that
// mixes digits into its words is not a name, whatever it contains or starts
// with: Passw0rd123, tokenXk93mzPq77abc, !Xk93mzPq77 are redacted.
//
// A shell parameter's default (${PASS:-…}, ${PASS-…}, ${PASS:=…},
// ${PASS=…}) and alternate value (${PASS:+…}, ${PASS+…}) are values
// written in the text: each is redacted as the same value would be in the
// parameter's place, and ${NAME:- and } are kept (DB_PASSWORD=${PASS:-…},
// mysql -p${PASS:-…}, nxc -p ${PASS:-…}, curl -u user:${PW:-…}, a URL's
// password, an Authorization header's credential, a JSON string under a
// key that names a secret ("DB_PASSWORD": "${PASS:-…}"), and an expansion
// alone whose own name says what it holds: ${DB_PASSWORD-…},
// ${API_TOKEN:+…}, ${PASS:-…} (a bare PASS names a password there), with
// any of bash's operators). The word is one, nested expansions and
// blanks included (${A:-x${B}}); one longer than the 256 bytes its braces
// are first read for is redacted all the same, up to its brace or the end
// of its line. A default that is only a reference (${A:-$B}, ${A:-${B}},
// ${A:-$(cmd)}) or empty, the pattern of ${VAR#…}, and the message of
// ${VAR:?message} (which is also left after a name that says what it holds
// when it reads as one: words with a blank between, or a word of letters)
// are left alone, as is a default where the value would not be a secret
// (ssh -p ${PORT:-22}, ls ${HOME:-/tmp}). A command substitution ($(cat
// f), `cat f`) is one word of a command line, which NetExec reads past as
// it reads past $PASS.
package redact

// String returns s with every secret replaced by "[REDACTED:<kind>]" and the
// number of replacements. When nothing matched it returns s itself, without
// allocating. It never panics, and it is idempotent: String(String(s)) changes
// nothing.
func String(s string) (out string, n int) {
	out, n = scan(s)
	if n == 0 {
		return s, 0
	}
	// A replacement can, rarely, bring together text that a further pass would
	// redact (or unmask a pattern a longer match had hidden): iterate to a
	// fixed point so that redacting the output again changes nothing. Only
	// text that had a secret pays for the extra passes.
	for pass := 0; pass < 4; pass++ {
		again, m := scan(out)
		if m == 0 {
			break
		}
		out, n = again, n+m
	}
	return out, n
}
