package shell

import (
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The analyses of programs whose meaning the table cannot say.

// optValue returns the value of the first of the options named (the
// forms of optValues).
func optValue(args []string, valued string, names ...string) (string, bool) {
	if vs := optValues(args, valued, names...); len(vs) > 0 {
		return vs[0], true
	}
	return "", false
}

// optValues returns the values of every occurrence of the options named,
// in the order given, reading args as the program does (argReader, with
// valued its options taking a value; the options named take one too):
// `-o v`, `-ov`, `-sSo v`, `-sSov`, `--output v` and `--output=v`.
func optValues(args []string, valued string, names ...string) []string {
	var out []string
	r := argReader{args: args, valued: valued, names: names, namesTake: true}
	for a, ok := r.next(); ok; a, ok = r.next() {
		if a.hasVal && a.opt != "" && r.named(a) {
			out = append(out, a.val)
		}
	}
	return out
}

// hasOpt reports whether one of the options named is given, reading args
// as the program does (argReader, with valued its options taking a
// value): "-f" is also the letter f of a group (-rf). With valued "",
// every letter of a group is a flag.
func hasOpt(args []string, valued string, names ...string) bool {
	r := argReader{args: args, valued: valued, names: names}
	for a, ok := r.next(); ok; a, ok = r.next() {
		if a.opt != "" && r.named(a) {
			return true
		}
	}
	return false
}

// searchOperands returns the files a search (grep, rg) names among its
// operands: all but the first, its pattern, unless -e or -f gives the
// pattern (or rg --files lists files, and needs none).
func searchOperands(args, operands []string, valued string) []string {
	switch {
	case hasOpt(args, valued, "-e", "--regexp", "-f", "--file", "--files"):
		return operands
	case len(operands) > 0:
		return operands[1:]
	}
	return nil
}

// searchDir: a search that names no file searches the working directory
// — grep when an option of recursive (the table's form) is given, and,
// with recursive "", rg, ag and ack unless their standard input is fed
// (a pipe, a heredoc, a file), which they search instead.
func searchDir(valued, recursive string) func(w *walker, st *Step, args []string) {
	rec := strings.Fields(recursive)
	return func(w *walker, st *Step, args []string) {
		if len(searchOperands(args, splitOperands(args, valued), valued)) > 0 {
			return
		}
		if len(rec) > 0 && hasOpt(args, valued, rec...) || len(rec) == 0 && w.in == nil {
			w.read(st, ".")
		}
	}
}

// outputOption records the files the options named write (sort -o,
// iconv -o, less -o, wget -o), valued being the program's options that
// take a value.
func outputOption(valued string, names ...string) func(w *walker, st *Step, args []string) {
	return func(w *walker, st *Step, args []string) {
		for _, v := range optValues(args, valued, names...) {
			w.write(st, v)
		}
	}
}

// inputOption records the files the options named read (mke2fs -d DIR,
// sgdisk -l FILE), valued being the program's options that take a
// value; "-" is the standard input.
func inputOption(valued string, names ...string) func(w *walker, st *Step, args []string) {
	return func(w *walker, st *Step, args []string) {
		w.read(st, optValues(args, valued, names...)...)
	}
}

// curlOutput: the files curl writes — what it downloads (-o FILE; -O
// and --remote-name the URL's last segment, in --output-dir) — and
// what it writes besides: the headers (-D), a trace (--trace,
// --trace-ascii), its messages (--stderr), the C code of the transfer
// (--libcurl), the ETag (--etag-save), the cookies (-c, --cookie-jar),
// the caches it reads and saves again (--hsts, --alt-svc,
// --ssl-sessions).
// "-" is the standard output, "%" the standard error: no file.
func curlOutput(w *walker, st *Step, args []string) {
	dir, _ := optValue(args, curlValued, "--output-dir")
	in := func(f string) string {
		if dir != "" && f != "-" && !path.IsAbs(f) {
			return path.Join(dir, f)
		}
		return f
	}
	for _, v := range optValues(args, curlValued, "-o", "--output") {
		w.write(st, in(v))
	}
	if hasOpt(args, curlValued, "-O", "--remote-name", "--remote-name-all") {
		for _, h := range splitOperands(args, curlValued) {
			// A URL without a file name is an error: nothing written.
			if u, err := url.Parse(h); err == nil && u.Host != "" && path.Base(u.Path) != "/" && path.Base(u.Path) != "." {
				w.write(st, in(path.Base(u.Path)))
			}
		}
	}
	for _, v := range optValues(args, curlValued, "-D", "--dump-header", "--trace", "--trace-ascii", "--stderr", "--libcurl",
		"--etag-save", "-c", "--cookie-jar", "--hsts", "--alt-svc", "--ssl-sessions") {
		if v != "%" {
			w.write(st, v)
		}
	}
}

// curlReads: the files curl reads, most of them to send — -T's upload,
// data given as @FILE (-d, --data-binary, --json, -H …),
// --data-urlencode's and --url-query's [NAME]@FILE, -F's NAME=@FILE (a
// file uploaded) and NAME=<FILE (a field's content) — and -K's
// configuration; the cookies of -b FILE (a value without '=', which
// would be the cookies themselves), the credentials of --netrc-file, a
// --variable's NAME@FILE; the client certificate and key (-E, --cert
// CERT[:PASSWORD], --key; --key-type is no file), the certificates it
// trusts (--cacert, --capath, --crlfile, --pinnedpubkey), the SSH keys
// (--pubkey, --knownhosts), the format of -w @FILE, the ETag of
// --etag-compare and its caches (--hsts, --alt-svc, --ssl-sessions).
// "-" is the standard input, no file.
func curlReads(w *walker, st *Step, args []string) {
	var files []string
	// One pass over the arguments: curl's list of options is long, and
	// the command common.
	r := argReader{args: args, valued: curlValued}
	for a, ok := r.next(); ok; a, ok = r.next() {
		if a.opt == "" || !a.hasVal {
			continue
		}
		switch v := a.val; a.name() {
		case "-T", "--upload-file", "-K", "--config", "--netrc-file":
			if v != "." { // -T .: the standard input, without blocking
				files = append(files, v)
			}
		case "-d", "--data", "--data-binary", "--data-ascii", "--json", "-H", "--header", "--proxy-header", "-w", "--write-out":
			if f, ok := strings.CutPrefix(v, "@"); ok {
				files = append(files, f)
			}
		case "-b", "--cookie":
			if !strings.Contains(v, "=") {
				files = append(files, v)
			}
		case "--data-urlencode", "--url-query", "--variable":
			// [NAME]@FILE; a '=' makes the rest the content itself
			// (NAME=CONTENT), wherever an '@' is.
			if !strings.Contains(v, "=") {
				if _, f, ok := strings.Cut(v, "@"); ok {
					files = append(files, f)
				}
			}
		case "-F", "--form":
			files = append(files, formFiles(v)...)
		case "-E", "--cert", "--proxy-cert":
			files = append(files, certFiles(v)...)
		case "--key", "--proxy-key", "--cacert", "--capath", "--proxy-cacert", "--proxy-capath", "--crlfile",
			"--proxy-crlfile", "--pinnedpubkey", "--proxy-pinnedpubkey", "--pubkey", "--knownhosts", "--random-file",
			"--etag-compare", "--hsts", "--alt-svc", "--ssl-sessions":
			// A PKCS#11 URI names a key in a token; sha256//HASH a key's hash.
			if !hasPrefixFold(v, "pkcs11:") && !strings.HasPrefix(v, "sha256//") {
				files = append(files, v)
			}
		}
	}
	w.read(st, files...)
}

// certFiles returns the file of curl's --cert CERT[:PASSWORD]: CERT
// ends at the first colon that no backslash escapes (\: and \\ stand for
// : and \). A PKCS#11 URI (pkcs11:…) names no file. A drive letter
// (C:\cert.pem) is kept by curl on Windows and is a file C with a
// password elsewhere: both are read.
func certFiles(v string) []string {
	if hasPrefixFold(v, "pkcs11:") {
		return nil
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\' && i+1 < len(v) && (v[i+1] == ':' || v[i+1] == '\\'):
			i++
			b.WriteByte(v[i])
		case c == ':':
			if i == 1 && len(v) > 2 && (v[2] == '\\' || v[2] == '/') && isLetters(v[:1]) {
				return []string{b.String(), v[:2] + certFiles(v[2:])[0]}
			}
			return []string{b.String()}
		default:
			b.WriteByte(c)
		}
	}
	return []string{b.String()}
}

// hasPrefixFold reports whether s begins with prefix, ignoring case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// curlHosts: the hosts curl reaches besides its URL operands — the URLs
// of --url, the proxies (-x, --preproxy, --socks5 …), the DNS-over-HTTPS
// server, the host --connect-to sends a host's requests to
// (HOST1:PORT1:HOST2:PORT2) and the addresses --resolve gives a host
// ([+]HOST:PORT:ADDR[,ADDR]…).
func curlHosts(w *walker, st *Step, args []string) {
	for _, v := range optValues(args, curlValued, "--url", "-x", "--proxy", "--preproxy", "--proxy1.0", "--socks4",
		"--socks4a", "--socks5", "--socks5-hostname", "--doh-url", "--ipfs-gateway") {
		st.Hosts = appendNew(st.Hosts, hostOf(v))
	}
	for _, v := range optValues(args, curlValued, "--connect-to") {
		if f := splitColons(v); len(f) == 4 {
			st.Hosts = appendNew(st.Hosts, strings.Trim(f[2], "[]"))
		}
	}
	for _, v := range optValues(args, curlValued, "--resolve") {
		if f := splitColons(strings.TrimLeft(v, "+-")); len(f) > 2 {
			for _, addr := range strings.Split(strings.Join(f[2:], ":"), ",") {
				st.Hosts = appendNew(st.Hosts, strings.Trim(addr, "[]"))
			}
		}
	}
}

// splitColons splits HOST:PORT:… at the colons that are not within
// brackets ([::1]:443).
func splitColons(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ':':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// hostThenPorts: nc HOST PORT…, telnet HOST [PORT]: the first operand is
// the host reached, those after it ports. An option of listen (nc -l, a
// server; -U, a Unix socket) makes it reach no host; the value of an
// option of proxies is a host reached. The lists are the table's form
// ("-l --listen").
func hostThenPorts(valued, proxies, listen string) func(w *walker, st *Step, args []string) {
	proxy, server := strings.Fields(proxies), strings.Fields(listen)
	return func(w *walker, st *Step, args []string) {
		if ops := splitOperands(args, valued); len(ops) > 0 && (len(server) == 0 || !hasOpt(args, valued, server...)) {
			st.Hosts = appendNew(st.Hosts, hostOf(ops[0]))
		}
		if len(proxy) > 0 {
			for _, v := range optValues(args, valued, proxy...) {
				st.Hosts = appendNew(st.Hosts, hostOf(v))
			}
		}
	}
}

// netExec: nc -e PROG, -c CMD, ncat --exec "PROG ARGS", --sh-exec CMD
// run a command for the remote end: what it sends is the command's
// input, what the command writes goes back; ncat's --lua-exec FILE runs
// a Lua script so, analysed as lua FILE (luaScript). The command is
// analysed with that input (serve): a shell or an interpreter served so
// runs whatever the remote end sends. The arguments are read with each list of
// options taking a value given (readings, the table's form: nc's -c a
// value and a flag), and a command any reading finds is analysed, once.
func netExec(readings ...string) func(w *walker, st *Step, args []string) {
	return func(w *walker, st *Step, args []string) {
		known := w.known
		type found struct {
			at  int
			val string
		}
		var seen []found
		for _, valued := range readings {
			r := argReader{args: args, valued: valued}
			for a, ok := r.next(); ok; a, ok = r.next() {
				lua := a.is("--lua-exec")
				if !a.hasVal || !(lua || a.is("-e") || a.is("-c") || a.is("--exec") || a.is("--sh-exec")) {
					continue
				}
				if f := (found{a.valueAt(), a.val}); !slices.Contains(seen, f) {
					seen = append(seen, f)
					via, cmd, ok := st.Program+" "+args[a.at], a.val, w.argKnownIn(known, a.valueAt())
					if lua {
						cmd, ok = luaScript(a.val, ok)
					}
					w.serve(st, cmd, ok, via, "the remote end of "+via)
				}
			}
		}
	}
}

// luaScript is the command that runs a Lua script as ncat --lua-exec
// does, lua FILE, and whether it is known: a file not known before run
// time, or one no quoting can name, runs code not known.
func luaScript(file string, known bool) (string, bool) {
	q, err := syntax.Quote(file, syntax.LangBash)
	return "lua " + q, known && err == nil
}

// portHost: nc HOST PORT read with another list of options taking a
// value (valued, the table's form): its first operand is a host reached
// when the second can be a port — a number, a range (20-80), a
// service's name (https) — and no option of listen is given. So the
// host of a reading with nc's -c a flag (nc -c example.com 443) is
// reached, but not a command of the reading with -c a value taken for a
// host (nc -c sh example.com 443: example.com is no port).
func portHost(valued, listen string) func(w *walker, st *Step, args []string) {
	server := strings.Fields(listen)
	return func(w *walker, st *Step, args []string) {
		ops := splitOperands(args, valued)
		if len(ops) < 2 || !isPort(ops[1]) || strings.ContainsAny(ops[0], " \t\n") || hasOpt(args, valued, server...) {
			return
		}
		st.Hosts = appendNew(st.Hosts, hostOf(ops[0]))
	}
}

// isPort reports whether s can be the port nc is given: a number, a
// range of them, or the name of a service (letters, digits and '-').
func isPort(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return s != ""
}

// serve analyses a command a program runs for another end (via names
// it: "nc -e", "socat EXEC"), with what that end sends (from) on its
// input: a shell or an interpreter it runs with no script runs a program
// not known before run time.
func (w *walker) serve(st *Step, cmd string, known bool, via, from string) {
	if !known {
		dynamic(st, via+" runs a command not known before run time")
		return
	}
	w.scriptIn(cmd, []string{via}, &input{program: from})
}

// socatAddresses: socat's two addresses, TYPE:PARAMETERS[,OPTION…] — a
// host reached (TCP:HOST:PORT, OPENSSL:…, SOCKS4:PROXY:HOST:PORT …), a
// port listened on (TCP-LISTEN:PORT), a file (OPEN:, GOPEN:, CREATE:, a
// path), or a command run for the other address (EXEC:, SYSTEM:,
// SHELL:), analysed with what the other address sends on its input
// (serve). Data flows both ways unless -u (from the first address to
// the second) or -U (back): a file is read when data flows out of it,
// written when into it.
func socatAddresses(w *walker, st *Step, args []string) {
	known := w.known
	var addrs []arg
	r := argReader{args: args, valued: socatValued}
	for a, ok := r.next(); ok && len(addrs) < 2; a, ok = r.next() {
		if a.opt == "" {
			addrs = append(addrs, a)
		}
	}
	from := "socat's other address"
	for _, a := range addrs {
		if typ, _, _ := strings.Cut(a.val, ":"); socatNet(typ) != "" {
			from = "the remote end of socat"
		}
	}
	// outOf[i], into[i]: the option that stops data flowing out of,
	// into, address i.
	outOf, into := [2]string{"-U", "-u"}, [2]string{"-u", "-U"}
	for i, a := range addrs {
		typ, params, colon := strings.Cut(a.val, ":")
		typ, params = strings.ToUpper(typ), socatParam(params)
		switch net := socatNet(typ); {
		case net == "listen":
		case net != "":
			f := splitColons(params)
			st.Hosts = appendNew(st.Hosts, strings.Trim(f[0], "[]"))
			if net == "proxy" && len(f) > 1 {
				st.Hosts = appendNew(st.Hosts, strings.Trim(f[1], "[]"))
			}
		case typ == "EXEC" || typ == "SYSTEM" || typ == "SHELL":
			w.serve(st, params, w.argKnownIn(known, a.at), "socat "+typ, from)
		case !colon && strings.Contains(a.val, "/"),
			typ == "OPEN" || typ == "GOPEN" || typ == "CREATE" || typ == "CREAT" || typ == "PIPE":
			f := params
			if !colon {
				f = socatParam(a.val)
			}
			if typ != "CREATE" && typ != "CREAT" && !hasOpt(args, socatValued, outOf[i]) {
				w.read(st, f)
			}
			if !hasOpt(args, socatValued, into[i]) {
				w.write(st, f)
			}
		}
	}
}

// socatNet says what a socat address type reaches: "host" (TCP:HOST:PORT,
// UDP-SENDTO, OPENSSL …), "proxy" (SOCKS4:PROXY:HOST:PORT, PROXY:…),
// "listen" (TCP-LISTEN:PORT, UDP-RECV, SSL-L …), "" none (a file, a
// command, STDIO).
func socatNet(typ string) string {
	typ = strings.ToUpper(typ)
	base, _, _ := strings.Cut(typ, "-")
	net := "host"
	switch strings.TrimRight(base, "46") {
	case "TCP", "UDP", "UDPLITE", "SCTP", "DCCP", "IP", "OPENSSL", "SSL", "VSOCK":
	case "SOCKS", "SOCKS4A", "SOCKS5", "PROXY":
		net = "proxy"
	default:
		return ""
	}
	switch typ[strings.LastIndexByte(typ, '-')+1:] {
	case "LISTEN", "L", "RECV", "RECVFROM", "SERVER":
		return "listen"
	}
	return net
}

// socatParam returns a socat address's parameters up to its options (the
// first comma outside quotes and brackets), socat's quotes and
// backslashes removed.
func socatParam(s string) string {
	var b strings.Builder
	var quote byte
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
			continue
		case quote != 0:
		case c == '\'' || c == '"':
			quote = c
			continue
		case c == '\\' && i+1 < len(s):
			i++
			c = s[i]
		case c == '[' || c == '{' || c == '(':
			depth++
		case c == ']' || c == '}' || c == ')':
			depth--
		case c == ',' && depth <= 0:
			return b.String()
		}
		b.WriteByte(c)
	}
	return b.String()
}

// formFiles returns the files a curl -F NAME=CONTENT reads: after @,
// files to upload, separated by commas; after <, one file whose text is
// the field's. A file name ends at the ';' of its parameters (;type=…,
// ;filename=…) unless it is quoted ("a;b.txt", \" and \\ escaped).
func formFiles(v string) []string {
	_, content, _ := strings.Cut(v, "=")
	if content == "" || content[0] != '@' && content[0] != '<' {
		return nil
	}
	multi, ends := content[0] == '@', ";"
	if multi {
		ends = ";,"
	}
	var files []string
	for s := content[1:]; ; {
		var name string
		if q, ok := strings.CutPrefix(s, `"`); ok {
			var b strings.Builder
			i := 0
			for ; i < len(q) && q[i] != '"'; i++ {
				if q[i] == '\\' && i+1 < len(q) && (q[i+1] == '"' || q[i+1] == '\\') {
					i++
				}
				b.WriteByte(q[i])
			}
			name, s = b.String(), q[min(i+1, len(q)):]
		} else {
			end := strings.IndexAny(s, ends)
			if end < 0 {
				end = len(s)
			}
			name, s = s[:end], s[end:]
		}
		files = append(files, name)
		// Skip the file's parameters, up to the next file.
		next := strings.IndexByte(s, ',')
		if !multi || next < 0 {
			return files
		}
		s = s[next+1:]
	}
}

// wgetReads: the files wget reads — what --post-file and --body-file
// send, the URLs of -i (itself a URL: a host it reaches), --config's
// settings. "-" is the standard input.
func wgetReads(w *walker, st *Step, args []string) {
	for _, v := range optValues(args, wgetValued, "--post-file", "--body-file", "-i", "--input-file", "--config") {
		switch {
		case v == "" || v == "-":
		case strings.Contains(v, "://"):
			st.Hosts = appendNew(st.Hosts, hostOf(v))
		default:
			st.Reads = appendNew(st.Reads, w.abs(v))
		}
	}
}

// wgetCommands are the .wgetrc commands whose option the analyses of
// wget read (wgetOutput, wgetReads, its outputOption and optionRuns),
// by name as wget reads one: in lower case, without '_' or '-'.
var wgetCommands = map[string]string{
	"outputdocument": "--output-document", "dirprefix": "--directory-prefix", "logfile": "--output-file",
	"postfile": "--post-file", "bodyfile": "--body-file", "input": "--input-file", "useaskpass": "--use-askpass",
}

// wgetExecute: wget -e CMD (--execute) runs a .wgetrc command, NAME =
// VALUE, as the option it stands for does (output_document=F is -O F,
// use_askpass=CMD --use-askpass=CMD): the analyses are given those
// options before wget's own. A command not known may be any: the step
// is a program not known.
func wgetExecute(analyses ...func(w *walker, st *Step, args []string)) func(w *walker, st *Step, args []string) {
	return func(w *walker, st *Step, args []string) {
		var opts []string
		var known []bool
		r := argReader{args: args, valued: wgetValued, names: []string{"-e", "--execute"}, namesTake: true}
		for a, ok := r.next(); ok; a, ok = r.next() {
			if !a.hasVal || a.opt == "" || !r.named(a) {
				continue
			}
			if !w.argKnownIn(w.known, a.valueAt()) {
				dynamic(st, "wget runs a .wgetrc command not known before run time")
				return
			}
			name, val, _ := strings.Cut(a.val, "=")
			name = strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(strings.TrimSpace(name)))
			if opt, ok := wgetCommands[name]; ok {
				opts, known = append(opts, opt+"="+strings.TrimSpace(val)), append(known, true)
			}
		}
		saved := w.known
		defer func() { w.known = saved }()
		args, w.known = append(opts, args...), append(known, w.known...)
		for _, f := range analyses {
			f(w, st, args)
		}
	}
}

// wgetOutput: wget writes the file it downloads (-O names it, - is stdout).
func wgetOutput(w *walker, st *Step, args []string) {
	if v, ok := optValue(args, wgetValued, "-O", "--output-document"); ok {
		if v == "-" {
			st.Effect = Network
			return
		}
		w.write(st, v)
		return
	}
	dir, _ := optValue(args, wgetValued, "-P", "--directory-prefix")
	for _, o := range splitOperands(args, wgetValued) {
		if u, err := url.Parse(o); err == nil && u.Host != "" {
			name := path.Base(u.Path)
			if name == "/" || name == "." {
				name = "index.html"
			}
			if dir != "" {
				name = path.Join(dir, name)
			}
			w.write(st, name)
		}
	}
}

// jqArgs: jq's first operand is its filter, no file, unless -f
// (--from-file) makes it the file the filter is read from; the operands
// after it are files read, except those after --args or --jsonargs,
// which are values ($ARGS.positional). --arg NAME VALUE and --argjson
// NAME VALUE take two words; --slurpfile NAME FILE and --rawfile NAME
// FILE read FILE; -L DIR is where imports are read from (JSON data
// too: import "x" as $x).
func jqArgs(w *walker, st *Step, args []string) {
	var filter string
	var files []string
	program, fromFile, values := true, false, false
	r := argReader{args: args, valued: jqValued}
	for a, ok := r.next(); ok; a, ok = r.next() {
		switch {
		case a.opt == "" && program:
			filter, program = a.val, false
		case a.opt == "":
			if !values {
				files = append(files, a.val)
			}
		case a.is("-f") || a.is("--from-file"):
			fromFile = true
		case a.is("-L") || a.is("--library-path"):
			files = append(files, a.val)
		case a.is("--arg") || a.is("--argjson"):
			r.skip()
		case a.is("--slurpfile") || a.is("--rawfile"):
			if f, ok := r.skip(); ok {
				files = append(files, f)
			}
		case a.is("--args") || a.is("--jsonargs"):
			values = true
		}
	}
	if fromFile && !program {
		files = append([]string{filter}, files...)
	}
	w.read(st, files...)
}

// yqArgs: yq [eval|e|eval-all|ea] [EXPRESSION] [FILE…]. The expression is
// the first operand, unless --expression gives it or --from-file names
// its file; yq takes the first operand for a file, though, when one by
// that name exists (`yq f.yaml` prints it, and so does `yq .env x`), so
// it is read unless it cannot be a file to read: "." or an operand
// holding what only an expression holds (spaces, | = ( [ { " $ …). -n
// reads no file. -i (--inplace) writes the first file — the first
// operand or the second when the first may be either. --split-exp
// writes files whose names the expression yields: Anywhere. With
// --security-enable-system-operator the expression may run commands.
func yqArgs(w *walker, st *Step, args []string) {
	if hasOpt(args, yqValued, "--security-enable-system-operator") {
		dynamic(st, "yq's system operator runs commands")
		return
	}
	for _, f := range optValues(args, yqValued, "--from-file", "--split-exp-file") {
		st.Reads = appendNew(st.Reads, w.abs(f))
	}
	files := splitOperands(args, yqValued)
	if len(files) > 0 && (files[0] == "eval" || files[0] == "e" || files[0] == "eval-all" || files[0] == "ea") {
		files = files[1:]
	}
	first := 1 // how many of the files the first -i writes may be
	switch {
	case hasOpt(args, yqValued, "--expression", "--from-file") || len(files) == 0:
	case hasOpt(args, yqValued, "-n", "--null-input"):
		files = nil
	case files[0] == "." || strings.ContainsAny(files[0], " \t\n|=()[]{}\"'$,<>!"):
		files = files[1:]
	case len(files) > 1:
		first = 2
	}
	w.read(st, files...)
	if hasOpt(args, yqValued, "-i", "--inplace") {
		for _, f := range files[:min(first, len(files))] {
			w.write(st, f)
		}
	}
	if hasOpt(args, yqValued, "-s", "--split-exp", "--split-exp-file") {
		w.write(st, Anywhere)
	}
}

// copyTarget: cp and ln -t DIR write DIR and read every operand.
func copyTarget(w *walker, st *Step, args []string) { copyInto(w, st, args, copyValued) }

// copyInto: -t DIR (--target-directory) makes DIR the directory written
// and every operand a file read; valued is the program's options that
// take a value.
func copyInto(w *walker, st *Step, args []string, valued string) {
	dir, ok := optValue(args, valued, "-t", "--target-directory")
	if !ok {
		return
	}
	st.Reads, st.Writes = nil, nil
	for _, o := range splitOperands(args, valued) {
		st.Reads = appendNew(st.Reads, w.abs(o))
	}
	w.write(st, dir)
}

// installArgs: install's options take their values (-m MODE, -o OWNER,
// -g GROUP); -t DIR is the directory written, as cp's; -d makes every
// operand a directory, written.
func installArgs(w *walker, st *Step, args []string) {
	copyInto(w, st, args, installValued)
	if hasOpt(args, installValued, "-d", "--directory") {
		st.Reads, st.Writes = nil, nil
		for _, o := range splitOperands(args, installValued) {
			w.write(st, o)
		}
	}
}

// mvSources: mv removes its sources, so they are written as well as the
// destination; mv x /dev/null deletes x.
func mvSources(w *walker, st *Step, args []string) {
	copyTarget(w, st, args)
	if _, ok := optValue(args, copyValued, "-t", "--target-directory"); !ok {
		if ops := splitOperands(args, copyValued); len(ops) > 1 && ops[len(ops)-1] == "/dev/null" {
			st.Effect, st.Subtype, st.Why = Destructive, SubtypeDeleteFile, "mv to /dev/null"
			st.Writes = st.Reads
			st.Reads = nil
			return
		}
	}
	st.Writes = appendNew(slices.Clone(st.Reads), st.Writes...)
}

// devices: what makes, wipes or partitions a file system writes the
// devices (or images) it names — mkfs DEVICE [BLOCKS]: a number is a
// size, not a file. An option of lists (the table's form, "-l --list")
// makes the run a listing, which reads them. valued is the program's
// options that take a value.
func devices(valued, lists string) func(w *walker, st *Step, args []string) {
	listing := strings.Fields(lists)
	return func(w *walker, st *Step, args []string) {
		deviceRun(w, st, deviceOperands(args, valued), len(listing) > 0 && hasOpt(args, valued, listing...))
	}
}

// deviceOperands returns the devices (or images) among the operands of
// a program that writes file systems: a number is a size, not a file.
func deviceOperands(args []string, valued string) []string {
	var devs []string
	for _, o := range splitOperands(args, valued) {
		if o != "" && strings.Trim(o, "0123456789kKmMgGtT") != "" {
			devs = append(devs, o)
		}
	}
	return devs
}

// wipefs: wipefs DEVICE… lists the signatures it finds on the devices,
// which it reads; -a (--all) erases them all and -o OFFSET (--offset)
// the one at OFFSET, which destroys the devices, unless -n (--no-act)
// does all but write. Erasing, -b (--backup) saves each signature in
// ~/wipefs-NAME-OFFSET.bak.
func wipefs(w *walker, st *Step, args []string) {
	devs := deviceOperands(args, wipefsValued)
	erases := hasOpt(args, wipefsValued, "-a", "--all", "-o", "--offset") && !hasOpt(args, wipefsValued, "-n", "--no-act")
	deviceRun(w, st, devs, !erases)
	if erases && hasOpt(args, wipefsValued, "-b", "--backup") {
		for _, d := range devs {
			w.write(st, "~/wipefs-"+path.Base(d)+"-*.bak")
		}
	}
}

// deviceRun records the devices a run names: read by a listing, else
// written (destroyed).
func deviceRun(w *walker, st *Step, devs []string, listing bool) {
	if listing {
		st.Effect, st.Subtype = ReadOnly, SubtypeRunCommand
	}
	for _, d := range devs {
		if listing {
			st.Reads = appendNew(st.Reads, w.abs(d))
		} else {
			st.Writes = appendNew(st.Writes, w.abs(d))
		}
	}
}

// mkfsType: mkfs -t TYPE runs mkfs.TYPE with the other arguments, read
// as that maker reads them; a type the table does not know, or none, is
// read with the options every maker shares (mkfsValued).
func mkfsType(w *walker, st *Step, args []string) {
	if t, ok := optValue(args, mkfsValued, "-t", "--type"); ok {
		if pr := programTable()["mkfs."+t]; pr != nil {
			w.apply(st, pr, args)
			return
		}
	}
	devices(mkfsValued, "")(w, st, args)
}

// sgdisk: the devices it names are written unless every option given
// only shows or saves (-p, -v, -i N, -b FILE …, sgdiskShows) or -P
// (--pretend) keeps the changes from being saved.
func sgdisk(w *walker, st *Step, args []string) {
	pretend, shows, changes := false, false, false
	showing := strings.Fields(sgdiskShows)
	r := argReader{args: args, valued: sgdiskValued}
	for a, ok := r.next(); ok; a, ok = r.next() {
		switch {
		case a.opt == "":
		case a.is("-P") || a.is("--pretend"):
			pretend = true
		case slices.ContainsFunc(showing, a.is):
			shows = true
		default:
			changes = true
		}
	}
	deviceRun(w, st, splitOperands(args, sgdiskValued), pretend || shows && !changes)
}

// parted [DEVICE [COMMAND …]]: the words after the device are parted's
// commands (parted -s /dev/sda mklabel gpt), no files. It writes the
// device unless it only shows: -l (--list), or commands that show
// (print, unit, align-check, help); with no command it prompts for
// commands, which may do anything to the device.
func parted(w *walker, st *Step, args []string) {
	ops := splitOperands(args, partedValued)
	if hasOpt(args, partedValued, "-l", "--list") || len(ops) == 0 {
		deviceRun(w, st, ops, hasOpt(args, partedValued, "-l", "--list"))
		return
	}
	shows := len(ops) > 1
	for i := 1; i < len(ops) && shows; i++ {
		switch ops[i] {
		case "print", "p", "free", "all", "list", "devices", "help", "version", "quit":
		case "unit":
			i++ // the unit
		case "align-check":
			i += 2 // the alignment and the partition
		default:
			shows = false
		}
	}
	deviceRun(w, st, ops[:1], shows)
}

// sevenZip: 7z COMMAND [SWITCHES] ARCHIVE [FILES] (7za, 7zz, 7zr). a
// (add) and u (update) write the archive and read the files named — as
// operands, in @LISTFILE, or by -i!FILE and -i@LISTFILE; none but the
// archive adds the working directory — and -sdel deletes them once
// added (written, as mv's sources are). d (delete) and rn (rename)
// change the archive. x and e read it and write the files they extract
// into -oDIR, else the working directory (with -so, the standard
// output: nothing; a or u with -so write no archive, with -si add the
// standard input). l, t and i read the archive, h hashes the files it
// names, b reads nothing.
func sevenZip(w *walker, st *Step, args []string) {
	ops := splitOperands(args, sevenZipValued)
	if len(ops) == 0 {
		st.Effect, st.Subtype = ReadOnly, SubtypeRunCommand
		return
	}
	cmd, ops := strings.ToLower(ops[0]), ops[1:]
	switch cmd {
	case "a", "u":
		var files []string
		if len(ops) > 1 {
			files = ops[1:]
		}
		stdin := false
		r := argReader{args: args, valued: sevenZipValued}
		for a, ok := r.next(); ok; a, ok = r.next() {
			// -i[r[-|0]]{!FILE|@LISTFILE}; -si[NAME] adds the standard
			// input.
			if v, ok := strings.CutPrefix(a.opt, "-i"); ok {
				v = strings.TrimLeft(strings.TrimPrefix(v, "r"), "-0")
				if len(v) > 1 && (v[0] == '!' || v[0] == '@') {
					files = append(files, strings.TrimPrefix(v, "!"))
				}
			}
			stdin = stdin || strings.HasPrefix(a.opt, "-si")
		}
		if len(files) == 0 && !stdin {
			files = []string{"."}
		}
		for _, f := range files {
			w.read(st, strings.TrimPrefix(f, "@"))
		}
		switch {
		case hasOpt(args, sevenZipValued, "-so"):
			st.Effect = ReadOnly
		case len(ops) > 0:
			w.write(st, ops[0])
		}
		if hasOpt(args, sevenZipValued, "-sdel") {
			st.Why = "-sdel"
			for _, f := range files {
				if !strings.HasPrefix(f, "@") {
					w.write(st, f)
				}
			}
		}
	case "d", "rn":
		if len(ops) > 0 {
			w.read(st, ops[0])
			w.write(st, ops[0])
		}
	case "x", "e":
		if len(ops) > 0 {
			w.read(st, ops[0])
		}
		if hasOpt(args, sevenZipValued, "-so") {
			st.Effect, st.Subtype = ReadOnly, SubtypeReadFile
		} else {
			dir, _ := optValue(args, sevenZipValued, "-o")
			w.write(st, cmpOr(dir, "."))
		}
	case "h":
		st.Effect, st.Subtype = ReadOnly, SubtypeReadFile
		w.read(st, ops...)
	default:
		st.Effect, st.Subtype = ReadOnly, SubtypeReadFile
		if len(ops) > 0 && cmd != "b" {
			w.read(st, ops[0])
		}
	}
}

// unzipArgs: unzip ZIPFILE [MEMBER…] [-x MEMBER…] [-d DIR] reads the
// archive and writes what it extracts into -d DIR, else the working
// directory; its other operands name members of the archive, no files
// here. Listing or testing (-l, -v, -t, -z, -Z) and extracting to the
// standard output (-p, -c) only read.
func unzipArgs(w *walker, st *Step, args []string) {
	if ops := splitOperands(args, unzipValued); len(ops) > 0 {
		w.read(st, ops[0])
	}
	if hasOpt(args, unzipValued, "-l", "-v", "-t", "-z", "-Z", "-p", "-c") {
		st.Effect, st.Subtype = ReadOnly, SubtypeReadFile
		return
	}
	dir, _ := optValue(args, unzipValued, "-d")
	w.write(st, cmpOr(dir, "."))
}

// zipArgs: zip [OPTIONS] ZIPFILE [FILE…] writes the archive ("-": the
// standard output) and reads the files it adds; -O OUT (--output-file)
// writes OUT instead, reading the archive. The words after -x or -i are
// patterns, no files (-x@LIST reads LIST). -d (--delete) removes
// entries: the archive is changed, the operands are entries; -sf
// (--show-files) only reads it. -m (--move, also in a group: -rm)
// deletes the files once added: written, as mv's sources are.
func zipArgs(w *walker, st *Step, args []string) {
	var archive string
	var files, lists []string
	named, patterns, move := false, false, false
	r := argReader{args: args, valued: zipValued}
	for a, ok := r.next(); ok; a, ok = r.next() {
		switch {
		case a.opt == "" && patterns:
		case a.opt == "" && !named:
			archive, named = a.val, true
		case a.opt == "":
			files = append(files, a.val)
		case a.is("-x") || a.is("-i") || a.is("--exclude") || a.is("--include"):
			patterns = true
		default:
			patterns = false
			if strings.HasPrefix(a.opt, "-x@") || strings.HasPrefix(a.opt, "-i@") {
				lists = append(lists, a.opt[3:])
			}
			// -m, or m in a group of letters and digits (-rm, -9m).
			move = move || a.is("--move") ||
				!a.letter && !strings.HasPrefix(a.opt, "--") && strings.Contains(a.opt, "m") && isLetters(strings.Trim(a.opt[1:], "0123456789"))
		}
	}
	switch {
	case hasOpt(args, zipValued, "-sf", "--show-files"):
		st.Effect, st.Subtype = ReadOnly, SubtypeReadFile
		w.read(st, archive)
		return
	case hasOpt(args, zipValued, "-d", "--delete"):
		w.read(st, archive)
		w.write(st, archive)
		return
	}
	w.read(st, files...)
	w.read(st, lists...)
	if out, ok := optValue(args, zipValued, "-O", "--output-file", "--out"); ok {
		w.read(st, archive)
		w.write(st, out)
	} else if archive != "" && archive != "-" {
		w.write(st, archive)
	} else {
		st.Effect = ReadOnly
	}
	if move {
		st.Why = "-m"
		for _, f := range files {
			w.write(st, f)
		}
	}
}

// gpgCommand: gpg [OPTIONS] [COMMAND …] [ARGS]. The operands of a
// command on data (gpgData: -e, -c, -s, -d, --verify, --import …, or of
// no command: gpg guesses) are files read; those of a command on keys
// (--list-keys bob, --delete-keys bob) are names. -o FILE (--output) is
// written ("-" the standard output); without it, what encrypts or signs
// a file writes it with .gpg (.asc with -a, .sig for a detached
// signature), what decrypts files (--decrypt-files, or no command)
// writes them without their extension, and -d writes the standard
// output. One that reaches a keyserver (gpgNetwork, at --keyserver's
// host) is network, write when it imports; deleting a key (gpgDeletes)
// destroys what is no path of the command; the other commands on keys
// and importing change the keyring: write; the rest write what they
// write.
func gpgCommand(w *walker, st *Step, args []string) {
	all := strings.Fields(gpgData + " " + gpgShows + " " + gpgNetwork + " " + gpgKeys)
	var cmds []arg
	armor, out, output := false, "", false
	r := argReader{args: args, valued: gpgValued}
	for a, ok := r.next(); ok; a, ok = r.next() {
		switch {
		case a.opt == "":
		case a.is("-a") || a.is("--armor"):
			armor = true
		case a.is("-o") || a.is("--output"):
			out, output = a.val, true
		case slices.ContainsFunc(all, a.is):
			cmds = append(cmds, a)
		}
	}
	// given reports whether one of the commands listed is given; every,
	// whether all those given are.
	given := func(list string) bool { return gpgCommands(cmds, list, false) }
	every := func(list string) bool { return len(cmds) > 0 && gpgCommands(cmds, list, true) }
	ops := splitOperands(args, gpgValued)
	if len(cmds) == 0 || given(gpgData) {
		w.read(st, ops...)
	}
	switch {
	case given(gpgDeletes):
		st.Effect, st.Subtype, st.Why = Destructive, SubtypeDeleteFile, "delete a key"
	case given(gpgNetwork):
		st.Effect = Network
		if !every(gpgShows) {
			st.Effect = Write
		}
		if h, ok := optValue(args, gpgValued, "--keyserver"); ok {
			st.Hosts = appendNew(st.Hosts, hostOf(h))
		}
	case given(gpgKeys + " --import --fast-import --import-ownertrust"):
		st.Effect = Write
	default:
		st.Effect = ReadOnly // what it writes follows
	}
	if output {
		w.write(st, out)
		return
	}
	ext := ".gpg"
	if armor {
		ext = ".asc"
	}
	for _, o := range ops {
		switch e := path.Ext(o); {
		case o == "-":
		case len(cmds) == 0 || given("--decrypt-files"):
			if e == ".gpg" || e == ".pgp" || e == ".asc" {
				w.write(st, strings.TrimSuffix(o, e))
			}
		case given("--clear-sign --clearsign"):
			w.write(st, o+".asc")
		case given("-b --detach-sign") && !armor:
			w.write(st, o+".sig")
		case given("-e --encrypt -c --symmetric -s --sign -b --detach-sign --encrypt-files --store"):
			w.write(st, o+ext)
		}
	}
}

// configOption: the options named give a configuration the program
// reads (ssh -F, gpg --options and --homedir, man -C, less -k, curl -K,
// wget --config), which can name programs it runs or files it writes
// that the command does not show (config).
func configOption(valued string, names ...string) func(w *walker, st *Step, args []string) {
	return func(w *walker, st *Step, args []string) {
		for _, f := range optValues(args, valued, names...) {
			if w.config(st, f, f, true) {
				return
			}
		}
	}
}

// config: a configuration a program is given, a file or a directory
// (ssh -F, gpg --options and --homedir, openssl -config, curl -K,
// GIT_CONFIG_GLOBAL=), can name code the program runs or files it writes
// that the command does not show (ssh's ProxyCommand, gpg's
// agent-program, openssl's engines, git's core.pager, curl's output): it
// is read, and the step is a program not
// known before run time; "-" is the standard input, read from whatever
// feeds it, not known either. /dev/null, or "", names none; a value not known
// (known false) may name any. from says how the command gives it (the
// file, or NAME=file), for the reason. It reports whether the step was
// made dynamic, after which the program's other configurations need not
// be read.
func (w *walker) config(st *Step, f, from string, known bool) bool {
	if known && (f == "/dev/null" || f == "") {
		return false
	}
	if known && f == "-" {
		// curl -K -: what the standard input holds is not known here.
		dynamic(st, st.Program+" reading a configuration, which can name code it runs or files it writes, from its standard input")
		return true
	}
	w.read(st, f)
	dynamic(st, st.Program+" reading a configuration, which can name code it runs or files it writes, from "+from)
	return true
}

// gpgCommands reports whether one (every false) or every one of the
// commands given is in list (the table's form).
func gpgCommands(cmds []arg, list string, every bool) bool {
	names := strings.Fields(list)
	for _, c := range cmds {
		if slices.ContainsFunc(names, c.is) != every {
			return !every
		}
	}
	return every
}

// opensslCommand: openssl COMMAND [OPTIONS] [ARGS]. Its options are
// words whose value is the next word or follows '=' (-in=F), "--in"
// being "-in". Those of opensslReads name files read, of opensslWrites
// files written ("-" the standard input or output); -passin, -passout
// and -pass read file:PATH, -rand reads its files (F1:F2), -newkey
// ALG:FILE its parameters; -connect, -proxy, -url and -host name the
// host reached. The operands of a digest and of verify are files read
// (opensslOperands), rehash's directories written. The engines and
// providers it loads run code (opensslEngine, opensslProviders), and so
// do an engine's control commands (engine -pre, -post), SO_PATH and
// DIR_ADD naming the library read; a configuration (-config FILE) can
// load any (config). With no command, openssl runs the commands on its
// standard input (opensslInput).
func opensslCommand(w *walker, st *Step, args []string) {
	if len(args) == 0 {
		w.opensslInput(st)
		return
	}
	cmd := args[0]
	opts := make([]string, 0, len(args)-1)
	for _, a := range args[1:] {
		if len(a) > 2 && strings.HasPrefix(a, "--") {
			a = a[1:]
		}
		opts = append(opts, a)
	}
	reads, writes := strings.Fields(opensslReads), strings.Fields(opensslWrites)
	operands := slices.Contains(strings.Fields(opensslOperands), cmd)
	var providers []string
	providerPath := ""
	r := argReader{args: opts, valued: opensslValued}
	for a, ok := r.next(); ok; a, ok = r.next() {
		switch {
		case a.opt == "" && cmd == "rehash":
			w.write(st, a.val)
		case a.opt == "" && operands:
			w.read(st, a.val)
		case a.opt == "" && cmd == "engine":
			w.opensslEngine(st, a.val)
		case !a.hasVal:
		case a.is("-engine") || a.is("-keygen_engine") || a.is("-ssl_client_engine"):
			w.opensslEngine(st, a.val)
		case a.is("-pre") || a.is("-post"):
			// An engine's control command, run by its code: SO_PATH
			// names the library loaded, DIR_ADD a directory it is
			// looked for in.
			st.Effect = Max(st.Effect, ExecuteCheck)
			if name, v, ok := strings.Cut(a.val, ":"); ok && (name == "SO_PATH" || name == "DIR_ADD") {
				w.read(st, v)
			}
		case a.is("-config"):
			// A configuration can load engines and providers, and run
			// their code, that the command does not show.
			w.config(st, a.val, a.val, true)
		case a.is("-provider"):
			providers = append(providers, a.val)
		case a.is("-provider-path"):
			providerPath = a.val
		case a.is("-passin") || a.is("-passout") || a.is("-pass"):
			if f, ok := strings.CutPrefix(a.val, "file:"); ok {
				w.read(st, f)
			}
		case a.is("-rand"):
			for _, f := range strings.Split(a.val, ":") {
				w.read(st, f)
			}
		case a.is("-newkey"):
			if alg, f, ok := strings.Cut(a.val, ":"); ok && alg != "rsa" && alg != "rsa-pss" {
				w.read(st, f)
			}
		case a.is("-connect") || a.is("-proxy") || a.is("-url") || a.is("-host"):
			st.Hosts = appendNew(st.Hosts, hostOf(a.val))
			st.Effect = Max(st.Effect, Network)
		case slices.ContainsFunc(writes, a.is):
			w.write(st, a.val)
		case slices.ContainsFunc(reads, a.is):
			w.read(st, a.val)
		}
	}
	w.opensslProviders(st, providers, providerPath)
}

// opensslEngine: an engine openssl loads (-engine ID, req's
// -keygen_engine, s_client's -ssl_client_engine, engine's operands) is a
// shared library whose code runs, as a script's does: at least a check.
// An ID with a '/' is the path of the library (openssl loads it when no
// engine has that ID), a file read; any other ID is the one installed.
func (w *walker) opensslEngine(st *Step, id string) {
	st.Effect = Max(st.Effect, ExecuteCheck)
	if strings.Contains(id, "/") {
		w.read(st, id)
	}
}

// opensslProviders: a provider openssl loads (-provider NAME) is a
// shared library whose code runs, as an engine's (opensslEngine), but
// for those built into OpenSSL (default, base, null) and, unless
// -provider-path says where to load them from (dir), those it installs
// (fips, legacy). An absolute NAME is the library, a file read; any
// other is looked for in dir, read, or else where providers are
// installed.
func (w *walker) opensslProviders(st *Step, names []string, dir string) {
	for _, name := range names {
		switch {
		case name == "default" || name == "base" || name == "null":
			continue
		case path.IsAbs(name):
			w.read(st, name)
		case dir != "":
			w.read(st, dir)
		case name == "fips" || name == "legacy":
			continue
		}
		st.Effect = Max(st.Effect, ExecuteCheck)
	}
}

// opensslInput: openssl with no command. OpenSSL 3 lists its commands,
// but OpenSSL 1.x and LibreSSL (macOS's openssl) read commands on the
// standard input, one a line, and run each as openssl would run it
// given as its arguments: any command, those that overwrite files and
// load an engine's code among them. Which openssl runs is not known, so
// the worst is taken. Text the command gives (echo … |, a heredoc) is
// analysed a line at a time, each line a step of its own; anything else
// — the terminal, a file (openssl < cmds), what another program writes —
// is commands not known before run time, as for a shell it feeds.
func (w *walker) opensslInput(st *Step) {
	in := w.in
	switch {
	case in == nil:
		dynamic(st, "openssl with no command runs the commands on its standard input")
		return
	case !in.known:
		dynamic(st, "openssl running the commands of "+in.what())
		return
	}
	pr := lookup("openssl")
	known, fed := w.known, w.in
	defer func() { w.known, w.in = known, fed }()
	for _, line := range opensslLines(in.text) {
		switch line[0] {
		case "quit", "q", "exit", "bye":
			return
		}
		cmd := Step{Program: "openssl", Args: line, Via: []string{"openssl <<input"}}
		w.known, w.in = make([]bool, len(line)), nil
		for i := range w.known {
			w.known[i] = true
		}
		w.apply(&cmd, pr, line)
		w.add(cmd)
	}
}

// opensslLines splits the text openssl reads on its standard input into
// its commands' words as openssl's interactive mode does: a line ending
// in a backslash goes on on the next line; words are separated by
// spaces, a word opening with a quote (' or ") runs to the same quote.
// Lines with no word are left out.
func opensslLines(text string) [][]string {
	var out [][]string
	text = strings.ReplaceAll(text, "\\\n", "")
	for _, line := range strings.Split(text, "\n") {
		var words []string
		for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
			end := strings.IndexAny(line, " \t\r\v\f")
			if q := line[0]; q == '\'' || q == '"' {
				line = line[1:]
				end = strings.IndexByte(line, q)
			}
			if end < 0 {
				end = len(line)
			}
			words = append(words, line[:end])
			line = line[min(end+1, len(line)):]
		}
		if len(words) > 0 {
			out = append(out, words)
		}
	}
	return out
}

// crontab: the file it installs is read ("-" the standard input); -l
// (and cronie's -T, a check) only read.
func crontab(w *walker, st *Step, args []string) {
	w.read(st, splitOperands(args, "-u")...)
	if st.Effect != Destructive && hasOpt(args, "-u", "-l", "-T") {
		st.Effect, st.Subtype = ReadOnly, SubtypeReadFile
	}
}

// compressor: a compressor replaces each file it names with what it
// makes of it: FILE.EXT (ext, or -S SUFFIX) or, decompressing (-d, or
// unpack: gunzip), FILE for FILE.EXT. The file it reads is written too,
// being removed, as mv's sources are, unless -k (--keep) keeps it (keeps:
// zstd does unless --rm). -o FILE (zstd) names the output. -c (--stdout),
// -t (--test) and -l (--list) write nothing; "-", or no file, is the
// standard input, made into the standard output.
func compressor(valued, ext string, unpack, keeps bool) func(w *walker, st *Step, args []string) {
	return func(w *walker, st *Step, args []string) {
		// A read until it writes (w.write): gzip -cd f.gz only reads.
		st.Effect, st.Subtype = ReadOnly, SubtypeReadFile
		if hasOpt(args, valued, "-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list") {
			return
		}
		suffix := ext
		if s, ok := optValue(args, valued, "-S", "--suffix"); ok && s != "" {
			suffix = s
		}
		out, named := optValue(args, valued, "-o")
		decompress := unpack && !hasOpt(args, valued, "-z", "--compress") || hasOpt(args, valued, "-d", "--decompress", "--uncompress")
		keep := keeps && !hasOpt(args, valued, "--rm") || hasOpt(args, valued, "-k", "--keep")
		for _, f := range splitOperands(args, valued) {
			switch {
			case f == "-":
				continue
			case named:
				w.write(st, out)
			case !decompress:
				w.write(st, f+suffix)
			case strings.HasSuffix(f, suffix):
				w.write(st, strings.TrimSuffix(f, suffix))
			}
			if !keep {
				w.write(st, f)
			}
		}
	}
}

// remoteHosts: scp and rsync operands host:path name a host, not a local
// file; valued is the program's options taking a value (scp -P PORT is
// rsync -P, a flag).
func remoteHosts(valued string) func(w *walker, st *Step, args []string) {
	return func(w *walker, st *Step, args []string) {
		remoteOperands(w, st, splitOperands(args, valued))
	}
}

func remoteOperands(w *walker, st *Step, ops []string) {
	// Operands were made absolute against the working directory; look at
	// the raw ones.
	remote := map[string]bool{}
	for _, o := range ops {
		if i := strings.IndexByte(o, ':'); i > 0 && !strings.Contains(o[:i], "/") {
			remote[w.abs(o)] = true
			st.Hosts = appendNew(st.Hosts, hostOf(o))
			st.Effect = Max(st.Effect, Network)
		}
	}
	keep := func(list []string) []string {
		out := list[:0]
		for _, f := range list {
			if !remote[f] {
				out = append(out, f)
			}
		}
		return out
	}
	st.Reads, st.Writes = keep(st.Reads), keep(st.Writes)
}

// editor: an editor reads the files it opens and may write them; in a
// read-only mode — the entry's effect is read_only (view), or a flag of
// readOnly is given (vim -R, nano -v) — it only reads them. valued lists
// the editor's options that take a value. An operand +N, +/PATTERN or
// +COMMAND says where to start or what to run: no file; "-" is the
// standard input.
func editor(valued string, readOnly ...string) func(w *walker, st *Step, args []string) {
	return func(w *walker, st *Step, args []string) {
		if hasOpt(args, valued, readOnly...) {
			st.Effect, st.Subtype = ReadOnly, SubtypeReadFile
		}
		for _, o := range splitOperands(args, valued) {
			if o == "-" || strings.HasPrefix(o, "+") {
				continue
			}
			st.Reads = appendNew(st.Reads, w.abs(o))
			if st.Effect != ReadOnly {
				w.write(st, o)
			}
		}
	}
}

// vimRuns: vim runs the Ex commands -c, --cmd and +CMD give (vimEx),
// sources the script -S names, takes the keys typed from the file -s
// names (but in Ex mode, -e, -es or ex, where -s is silent) and its
// vimrc from -u's (config; NONE, NORC and DEFAULTS name none); nvim
// runs the Lua script -l (-ll) names, the words after it its arguments
// (vim's -l is lisp mode, a flag). A script or typed keys can run any
// command and write any file: a program not known before run time, the
// file read.
func vimRuns(w *walker, st *Step, args []string) {
	valued := vimValued
	if st.Program == "nvim" {
		valued = nvimValued
	}
	if st.Program != "ex" && !hasOpt(args, valued, "-e", "-E") {
		valued += " -s"
	}
	r := argReader{args: args, valued: valued}
	for a, ok := r.next(); ok && !st.Dynamic; a, ok = r.next() {
		switch {
		case a.opt == "" && strings.HasPrefix(a.val, "+") && !r.ended:
			w.vimEx(st, a.val[1:], w.argKnown(a.at))
		case !a.hasVal:
		case a.is("-c"), a.is("--cmd"):
			w.vimEx(st, a.val, w.argKnown(a.valueAt()))
		case a.is("-S"), a.is("-s"):
			w.read(st, a.val)
			dynamic(st, st.Program+" running the commands of "+a.val+" ("+a.opt+")")
		case st.Program == "nvim" && (a.is("-l") || a.is("-ll")):
			w.read(st, a.val)
			dynamic(st, st.Program+" running the Lua script "+a.val+" ("+a.name()+")")
		case a.is("-u") && a.val != "NONE" && a.val != "NORC" && a.val != "DEFAULTS":
			w.config(st, a.val, a.val, w.argKnown(a.valueAt()))
		}
	}
}

// vimEx: an Ex command vim is given. !CMD runs CMD through a shell,
// analysed as such; a line number, a search, settings, a substitution
// without an expression (\=), writing and quitting (without a file
// named), joined by |, do no more than the editor does; any other (a
// function called, :w FILE, :source, :g//) can run any command or
// write any file: a program not known before run time, as one not
// known is.
func (w *walker) vimEx(st *Step, cmd string, known bool) {
	c := strings.TrimLeft(cmd, ": \t")
	switch {
	case !known:
		dynamic(st, st.Program+" runs an Ex command not known before run time")
	case strings.HasPrefix(c, "!"):
		w.script(c[1:], []string{st.Program + " !"})
	case !vimPlain(c):
		dynamic(st, st.Program+" runs the Ex command "+strconv.Quote(cmd)+", which can run commands and write files")
	}
}

// vimPlain reports whether the Ex commands c, joined by |, are each one
// that runs nothing and writes no file but the one edited (vimEx).
func vimPlain(c string) bool {
	for _, part := range strings.Split(c, "|") {
		part = strings.TrimLeft(strings.TrimSpace(part), ":")
		name := strings.TrimRight(part, "!")
		word, _, _ := strings.Cut(part, " ")
		switch {
		case part == "" || strings.Trim(part, "0123456789$") == "" || part[0] == '/' || part[0] == '?':
		case slices.Contains([]string{"w", "wq", "x", "q", "qa", "qall", "wa", "wall", "wqa", "wqall", "xa", "xall", "noh", "nohlsearch"}, name):
		case slices.Contains([]string{"set", "se", "setl", "setlocal", "syntax", "syn", "filetype", "colorscheme", "colo"}, word):
		case !strings.Contains(part, "\\="):
			// a substitution: [range]s/pattern/replacement/flags
			rng := strings.TrimLeft(part, "%0123456789,.$")
			if !strings.HasPrefix(rng, "s/") && !strings.HasPrefix(rng, "s#") && !strings.HasPrefix(rng, "substitute/") {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// tarMode: tar -c writes the archive and reads the files it archives,
// -x reads the archive and writes the files it extracts (into -C or the
// working directory), -t only reads the archive. The archive "-" is the
// standard input or output, no file.
func tarMode(w *walker, st *Step, args []string) {
	st.Reads, st.Writes = nil, nil
	t := tarArgs(args)
	tarRuns(w, st, args)
	archive := t.archive
	if archive == "-" {
		archive = ""
	}
	switch t.mode {
	case 'x':
		st.Reads = appendNew(st.Reads, w.abs(archive))
		w.write(st, cmpOr(t.dir, "."))
	case 'c':
		for _, m := range t.members {
			st.Reads = appendNew(st.Reads, w.absIn(m.dir, m.name))
		}
		if archive != "" {
			w.write(st, archive)
		} else {
			st.Effect = ReadOnly
		}
		st.Subtype = SubtypeModifyFile
	default:
		st.Effect, st.Subtype = ReadOnly, SubtypeReadFile
		st.Reads = appendNew(st.Reads, w.abs(archive))
	}
}

// tarCall is what tar's arguments ask for.
type tarCall struct {
	mode    byte   // 'c' create, append or update; 'x' extract; 't' list; 0 none given
	archive string // -f, "" when not given
	dir     string // the last -C, "" when not given
	members []tarMember
}

// tarMember is an operand of tar — a file to archive or a member to
// extract — with the -C given before it, against which it is named ("":
// the working directory).
type tarMember struct{ dir, name string }

// tarArgs reads tar's arguments as argReader does, the old style's first
// word (czf A B) included. The options that take a value are tarValued's.
func tarArgs(args []string) (t tarCall) {
	r := argReader{args: args, valued: tarValued, oldStyle: true}
	for a, ok := r.next(); ok; a, ok = r.next() {
		switch {
		case a.opt == "":
			t.members = append(t.members, tarMember{t.dir, a.val})
		case a.is("-c"), a.is("-r"), a.is("-u"), a.is("--create"), a.is("--append"), a.is("--update"):
			t.mode = 'c'
		case a.is("-x"), a.is("--extract"), a.is("--get"):
			t.mode = 'x'
		case a.is("-t"), a.is("--list"):
			t.mode = 't'
		case !a.hasVal:
		case a.is("-f"), a.is("--file"):
			t.archive = a.val
		case a.is("-C"), a.is("--directory"):
			t.dir = a.val
		}
	}
	return t
}

// optionCommands: the options named give a command the program runs,
// its arguments read by an argReader as reader is set (args aside);
// command says which for an option's value: the command ("" none), and
// whether it runs on the remote host (ssh's RemoteCommand), where it is
// read as ssh's remote operands are. Each is analysed as a shell command,
// or the step is dynamic when one is not known before run time.
func optionCommands(reader argReader, command func(opt, val string) (cmd string, remote bool)) func(w *walker, st *Step, args []string) {
	return func(w *walker, st *Step, args []string) {
		type run struct {
			cmd    string
			remote bool
		}
		var runs []run
		r := reader
		r.args, r.namesTake = args, true
		for a, ok := r.next(); ok; a, ok = r.next() {
			if !a.hasVal || a.opt == "" || !r.named(a) {
				continue
			}
			cmd, remote := command(a.name(), a.val)
			if cmd == "" {
				continue
			}
			if !w.argKnownIn(w.known, a.valueAt()) {
				dynamic(st, st.Program+" runs a command not known before run time")
				return
			}
			runs = append(runs, run{cmd, remote})
		}
		for _, c := range runs {
			if c.remote {
				w.remoteScript(c.cmd, []string{st.Program + " (remote)"})
			} else {
				w.script(c.cmd, []string{st.Program})
			}
		}
	}
}

// optionRuns: the options named give the command the program runs (rg
// --pre and --hostname-bin, rsync -e, scp -S, gpg --agent-program),
// analysed as optionCommands does.
func optionRuns(valued string, names ...string) func(w *walker, st *Step, args []string) {
	return optionCommands(argReader{valued: valued, names: names}, func(_, val string) (string, bool) { return val, false })
}

// gluedRuns: an option whose value, a command run, is only ever glued
// to it (-Hfirefox, --html=firefox: optional, so a next word is no
// value), the short form short and the long one long ("--html="),
// analysed as a command; known says which words of args are known, and
// what names the program and option in reasons ("man -H").
func (w *walker) gluedRuns(st *Step, args []string, known []bool, short, long, what string) {
	for j, a := range args {
		if a == "--" {
			break
		}
		cmd, ok := strings.CutPrefix(a, long)
		if !ok && strings.HasPrefix(a, short) && len(a) > len(short) {
			cmd, ok = a[len(short):], true
		}
		switch {
		case !ok:
		case !w.argKnownIn(known, j):
			dynamic(st, what+" runs a command not known before run time")
			return
		default:
			w.script(cmd, []string{what})
		}
	}
}

// manRuns: man -H (--html) runs the browser attached to it (-Hfirefox,
// --html=firefox; else $BROWSER), analysed as a command.
func manRuns(w *walker, st *Step, args []string) {
	w.gluedRuns(st, args, w.known, "-H", "--html=", "man -H")
}

// rsyncRuns: rsync -e (--rsh) names the ssh it runs here, analysed as
// optionRuns does, and --rsync-path the command it runs on the remote
// host to start rsync there, read as ssh's remote command is. -M
// (--remote-option) gives the rsync run there an option: a daemon
// parameter (--dparam, when it serves a module over ssh) that is a
// command it runs (pre-xfer exec, post-xfer exec, early exec) is read as
// --rsync-path is; a configuration (--config) can name any, a program
// not known, as one not known; its other options run nothing.
func rsyncRuns(w *walker, st *Step, args []string) {
	r := argReader{args: args, valued: rsyncValued, names: []string{"-M", "--remote-option"}, namesTake: true}
	for a, ok := r.next(); ok; a, ok = r.next() {
		switch {
		case !a.hasVal || a.opt == "" || !r.named(a):
		case !w.argKnownIn(w.known, a.valueAt()):
			dynamic(st, "rsync gives the remote rsync an option not known before run time")
			return
		case strings.HasPrefix(a.val, "--config"):
			dynamic(st, "rsync on the remote host reading a configuration, which can name commands it runs, "+a.val)
			return
		}
	}
	reader := argReader{valued: rsyncValued, names: []string{"-e", "--rsh", "--rsync-path", "-M", "--remote-option"}}
	optionCommands(reader, func(opt, val string) (string, bool) {
		if opt != "-M" && opt != "--remote-option" {
			return val, opt == "--rsync-path"
		}
		return rsyncDaemonExec(val), true
	})(w, st, args)
}

// rsyncDaemonExec returns the command a daemon parameter given to the
// remote rsync (--dparam=NAME=VALUE) runs, "" for one that runs none.
// NAME is read as rsyncd.conf reads it: case, spaces, '-' and '_' aside.
func rsyncDaemonExec(opt string) string {
	p, ok := strings.CutPrefix(opt, "--dparam=")
	if !ok {
		return ""
	}
	name, val, _ := strings.Cut(p, "=")
	switch strings.NewReplacer(" ", "", "-", "", "_", "").Replace(strings.ToLower(name)) {
	case "prexferexec", "postxferexec", "earlyexec":
		return val
	}
	return ""
}

// sftpBatch: sftp runs the commands of its batch file (-b FILE) or, with
// none or -b -, of its standard input, and a "!command" among them runs
// it in a local shell: a file's commands are not known before run time,
// the standard input's are as stdinProgram reads them, and when the
// command gives them (a heredoc, echo … |) each !command is analysed.
func sftpBatch(w *walker, st *Step, args []string) {
	if f, ok := optValue(args, sftpValued, "-b"); ok && f != "-" {
		w.read(st, f)
		dynamic(st, "sftp running the commands of a batch file, which can run local commands, "+f)
		return
	}
	w.stdinProgram(st)
	if w.in == nil || !w.in.known {
		return
	}
	for _, line := range strings.Split(w.in.text, "\n") {
		// A line may start with - (ignore its error) and @ (do not echo it).
		if cmd, ok := strings.CutPrefix(strings.TrimLeft(strings.TrimSpace(line), "-@"), "!"); ok && strings.TrimSpace(cmd) != "" {
			w.script(cmd, []string{"sftp !"})
		}
	}
}

// sshValued are ssh's options that take a value.
const sshValued = "-p -i -l -o -F -J -L -R -D -b -c -E -e -m -O -Q -S -W -w -B"

// sshCommandOptions are the ssh_config keywords whose value is a command
// ssh runs on this machine (ssh_config(5)); "none" runs nothing.
var sshCommandOptions = []string{"proxycommand", "localcommand", "knownhostscommand", "remotecommand"}

// sshOptionRuns: ssh -o and scp -o give ssh_config keywords, `-o
// Key=value` or `-o "Key value"`; those that name a command
// (sshCommandOptions) run it, analysed as optionCommands does: here, but
// RemoteCommand, which runs on the remote host.
func sshOptionRuns(valued string) func(w *walker, st *Step, args []string) {
	return optionCommands(argReader{valued: valued, names: []string{"-o"}}, func(_, val string) (string, bool) {
		key, cmd := sshKeyword(val)
		if !slices.Contains(sshCommandOptions, key) || strings.EqualFold(cmd, "none") {
			return "", false
		}
		return cmd, key == "remotecommand"
	})
}

// sshKeyword splits an ssh_config line as ssh reads one: the keyword,
// lowercased, and its value after whitespace or one "=".
func sshKeyword(line string) (key, val string) {
	line = strings.TrimSpace(line)
	i := strings.IndexAny(line, " \t=")
	if i < 0 {
		return strings.ToLower(line), ""
	}
	rest := strings.TrimPrefix(strings.TrimLeft(line[i:], " \t"), "=")
	return strings.ToLower(line[:i]), strings.TrimSpace(rest)
}

// tarRuns: tar runs commands given by options — --checkpoint-action=exec=,
// --to-command, --use-compress-program (-I), --info-script and
// --new-volume-script (-F), --rsh-command, --rmt-command — analysed as
// optionCommands does.
func tarRuns(w *walker, st *Step, args []string) {
	optionCommands(argReader{valued: tarValued, oldStyle: true, names: tarCommandOptions}, tarCommand)(w, st, args)
}

// tarCommandOptions are tar's options whose value is a command.
var tarCommandOptions = []string{"--checkpoint-action", "--to-command", "--use-compress-program", "-I", "--info-script",
	"--new-volume-script", "-F", "--rsh-command", "--rmt-command"}

// tarCommand is the command a tarCommandOptions option runs: its value,
// but --checkpoint-action's, whose actions but exec= (dot, echo, sleep
// …) run none.
func tarCommand(opt, val string) (string, bool) {
	if opt != "--checkpoint-action" {
		return val, false
	}
	if cmd, ok := strings.CutPrefix(val, "exec="); ok {
		return cmd, false
	}
	return "", false
}

// ddOperands: dd if= reads, of= overwrites.
func ddOperands(w *walker, st *Step, args []string) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "if="); ok {
			st.Reads = appendNew(st.Reads, w.abs(v))
		}
		if v, ok := strings.CutPrefix(a, "of="); ok && v != "/dev/null" {
			st.Writes = appendNew(st.Writes, w.abs(v))
			st.Effect, st.Subtype, st.Why = Destructive, SubtypeDeleteFile, "dd of= overwrites"
		}
	}
}

// interpreter: inline code (python -c, node -e) cannot be seen into and
// counts as able to write; a script operand is read and run, one not
// known before run time (a variable, <(…)) is the worst, as a shell's;
// with neither, or the script "-" or the standard input's path
// (stdinPath), the program is its standard input (stdinProgram).
func interpreter(inline ...string) func(w *walker, st *Step, args []string) {
	return func(w *walker, st *Step, args []string) {
		for i, a := range args {
			for _, f := range inline {
				// -c CODE, -cCODE, and a group ending in the flag (-Bc, -pe).
				short := len(f) == 2 && len(a) > 2 && a[0] == '-' && a[1] != '-'
				if a == f || (short && strings.HasPrefix(a, f) && f != "-p") ||
					(short && a[len(a)-1] == f[1] && isLetters(a[1:])) {
					st.Effect, st.Subtype, st.Why = Write, SubtypeRunCommand, "inline code "+f
					return
				}
			}
			if a == "-" || w.argKnown(i) && stdinPath(a) {
				break
			}
			if !strings.HasPrefix(a, "-") {
				if !w.argKnown(i) {
					dynamic(st, "a script not known before run time")
					return
				}
				st.Reads = appendNew(st.Reads, w.abs(args[i]))
				if strings.Contains(path.Base(a), "test") {
					st.Subtype = SubtypeRunTest
				}
				return
			}
		}
		w.stdinProgram(st)
	}
}

// stdinProgram: an interpreter given neither a script nor inline code
// runs the program on its standard input. Text the command gives (a
// heredoc, echo … |) is inline code: write. What another command writes
// (curl … | python3) or a file holds (python3 < f) is a program not
// known before run time, as a shell fed by it is. Nothing fed (the
// terminal) runs nothing the command says (python3 --version).
func (w *walker) stdinProgram(st *Step) {
	switch {
	case w.in == nil:
	case w.in.known:
		st.Effect, st.Subtype, st.Why = Max(st.Effect, Write), SubtypeRunCommand, "inline code on its standard input"
	default:
		dynamic(st, st.Program+" running "+w.in.what())
	}
}

// pythonModule: python -m pytest runs tests, -m pip install installs.
func pythonModule(w *walker, st *Step, args []string) {
	if m, ok := optValue(args, "", "-m"); ok {
		rest := args[indexOf(args, "-m")+2:]
		switch m {
		case "pytest", "unittest", "nose", "nose2", "tox":
			st.Subtype = SubtypeRunTest
		case "pip", "uv", "poetry":
			w.apply(st, programTable()["pip"], rest)
		case "mypy", "pylint", "flake8", "ruff", "pyright":
			st.Subtype = SubtypeRunLint
		case "black", "isort", "autopep8":
			st.Effect, st.Subtype = Write, SubtypeFormatCode
		case "http.server":
			st.Effect = Network
		case "build", "compileall", "py_compile":
			st.Subtype = SubtypeRunBuild
		}
		return
	}
	interpreter("-c")(w, st, args)
}

// npmRun names what `npm run x` / `yarn x` runs from the script's name.
func npmRun(w *walker, st *Step, args []string) {
	if st.Subtype != SubtypeRunCommand {
		return
	}
	ops := splitOperands(args, "--prefix -w --workspace --filter -C --cwd")
	if len(ops) > 1 && (ops[0] == "run" || ops[0] == "run-script") {
		ops = ops[1:]
	}
	if len(ops) == 0 {
		return
	}
	s := ops[0]
	switch {
	case strings.Contains(s, "test") || strings.Contains(s, "e2e") || strings.Contains(s, "spec"):
		st.Subtype = SubtypeRunTest
	case strings.Contains(s, "lint") || strings.Contains(s, "typecheck") || strings.Contains(s, "check"):
		st.Subtype = SubtypeRunLint
	case strings.Contains(s, "build") || strings.Contains(s, "compile"):
		st.Subtype = SubtypeRunBuild
	case strings.Contains(s, "format") || s == "fmt" || s == "prettier":
		st.Effect, st.Subtype = Write, SubtypeFormatCode
	}
}

// makeShell: make's operand SHELL=PROGRAM (SHELL:=, as a makefile
// sets it) names the program make runs every recipe with (envShell), and
// so does the makefile text --eval (-E) gives, read by makeEval.
func makeShell(w *walker, st *Step, args []string) {
	r := argReader{args: args, valued: makeValued}
	for a, ok := r.next(); ok; a, ok = r.next() {
		if a.hasVal && (a.is("-E") || a.is("--eval")) {
			if w.makeEval(st, a.val, w.argKnown(a.valueAt())); st.Dynamic {
				return
			}
		}
	}
	// The last one given is the one make uses.
	for i := len(args) - 1; i >= 0; i-- {
		if name, val, ok := strings.Cut(args[i], "="); ok && strings.TrimRight(name, ":") == "SHELL" {
			envShell(w, st, "SHELL", val, w.argKnown(i))
			return
		}
	}
}

// makeAssignment splits a makefile line that only sets a variable to a
// text with no reference or function in it, NAME = VALUE (:=, ::=,
// :::=, ?=, +=; not !=, which runs VALUE); ok is false for any other
// line (a rule, a directive, export NAME = …).
func makeAssignment(line string) (name, val string, ok bool) {
	lhs, val, found := strings.Cut(line, "=")
	if !found || strings.ContainsAny(line, "$\n") {
		return "", "", false
	}
	lhs = strings.TrimSpace(lhs)
	if l := strings.TrimRight(lhs, ":"); l != lhs && len(lhs)-len(l) <= 3 {
		lhs = l
	} else if strings.HasSuffix(lhs, "?") || strings.HasSuffix(lhs, "+") {
		lhs = lhs[:len(lhs)-1]
	}
	name = strings.TrimSpace(lhs)
	if name == "" || name[0] == '.' || name[0] == '-' || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != "" {
		return "", "", false
	}
	return name, strings.TrimSpace(val), true
}

// makeEval: make --eval TEXT reads TEXT as a line of the makefile, which
// can run any command ($(shell …), VAR != CMD, a rule's recipe) or read
// more makefiles (include, MAKEFILES, MAKEFLAGS += --eval=…): a program
// not known before run time, as an unknown SHELL= is. Only a plain
// assignment (makeAssignment) is read: SHELL's names the shell every recipe
// runs with (envShell), another's runs nothing of itself.
func (w *walker) makeEval(st *Step, text string, known bool) {
	name, val, ok := makeAssignment(text)
	switch {
	case !known:
		dynamic(st, st.Program+" --eval reads makefile text not known before run time")
	case !ok || strings.HasPrefix(name, "MAKE"):
		dynamic(st, st.Program+" --eval reads makefile text, which can run any command: "+strconv.Quote(text))
	case name == "SHELL":
		envShell(w, st, "SHELL", val, true)
	}
}

// npmScriptShell: --script-shell (npm's, pnpm's, yarn's) names the
// program that runs every script, and config set script-shell (npm set,
// its alias) stores it for the scripts run later, this command's or
// another's (envShell). The settings that name code the program runs
// later without showing it make the step a program not known, as git
// config's include.path does: userconfig and globalconfig (another
// .npmrc, whose script-shell runs the scripts), yarn's yarnPath (the
// script every yarn run is), and yarn set version (which downloads a
// release and points yarnPath at it).
func npmScriptShell(w *walker, st *Step, args []string) {
	type shell struct {
		val   string
		known bool
	}
	var shells []shell
	r := argReader{args: args, names: []string{"--script-shell"}, namesTake: true}
	for a, ok := r.next(); ok; a, ok = r.next() {
		if a.hasVal && a.opt != "" && r.named(a) {
			shells = append(shells, shell{a.val, w.argKnown(a.valueAt())})
		}
	}
	first := slices.IndexFunc(args, func(a string) bool { return !strings.HasPrefix(a, "-") })
	settings := -1
	switch {
	case first < 0:
	case args[first] == "set" && st.Program == "yarn":
		if first+1 < len(args) && args[first+1] == "version" {
			dynamic(st, "yarn set version installs a yarn release that every yarn run after it runs")
			return
		}
	case args[first] == "set":
		settings = first + 1 // npm set KEY VALUE: npm config set's alias
	}
	if j := indexOf(args, "config"); j >= 0 && j+1 < len(args) && args[j+1] == "set" {
		settings = j + 2
	}
	if settings >= 0 {
		for k := settings; k < len(args); k++ {
			if strings.HasPrefix(args[k], "-") {
				continue
			}
			// KEY=VALUE, or KEY VALUE; a word not known holds its
			// source text, whose key is known when it has no $ or `.
			key, val, pair := strings.Cut(args[k], "=")
			keyKnown := w.argKnown(k) || pair && !strings.ContainsAny(key, "$`")
			at := k
			if !pair && k+1 < len(args) {
				k++
				val, at = args[k], k
			}
			switch name := strings.ToLower(strings.ReplaceAll(key, "_", "-")); {
			case !keyKnown || name == "script-shell":
				shells = append(shells, shell{val, keyKnown && w.argKnown(at)})
			case name == "userconfig" || name == "globalconfig" || name == "yarnpath":
				if !w.argKnown(at) || (val != "/dev/null" && val != "") {
					dynamic(st, st.Program+" config set "+key+" names code "+st.Program+" runs later")
					return
				}
			}
		}
	}
	for _, sh := range shells {
		if envShell(w, st, "script-shell", sh.val, sh.known); st.Dynamic {
			return
		}
	}
}

// sshRemote: ssh host cmd runs cmd on the host: it is analysed like any
// command, so `ssh h rm -rf /` is destructive.
func sshRemote(w *walker, st *Step, args []string) {
	ops := splitOperands(args, sshValued)
	if len(ops) == 0 {
		return
	}
	st.Hosts = appendNew(st.Hosts, hostOf(ops[0]))
	if len(ops) > 1 {
		w.remoteScript(strings.Join(ops[1:], " "), []string{"ssh " + ops[0]})
	}
}

// remoteScript analyses a command run on a remote host: its relative paths
// are not against the working directory here.
func (w *walker) remoteScript(cmd string, via []string) {
	dir := w.dir
	w.dir = ""
	w.script(cmd, via)
	w.dir = dir
}

// find: -delete deletes what it finds, -exec runs a command on it,
// -fprint writes a file; otherwise it reads the trees it walks.
func (w *walker) find(st *Step, args []string, in *input) {
	st.Effect, st.Subtype = ReadOnly, SubtypeSearch
	i := 0
	var roots []string
	for ; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" || a == "\\(" {
			break
		}
		roots = append(roots, w.abs(a))
	}
	if len(roots) == 0 {
		roots = []string{w.abs(".")}
	}
	st.Reads = appendNew(st.Reads, roots...)
	for ; i < len(args); i++ {
		switch args[i] {
		case "-delete":
			st.Effect, st.Subtype, st.Why = Destructive, SubtypeDeleteFile, "-delete"
			st.Writes = appendNew(st.Writes, roots...)
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				w.write(st, args[i+1])
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" && args[j] != `\;` {
				j++
			}
			cmd := make([]string, 0, j-i-1)
			known := make([]bool, 0, j-i-1)
			for _, a := range args[i+1 : j] {
				// A word holding {} is a found file's name: known as a
				// path under the roots, not as a program or a script.
				cmd = append(cmd, strings.ReplaceAll(a, "{}", roots[0]))
				known = append(known, !strings.Contains(a, "{}") || len(known) > 0 && !isShell(path.Base(cmd[0])))
			}
			w.runWords(st, "find", args[i], cmd, known)
			i = j
		}
	}
}

// runWords analyses the command a program runs from its own words, not
// through a shell (find -exec, git bisect run): a step of its own, before
// the program's, whose effect, deletion and writes the program's step
// takes on; opt names the option or subcommand that gives it.
func (w *walker) runWords(st *Step, program, opt string, cmd []string, known []bool) {
	if len(cmd) == 0 {
		return
	}
	sub := Step{}
	n := len(w.a.Steps)
	w.resolve(&sub, cmd, known, nil)
	sub.Via = append([]string{program + " " + opt}, sub.Via...)
	if sub.Effect.Rank() > st.Effect.Rank() {
		st.Effect, st.Why = sub.Effect, opt+" "+sub.Program
	}
	if sub.Subtype == SubtypeDeleteFile {
		st.Subtype = SubtypeDeleteFile
	}
	st.Writes = appendNew(st.Writes, sub.Writes...)
	w.insert(n, sub)
}

// gitCommand analyses git: its global options, then the subcommand.
// Reading (status, log, diff …) is read_only; changing the repository
// (add, commit, merge …) is write; reaching a remote is network; what
// discards work (reset --hard, clean -f, checkout -- ., restore, branch -D,
// stash drop, push --force) is destructive.
func gitCommand(w *walker, st *Step, args []string) {
	known := w.known
	// -C applies to this git only.
	dir := w.dir
	defer func() { w.dir = dir }()
	// The environment's aliases, which -c's replace.
	aliases := w.gitEnvAliases()
	execPath := "" // --exec-path=DIR
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		a := args[i]
		switch {
		case a == "-C":
			if i+1 < len(args) {
				w.dir = w.abs(args[i+1])
			}
			i++
		case a == "-c" || strings.HasPrefix(a, "--config-env"):
			kv := ""
			if a == "-c" || a == "--config-env" {
				if i+1 < len(args) {
					i++
					kv = args[i]
				}
			} else {
				kv = strings.TrimPrefix(a, "--config-env=")
			}
			key, val, _ := strings.Cut(kv, "=")
			key = strings.ToLower(key)
			// --config-env's value names a variable, not known.
			if w.gitSetting(st, "git -c", key, val, a == "-c" && w.argKnownIn(known, i)); st.Dynamic {
				return
			}
			if name, ok := strings.CutPrefix(key, "alias."); ok {
				aliases[name] = val
			}
		case a == "--git-dir" || a == "--work-tree" || a == "--namespace":
			i++
		case strings.HasPrefix(a, "--exec-path="):
			execPath = a
		}
		i++
	}
	st.Effect, st.Subtype = ReadOnly, SubtypeGitOperation
	if i >= len(args) {
		return
	}
	sub, rest := args[i], args[i+1:]
	defer func() {
		if !st.Dynamic {
			w.gitRuns(st, sub, rest, known[min(i+1, len(known)):], execPath)
		}
	}()
	// An alias given with -c, or by the environment, runs what it
	// stands for: a shell command (!…) with the words after it, or
	// another git command, analysed.
	for n := 0; n < 8; n++ {
		val, ok := aliases[strings.ToLower(sub)]
		if !ok {
			break
		}
		if cmd, ok := strings.CutPrefix(val, "!"); ok {
			w.gitAliasShell(st, sub, cmd, rest, known[min(i+1, len(known)):])
			return
		}
		f := strings.Fields(val)
		if len(f) == 0 {
			break
		}
		delete(aliases, strings.ToLower(sub))
		sub, rest = f[0], append(f[1:], rest...)
	}
	ops := splitOperands(rest, "-m -F -C -c -b -B -u --message --file --author --date -s --strategy -X --onto --upstream -o --orphan -t --track --depth --branch --reference")
	destroy := func(why string, paths ...string) {
		st.Effect, st.Why = Destructive, why
		for _, p := range paths {
			st.Writes = appendNew(st.Writes, w.abs(p))
		}
	}
	// repo is what an operation on the repository as a whole destroys:
	// git finds the repository in the directory it runs in or above, so
	// the directory is named only when it is the one the command starts
	// in (the payload's cwd); elsewhere it is Anywhere.
	repo := func() string {
		if w.dir != "" && w.dir == w.start {
			return w.dir
		}
		return Anywhere
	}
	// remote reads the repository a push, fetch or pull reaches: a URL
	// names its host; a remote the command set up (git remote add) the
	// host of its URL; another named remote, whose URL is in the
	// repository's configuration, "<remote NAME>"; none, "<remote>".
	remote := func(valued string) {
		if hasOpt(rest, "", "--receive-pack", "--upload-pack", "--exec") || (sub == "clone" && hasOpt(rest, "", "-u")) {
			dynamic(st, "git runs a program named by --receive-pack/--upload-pack")
			return
		}
		ops := splitOperands(rest, valued)
		r, ok := optValue(rest, valued, "--repo")
		if !ok && len(ops) > 0 {
			r, ok = ops[0], true
		}
		switch {
		case !ok:
			st.Hosts = appendNew(st.Hosts, "<remote>")
		case gitHost(r) != "":
			st.Hosts = appendNew(st.Hosts, gitHost(r))
		case strings.ContainsAny(r, "/.") || sub == "clone":
			// a repository on this machine
		default:
			if h, ok := w.remotes[r]; ok {
				st.Hosts = appendNew(st.Hosts, h)
			} else {
				st.Hosts = appendNew(st.Hosts, "<remote "+r+">")
			}
		}
	}
	const fetchValued = "--depth --deepen --shallow-since --shallow-exclude --refmap -j --jobs --negotiation-tip --server-option -o --push-option --recurse-submodules-default --filter -s --strategy -X --strategy-option --upload-pack --receive-pack --exec --repo"
	switch sub {
	case "reflog":
		st.Effect = ReadOnly
		if len(ops) > 0 && (ops[0] == "expire" || ops[0] == "delete") {
			destroy("reflog "+ops[0], repo())
		}
	case "status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "blame", "grep", "describe",
		"shortlog", "cat-file", "for-each-ref", "whatchanged", "help", "version", "check-ignore",
		"name-rev", "show-ref", "rev-list", "merge-base", "count-objects", "var", "annotate", "difftool", "range-diff":
		st.Effect = ReadOnly
	case "commit":
		st.Effect, st.Subtype = Write, SubtypeGitCommit
	case "push":
		// What a forced push destroys is on the remote: no local path.
		st.Effect, st.Subtype = Network, SubtypeGitPush
		remote(fetchValued)
		if hasOpt(rest, "", "--force", "-f", "--force-with-lease", "--mirror", "--delete", "-d", "--prune") {
			destroy("push --force", Anywhere)
		}
		for _, o := range splitOperands(rest, fetchValued) {
			if strings.HasPrefix(o, "+") || strings.HasPrefix(o, ":") {
				destroy("push "+o, Anywhere)
			}
		}
	case "fetch", "ls-remote":
		st.Effect = Network
		if sub == "fetch" && hasOpt(rest, "", "--all", "--multiple") {
			st.Hosts = appendNew(st.Hosts, "<remote>")
			break
		}
		remote(fetchValued)
	case "pull", "clone":
		st.Effect = Write
		remote(fetchValued + " -b --branch --reference -c --config --origin --template --separate-git-dir")
		if sub == "clone" && len(ops) > 1 {
			st.Writes = appendNew(st.Writes, w.abs(ops[len(ops)-1]))
		}
	case "clean":
		st.Effect = Write
		if hasOpt(rest, "", "-f", "--force") && !hasOpt(rest, "", "-n", "--dry-run") {
			paths := ops
			if len(paths) == 0 {
				paths = []string{"."}
			}
			destroy("clean -f", paths...)
		} else {
			st.Effect = ReadOnly
		}
	case "reset":
		st.Effect = Write
		if hasOpt(rest, "", "--hard", "--merge", "--keep") {
			destroy("reset --hard", repo())
		}
	case "checkout":
		st.Effect = Write
		dd := indexOf(rest, "--")
		switch {
		case dd >= 0:
			paths := rest[dd+1:]
			if len(paths) == 0 {
				paths = []string{"."}
			}
			destroy("checkout -- discards changes", paths...)
		case hasOpt(rest, "", "-f", "--force"):
			destroy("checkout --force", repo())
		case len(ops) == 1 && (ops[0] == "." || strings.ContainsAny(ops[0], "/*")) && !hasOpt(rest, "", "-b", "-B"):
			destroy("checkout of paths discards changes", ops...)
		}
	case "restore":
		st.Effect = Write
		if !hasOpt(rest, "", "--staged", "-S") || hasOpt(rest, "", "--worktree", "-W") {
			paths := ops
			if len(paths) == 0 {
				paths = []string{"."}
			}
			destroy("restore discards changes", paths...)
		}
	case "switch":
		st.Effect = Write
		if hasOpt(rest, "", "--discard-changes", "-f", "--force") {
			destroy("switch --discard-changes", repo())
		}
	case "rm":
		destroy("git rm", ops...)
	case "branch":
		st.Effect = ReadOnly
		switch {
		case hasOpt(rest, "", "-D", "--delete", "-d") && len(ops) > 0:
			destroy("branch delete", repo())
		case len(ops) > 0 || hasOpt(rest, "", "-m", "-M", "-c", "-C"):
			st.Effect = Write
		}
	case "tag":
		st.Effect = ReadOnly
		switch {
		case hasOpt(rest, "", "-d", "--delete"):
			destroy("tag -d", repo())
		case len(ops) > 0 && !hasOpt(rest, "", "-l", "--list"):
			st.Effect = Write
		}
	case "stash":
		st.Effect = Write
		if len(ops) > 0 {
			switch ops[0] {
			case "list", "show":
				st.Effect = ReadOnly
			case "drop", "clear":
				destroy("stash "+ops[0], repo())
			}
		}
	case "config", "remote", "worktree", "submodule", "notes", "lfs":
		st.Effect = ReadOnly
		gitRemoteURL(w, st, sub, ops)
		if len(ops) > 1 || (len(ops) == 1 && !strings.HasPrefix(ops[0], "-") && sub != "config" && ops[0] != "list" && ops[0] != "-v" && ops[0] != "show") {
			st.Effect = Write
		}
		if sub == "worktree" && len(ops) > 0 && ops[0] == "remove" {
			destroy("worktree remove", ops[1:]...)
		}
		if sub == "submodule" || (sub == "remote" && len(ops) > 0 && ops[0] == "update") {
			st.Effect = Max(st.Effect, Network)
		}
	case "update-ref":
		st.Effect = Write
		if hasOpt(rest, "", "-d") {
			destroy("update-ref -d", repo())
		}
	case "filter-branch", "filter-repo":
		destroy(sub+" rewrites history", repo())
	case "gc", "prune":
		st.Effect = Write
	default:
		st.Effect = Write
	}
}

// gitRuns: what a git subcommand runs that its options or operands give
// (rest, known aligned): config the commands the settings it stores run
// later (gitConfigSet), difftool -x (--extcmd) and rebase -x (--exec)
// a shell command, grep -O (--open-files-in-pager) its pager when one
// is attached, bisect run a command of its words, submodule foreach a
// shell command, or the command of its words when given several. git
// --exec-path=DIR runs its helpers and commands not built in from DIR,
// as GIT_EXEC_PATH says (envSearch).
func (w *walker) gitRuns(st *Step, sub string, rest []string, known []bool, execPath string) {
	if dir, ok := strings.CutPrefix(execPath, "--exec-path="); ok {
		envSearch(w, st, "GIT_EXEC_PATH", dir, true)
	}
	saved := w.known
	defer func() { w.known = saved }()
	w.known = known
	switch sub {
	case "config":
		w.gitConfigSet(st, rest, known)
	case "difftool":
		optionCommands(argReader{valued: "-x --extcmd -t --tool", names: []string{"-x", "--extcmd"}},
			func(_, val string) (string, bool) { return val, false })(w, st, rest)
	case "rebase":
		optionCommands(argReader{valued: "-x --exec --onto -s --strategy -X --strategy-option -C", names: []string{"-x", "--exec"}},
			func(_, val string) (string, bool) { return val, false })(w, st, rest)
	case "grep":
		// -O (--open-files-in-pager) runs the pager attached to it.
		w.gluedRuns(st, rest, known, "-O", "--open-files-in-pager=", "git grep -O")
	case "bisect":
		if len(rest) > 1 && rest[0] == "run" {
			w.runWords(st, "git bisect", "run", rest[1:], known[min(1, len(known)):])
		}
	case "submodule":
		j := indexOf(rest, "foreach")
		if j < 0 {
			break
		}
		cmd, ck := rest[j+1:], known[min(j+1, len(known)):]
		for len(cmd) > 0 && (cmd[0] == "--recursive" || cmd[0] == "-q" || cmd[0] == "--quiet") {
			cmd, ck = cmd[1:], ck[min(1, len(ck)):]
		}
		switch {
		case len(cmd) == 1 && !w.argKnownIn(ck, 0):
			dynamic(st, "git submodule foreach runs a command not known before run time")
		case len(cmd) == 1:
			w.script(cmd[0], []string{"git submodule foreach"})
		default:
			w.runWords(st, "git submodule", "foreach", cmd, ck)
		}
	}
}

// gitHost returns the host of a git URL (scheme://host/…, [user@]host:path),
// "" for a path on this machine.
func gitHost(u string) string {
	if strings.Contains(u, "://") {
		if strings.HasPrefix(u, "file://") {
			return ""
		}
		return hostOf(u)
	}
	c := strings.IndexByte(u, ':')
	if c <= 0 || strings.Contains(u[:c], "/") {
		return ""
	}
	return hostOf(u)
}

// gitRemoteURL records the URL a command gives a remote (git remote add
// NAME URL, remote set-url NAME URL, config remote.NAME.url URL): its
// host is one the command reaches — and what a later push to NAME in the
// same command reaches.
func gitRemoteURL(w *walker, st *Step, sub string, ops []string) {
	name, url := "", ""
	switch {
	case sub == "remote" && len(ops) >= 3 && (ops[0] == "add" || ops[0] == "set-url"):
		name, url = ops[1], ops[2]
	case sub == "config" && len(ops) >= 2:
		k := strings.ToLower(ops[0])
		if strings.HasPrefix(k, "remote.") && (strings.HasSuffix(k, ".url") || strings.HasSuffix(k, ".pushurl")) {
			name, url = ops[0][len("remote."):strings.LastIndexByte(ops[0], '.')], ops[1]
		}
	default:
		return
	}
	h := gitHost(url)
	st.Hosts = appendNew(st.Hosts, h)
	if w.remotes == nil {
		w.remotes = map[string]string{}
	}
	w.remotes[name] = h
}

// gitSetting analyses a setting given to one git (key in lower case):
// git -c key=value, and those the environment gives (gitEnvSetting).
// What the setting makes git run (gitRunKey) is analysed whatever the
// subcommand, as git config's setting is (gitSettingRuns); the others are
// read by gitConfig. from says how the command gives it ("git -c",
// "GIT_CONFIG_PARAMETERS"), for Via and reasons.
func (w *walker) gitSetting(st *Step, from, key, val string, known bool) {
	switch gitRunKey(key) {
	case gitRunsNothing, gitRunsAlias:
		if why := gitConfig(w, st, key, val, known); why != "" {
			dynamic(st, why)
		}
	default:
		w.gitSettingRuns(st, from, key, val, known)
	}
}

// gitConfig reads a setting given to one git that runs nothing by
// itself (gitSetting): it returns why the command is dynamic when an
// alias is not known, and records the hosts a URL key names.
func gitConfig(w *walker, st *Step, key, val string, known bool) string {
	parts := strings.Split(key, ".")
	last := parts[len(parts)-1]
	switch {
	case parts[0] == "alias":
		if !known {
			return "a git alias not known before run time"
		}
		return ""
	case parts[0] == "remote" && len(parts) >= 3 && (last == "url" || last == "pushurl"):
		if !known {
			st.Hosts = appendNew(st.Hosts, "<remote "+strings.Join(parts[1:len(parts)-1], ".")+">")
			return ""
		}
		gitRemoteURL(w, st, "config", []string{key, val})
		return ""
	case parts[0] == "url" && len(parts) >= 3:
		// url.BASE.insteadOf=X: URLs starting with X reach BASE.
		st.Hosts = appendNew(st.Hosts, gitHost(strings.Join(parts[1:len(parts)-1], ".")))
		return ""
	}
	return ""
}

// gitRun says what git does with the value of a setting (gitRunKey).
type gitRun int

const (
	gitRunsNothing gitRun = iota
	// gitRunsCommand: the value is a command git runs through a shell
	// (core.pager, diff.external, filter.NAME.clean, merge.NAME.driver …),
	// or a program it runs (gpg.program, difftool.NAME.path), or a word
	// among git's own (pager.CMD=false) that runs none.
	gitRunsCommand
	// gitRunsBang: the value runs a shell command when it starts with !
	// (submodule.NAME.update), else none.
	gitRunsBang
	// gitRunsAlias: an alias runs a shell command when it starts with !,
	// else the git command it stands for.
	gitRunsAlias
	// gitRunsHelper: a credential helper runs a shell command when it
	// starts with !, the program an absolute path names, else git's
	// credential-NAME.
	gitRunsHelper
	// gitRunsNamed: the value names code git runs that the setting does
	// not show: a configuration included, a directory of hooks or of
	// templates (core.hooksPath, init.templateDir), the transports
	// allowed (protocol.allow=always lets ext:: run commands), a remote
	// helper (remote.NAME.vcs).
	gitRunsNamed
)

// gitRunKey says what git does with the value of the setting key (lower
// case): the one list of the settings that make git run a program, read
// for git -c (gitSetting), the settings the environment gives
// (gitEnvSetting) and those git config stores (gitConfigSet).
func gitRunKey(key string) gitRun {
	parts := strings.Split(key, ".")
	last := parts[len(parts)-1]
	switch {
	case parts[0] == "alias":
		return gitRunsAlias
	case parts[0] == "credential" && last == "helper":
		return gitRunsHelper
	case parts[0] == "submodule" && last == "update":
		return gitRunsBang
	case parts[0] == "include" || parts[0] == "includeif", parts[0] == "protocol",
		key == "core.hookspath", key == "init.templatedir",
		parts[0] == "remote" && last == "vcs":
		return gitRunsNamed
	case key == "core.pager", key == "core.editor", key == "core.sshcommand", key == "core.fsmonitor",
		key == "core.askpass", key == "core.gitproxy", key == "core.alternaterefscommand",
		key == "diff.external", key == "sequence.editor", key == "uploadpack.packobjectshook",
		key == "gpg.program", key == "sendmail.smtpserver", key == "web.browser",
		parts[0] == "pager", parts[0] == "filter",
		parts[0] == "difftool" || parts[0] == "mergetool" || parts[0] == "man" || parts[0] == "browser",
		parts[0] == "gpg" && last == "program",
		parts[0] == "diff" && (last == "textconv" || last == "command"),
		parts[0] == "merge" && last == "driver",
		parts[0] == "remote" && (last == "uploadpack" || last == "receivepack" || last == "proxy"):
		return gitRunsCommand
	}
	return gitRunsNothing
}

// gitConfigSet: git config KEY VALUE (--add, --replace-all, --global,
// --file F …; git config set KEY VALUE) stores a setting that the git
// commands run after it read, this command's next ones or another's.
// What the setting makes git run (gitRunKey) is analysed as a command
// this one runs: the command the value is, an alias's git command or
// !shell command, a credential helper; a setting that names code the
// value does not show (include.path, core.hooksPath), a key or a value
// not known, is a program not known. rest and known are aligned.
func (w *walker) gitConfigSet(st *Step, rest []string, known []bool) {
	const valued = " -f --file --blob --type --default --comment --value "
	var ops []int
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		switch {
		case a == "--":
			for j++; j < len(rest); j++ {
				ops = append(ops, j)
			}
		case strings.Contains(valued, " "+a+" "):
			j++
		case a == "-l" || a == "-e" || strings.HasPrefix(a, "--get") || strings.HasPrefix(a, "--unset") ||
			a == "--list" || a == "--edit" || a == "--rename-section" || a == "--remove-section":
			return // reads or removes settings, stores none
		case strings.HasPrefix(a, "-"):
		default:
			ops = append(ops, j)
		}
	}
	if len(ops) > 0 && rest[ops[0]] == "set" {
		ops = ops[1:]
	}
	if len(ops) < 2 {
		return // git config get KEY, unset KEY, list …
	}
	k, v := ops[0], ops[1]
	key, val := strings.ToLower(rest[k]), rest[v]
	if !w.argKnownIn(known, k) {
		dynamic(st, "git config stores a setting not known before run time")
		return
	}
	w.gitSettingRuns(st, "git config", key, val, w.argKnownIn(known, v))
}

// gitSettingRuns analyses what a git setting makes git run (gitRunKey;
// key in lower case) as a command this one runs: the command the value
// is, an alias's git command or !shell command, a credential helper. A
// setting that names code the value does not show (include.path,
// core.hooksPath), or a value not known (known false), is a program not
// known. from says how the command gives it ("git config", "git -c"),
// for Via and reasons.
func (w *walker) gitSettingRuns(st *Step, from, key, val string, known bool) {
	run := gitRunKey(key)
	switch {
	case run == gitRunsNothing:
		return
	case run == gitRunsNamed:
		dynamic(st, from+" "+key+" names code git runs later")
		return
	case !known:
		dynamic(st, from+" "+key+" sets a command not known before run time")
		return
	}
	cmd, bang := strings.CutPrefix(val, "!")
	switch {
	case run == gitRunsCommand:
		cmd = val
	case bang:
	case run == gitRunsAlias:
		cmd = "git " + val
	case run == gitRunsHelper && strings.HasPrefix(val, "/"):
		cmd = val
	case run == gitRunsHelper:
		cmd = "git credential-" + val
	default:
		return
	}
	if strings.TrimSpace(cmd) != "" {
		w.script(cmd, []string{from + " " + key})
	}
}

// gitAliasShell: git ALIAS WORDS… with an alias !CMD runs CMD through a
// shell with the words after it, analysed as that command: a known word
// quoted, one not known as its source text, still not known.
func (w *walker) gitAliasShell(st *Step, alias, cmd string, rest []string, known []bool) {
	text := cmd
	for j, a := range rest {
		if !w.argKnownIn(known, j) {
			text += " " + a
			continue
		}
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			dynamic(st, "git "+alias+" is given a word no shell quoting can hold")
			return
		}
		text += " " + q
	}
	w.script(text, []string{"git alias " + alias})
}

// gitEnvPair is a setting the environment gives git: the variable that
// gives it (from), its key as written, its value and whether that is
// known.
type gitEnvPair struct {
	from, key, val string
	known          bool
}

// gitEnvCount: GIT_CONFIG_COUNT=N gives git N settings, read as git -c's
// (gitEnvSetting); a count or a key not known, or one missing, is a
// setting not known (gitCountPairs).
func gitEnvCount(w *walker, st *Step, name, val string, known bool) {
	pairs, why := w.gitCountPairs(name, val, known)
	if why != "" {
		dynamic(st, why)
		return
	}
	for _, p := range pairs {
		if gitEnvSetting(w, st, p.from, p.key, p.val, p.known); st.Dynamic {
			return
		}
	}
}

// gitCountPairs reads the settings GIT_CONFIG_COUNT (name, val, known)
// gives git: the keys and values of GIT_CONFIG_KEY_0, GIT_CONFIG_VALUE_0
// …; "" gives none, as git reads it. why is not "" when they are not
// known: a count not known or not a number, a key not known or missing.
func (w *walker) gitCountPairs(name, val string, known bool) (pairs []gitEnvPair, why string) {
	if known && strings.TrimSpace(val) == "" {
		return nil, ""
	}
	n, err := strconv.Atoi(strings.TrimSpace(val))
	if !known || err != nil || n < 0 || n > 100 {
		return nil, "git settings not known before run time (" + name + ")"
	}
	for i := 0; i < n; i++ {
		kn, vn := "GIT_CONFIG_KEY_"+strconv.Itoa(i), "GIT_CONFIG_VALUE_"+strconv.Itoa(i)
		key, kk, _ := w.envValue(kn)
		v, vk, ok := w.envValue(vn)
		if !kk || key == "" {
			return nil, "a git setting not known before run time (" + kn + ")"
		}
		pairs = append(pairs, gitEnvPair{kn, key, v, vk && ok})
	}
	return pairs, ""
}

// gitEnvParameters: GIT_CONFIG_PARAMETERS holds settings as git writes
// them for the git it runs, each single-quoted ('key'='value', or
// 'key=value'), read as git -c's (gitEnvSetting); settings not so
// written are not known.
func gitEnvParameters(w *walker, st *Step, name, val string, known bool) {
	kvs, ok := gitParameters(val)
	if !known || !ok {
		dynamic(st, "git settings not known before run time ("+name+")")
		return
	}
	for _, kv := range kvs {
		key, v, _ := strings.Cut(kv, "=")
		if gitEnvSetting(w, st, name, key, v, true); st.Dynamic {
			return
		}
	}
}

// gitEnvAliases returns the aliases the environment gives git (keys in
// lower case, without "alias."), GIT_CONFIG_COUNT's then
// GIT_CONFIG_PARAMETERS's, the later winning as in git. Only those whose
// value is known: the others, and settings not known, make the step a
// program not known when the environment is read (gitEnvCount,
// gitEnvParameters).
func (w *walker) gitEnvAliases() map[string]string {
	aliases := map[string]string{}
	add := func(key, val string) {
		if name, ok := strings.CutPrefix(strings.ToLower(key), "alias."); ok {
			aliases[name] = val
		}
	}
	if val, known, ok := w.envValue("GIT_CONFIG_COUNT"); ok {
		if pairs, why := w.gitCountPairs("GIT_CONFIG_COUNT", val, known); why == "" {
			for _, p := range pairs {
				if p.known {
					add(p.key, p.val)
				}
			}
		}
	}
	if val, known, ok := w.envValue("GIT_CONFIG_PARAMETERS"); ok && known {
		if kvs, ok := gitParameters(val); ok {
			for _, kv := range kvs {
				key, val, _ := strings.Cut(kv, "=")
				add(key, val)
			}
		}
	}
	return aliases
}

// gitEnvSetting analyses a setting the environment gives git as git -c's
// (gitSetting), from naming the variable; an alias is followed where
// git's command is (gitCommand, gitEnvAliases). What the setting runs is
// analysed without the variables that give git its settings, which git
// hands on to it: a git it runs does not apply them again
// (GIT_CONFIG_PARAMETERS="'core.pager'='git log'" git log pages once).
func gitEnvSetting(w *walker, st *Step, from, key, val string, known bool) {
	key = strings.ToLower(key)
	n := len(w.env)
	defer func() { w.env = w.env[:n] }()
	w.env = append(w.env, envAssign{name: "GIT_CONFIG_PARAMETERS", known: true}, envAssign{name: "GIT_CONFIG_COUNT", known: true})
	w.gitSetting(st, from, key, val, known)
}

// gitParameters splits GIT_CONFIG_PARAMETERS into its key=value
// settings: single-quoted words (a quote within one closes it, is
// escaped with a backslash, and opens the rest, as sh quotes it) joined
// by '=' and separated by spaces; false when it is not so written.
func gitParameters(s string) ([]string, bool) {
	var out []string
	for s = strings.TrimLeft(s, " "); s != ""; s = strings.TrimLeft(s, " ") {
		var b strings.Builder
		for s != "" && s[0] != ' ' {
			switch {
			case s[0] == '\\' && len(s) > 1:
				b.WriteByte(s[1])
				s = s[2:]
			case s[0] == '=':
				b.WriteByte('=')
				s = s[1:]
			case s[0] == '\'':
				end := strings.IndexByte(s[1:], '\'')
				if end < 0 {
					return nil, false
				}
				b.WriteString(s[1 : 1+end])
				s = s[end+2:]
			default:
				return nil, false
			}
		}
		out = append(out, b.String())
	}
	return out, true
}
