package shell

import (
	"strings"
)

// The analyses of programs given code: awk and sed programs are read
// (they are small languages whose ways to write files and run commands are
// few and visible), perl's and the other interpreters' inline code is not
// (it counts as write), a database client's SQL is looked at for what
// destroys.

// awkCommand: an awk program reads its input files; it writes when it
// prints into a file (print > "f") and runs commands with system(), a
// pipe (print | "cmd", "cmd" | getline) or gawk's @ (@load, indirect
// calls): those make the step dynamic, so the worst. gawk -i inplace
// writes the files it edits; -f runs a program file, which is not read
// (as a script of the project, execute_check).
func awkCommand(w *walker, st *Step, args []string) {
	known := w.known
	var progs []string
	progKnown, progFile, inplace := true, false, false
	var ops []int // indexes of the operands
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, bool) {
			if i+1 < len(args) {
				i++
				return args[i], w.argKnownIn(known, i)
			}
			return "", true
		}
		switch {
		case a == "--":
			for j := i + 1; j < len(args); j++ {
				ops = append(ops, j)
			}
			i = len(args)
		case a == "-f" || a == "--file" || a == "-E" || a == "--exec":
			v, _ := value()
			progFile = true
			st.Reads = appendNew(st.Reads, w.abs(v))
		case strings.HasPrefix(a, "--file=") || strings.HasPrefix(a, "--exec="):
			progFile = true
			st.Reads = appendNew(st.Reads, w.abs(a[strings.IndexByte(a, '=')+1:]))
		case a == "-e" || a == "--source":
			v, k := value()
			progs, progKnown = append(progs, v), progKnown && k
		case strings.HasPrefix(a, "--source="):
			progs, progKnown = append(progs, a[len("--source="):]), progKnown && w.argKnownIn(known, i)
		case a == "-i" || a == "--include":
			if v, _ := value(); v == "inplace" || v == "inplace.awk" {
				inplace = true
			}
		case strings.HasPrefix(a, "--include="):
			inplace = inplace || strings.HasPrefix(a, "--include=inplace")
		case a == "-l" || a == "--load" || strings.HasPrefix(a, "--load="):
			dynamic(st, "awk loads an extension")
			return
		case a == "-v" || a == "--assign" || a == "-F" || a == "--field-separator":
			value()
		case a == "-d" || a == "--dump-variables":
			w.write(st, "awkvars.out")
		case a == "-o" || a == "--pretty-print" || a == "-p" || a == "--profile":
			w.write(st, "awkprof.out")
		case strings.HasPrefix(a, "--dump-variables=") || strings.HasPrefix(a, "--pretty-print=") || strings.HasPrefix(a, "--profile="):
			w.write(st, a[strings.IndexByte(a, '=')+1:])
		case len(a) > 2 && a[0] == '-' && strings.IndexByte("dop", a[1]) >= 0:
			w.write(st, a[2:]) // -d/-o/-p with the file attached
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// -F: -v… attached, --posix, --sandbox, -b …
		default:
			ops = append(ops, i)
		}
	}
	if !progFile && len(progs) == 0 && len(ops) > 0 {
		progs, progKnown, ops = append(progs, args[ops[0]]), w.argKnownIn(known, ops[0]), ops[1:]
	}
	assignment := func(o string) bool { // an assignment operand, not a file
		eq := strings.IndexByte(o, '=')
		return eq > 0 && isName(o[:eq])
	}
	w.scriptOperands(st, args, ops, inplace, "-i inplace", assignment)
	if !scriptKnown(st, progFile, progKnown, "an awk program") {
		return
	}
	for _, prog := range progs {
		runs, files, anyFile := awkProgram(prog)
		if runs {
			dynamic(st, "awk runs a command (system(), a pipe)")
			return
		}
		for _, f := range files {
			w.write(st, f)
		}
		if anyFile {
			w.write(st, Anywhere)
		}
	}
}

// argKnownIn reports whether argument i is known, from a copy of w.known
// taken before a nested analysis replaced it.
func (w *walker) argKnownIn(known []bool, i int) bool { return i >= 0 && i < len(known) && known[i] }

func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// awkProgram reads an awk program: whether it can run a command, the
// files its prints write, and whether a print writes a file whose name is
// computed. It errs on the side of running: a `|` that is not `||`, an
// `@`, a call of system — outside strings and regular expressions — run.
func awkProgram(prog string) (runs bool, files []string, anyFile bool) {
	var prev byte = '\n' // the last significant character
	prevWord := ""       // the last identifier, when it is the last token
	inPrint, depth := false, 0
	for i := 0; i < len(prog); i++ {
		c := prog[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			continue
		case c == '\\' && i+1 < len(prog) && prog[i+1] == '\n':
			i++
			continue
		case c == '#':
			for i < len(prog) && prog[i] != '\n' {
				i++
			}
			i--
			continue
		case c == '"':
			j := i + 1
			for j < len(prog) && prog[j] != '"' {
				if prog[j] == '\\' {
					j++
				}
				j++
			}
			i = min(j, len(prog))
			prev, prevWord = '"', ""
			continue
		case c == '/' && regexCanStart(prev, prevWord):
			j, inBracket := i+1, false
			for j < len(prog) && (inBracket || prog[j] != '/') && prog[j] != '\n' {
				switch prog[j] {
				case '\\':
					j++
				case '[':
					inBracket = true
				case ']':
					inBracket = false
				}
				j++
			}
			i = min(j, len(prog))
			prev, prevWord = '/', ""
			continue
		case c == '|':
			if i+1 < len(prog) && prog[i+1] == '|' {
				i++
				prev, prevWord = '|', ""
				continue
			}
			return true, nil, false
		case c == '@':
			return true, nil, false
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(prog) && (prog[j] == '_' || prog[j] >= 'a' && prog[j] <= 'z' || prog[j] >= 'A' && prog[j] <= 'Z' || prog[j] >= '0' && prog[j] <= '9') {
				j++
			}
			word := prog[i:j]
			if word == "system" {
				return true, nil, false
			}
			if word == "print" || word == "printf" {
				inPrint, depth = true, 0
			}
			i, prev, prevWord = j-1, 'a', word
			continue
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
		case c == ';' || c == '\n' || c == '{' || c == '}':
			inPrint = false
		case c == '>' && inPrint && depth <= 0:
			// print … > file, >> file: the target is the next expression.
			j := i + 1
			if j < len(prog) && prog[j] == '>' {
				j++
			}
			for j < len(prog) && (prog[j] == ' ' || prog[j] == '\t') {
				j++
			}
			if j < len(prog) && prog[j] == '"' {
				k := j + 1
				for k < len(prog) && prog[k] != '"' && prog[k] != '\\' {
					k++
				}
				if k < len(prog) && prog[k] == '"' {
					files = append(files, prog[j+1:k])
					i, prev, prevWord = k, '"', ""
					continue
				}
			}
			anyFile = true
		}
		prev, prevWord = c, ""
	}
	return false, files, anyFile
}

// regexCanStart reports whether a / after prev (and the identifier
// prevWord) starts a regular expression rather than a division.
func regexCanStart(prev byte, prevWord string) bool {
	if prevWord != "" {
		switch prevWord {
		case "print", "printf", "return", "in", "getline", "case":
			return true
		}
		return false
	}
	return strings.IndexByte("\n({[,;!~&|=?:<>+-*%^}", prev) >= 0
}

// sedCommand: sed reads its files and writes them with -i; its script
// writes files with w/W and the s///w flag, and runs commands with e
// (`e cmd` is analysed as a shell command; e alone and s///e run the
// pattern space: dynamic). A script file (-f) is not read: a script of
// the project, execute_check.
func sedCommand(w *walker, st *Step, args []string) {
	known := w.known
	var scripts []string
	scriptsKnown, scriptFile, inPlace := true, false, false
	var ops []int
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			for j := i + 1; j < len(args); j++ {
				ops = append(ops, j)
			}
			i = len(args)
		case a == "--expression" || a == "--file":
			if i+1 < len(args) {
				i++
				if a == "--file" {
					scriptFile = true
					st.Reads = appendNew(st.Reads, w.abs(args[i]))
				} else {
					scripts, scriptsKnown = append(scripts, args[i]), scriptsKnown && w.argKnownIn(known, i)
				}
			}
		case strings.HasPrefix(a, "--expression="):
			scripts, scriptsKnown = append(scripts, a[len("--expression="):]), scriptsKnown && w.argKnownIn(known, i)
		case strings.HasPrefix(a, "--file="):
			scriptFile = true
			st.Reads = appendNew(st.Reads, w.abs(a[len("--file="):]))
		case strings.HasPrefix(a, "--in-place"):
			inPlace = true
		case a == "--line-length":
			i++
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// A group of short options: -n, -E, -i[SUFFIX] (the rest is
			// the suffix), -e SCRIPT, -f FILE, -l N (the rest or the next
			// word is the value).
		group:
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'i':
					inPlace = true
					break group
				case 'e', 'f', 'l':
					v, k := a[j+1:], w.argKnownIn(known, i)
					if v == "" && i+1 < len(args) {
						i++
						v, k = args[i], w.argKnownIn(known, i)
					}
					switch a[j] {
					case 'e':
						scripts, scriptsKnown = append(scripts, v), scriptsKnown && k
					case 'f':
						scriptFile = true
						st.Reads = appendNew(st.Reads, w.abs(v))
					}
					break group
				}
			}
		default:
			ops = append(ops, i)
		}
	}
	if !scriptFile && len(scripts) == 0 && len(ops) > 0 {
		scripts, scriptsKnown, ops = append(scripts, args[ops[0]]), w.argKnownIn(known, ops[0]), ops[1:]
	}
	w.scriptOperands(st, args, ops, inPlace, "-i", nil)
	if !scriptKnown(st, scriptFile, scriptsKnown, "a sed script") {
		return
	}
	var cmds []string
	for _, sc := range scripts {
		sr := sedScript(sc)
		if sr.runsInput || sr.bad {
			dynamic(st, cmpOr(sr.why, "sed runs the pattern space as a command (e)"))
			return
		}
		for _, f := range sr.writes {
			w.write(st, f)
		}
		for _, f := range sr.reads {
			st.Reads = appendNew(st.Reads, w.abs(f))
		}
		cmds = append(cmds, sr.runs...)
	}
	for _, c := range cmds {
		w.script(c, []string{"sed e"})
	}
}

// sedResult is what a sed script does besides editing its stream.
type sedResult struct {
	writes, reads []string
	runs          []string // the commands of `e cmd`
	runsInput     bool     // e alone, s///e: runs the pattern space
	bad           bool     // not a script this reader knows
	why           string
}

// sedScript reads a (GNU) sed script: addresses, then commands.
func sedScript(s string) (r sedResult) {
	i := 0
	skipBlank := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	toEOL := func() string {
		j := i
		for j < len(s) && s[j] != '\n' {
			j++
		}
		v := s[i:j]
		i = j
		return v
	}
	// delimited skips a delimited part (regex or replacement) ending in
	// delim; false when it does not end.
	delimited := func(delim byte) bool {
		for i < len(s) {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case delim:
				i++
				return true
			}
			i++
		}
		return false
	}
	address := func() bool {
		switch {
		case i < len(s) && s[i] >= '0' && s[i] <= '9':
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case i < len(s) && s[i] == '$':
			i++
		case i < len(s) && s[i] == '/':
			i++
			if !delimited('/') {
				return false
			}
		case i+1 < len(s) && s[i] == '\\':
			d := s[i+1]
			i += 2
			if !delimited(d) {
				return false
			}
		default:
			return true
		}
		for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
		return true
	}
	for i < len(s) {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '\r' {
			i++
			continue
		}
		if c == '#' {
			toEOL()
			continue
		}
		if !address() {
			r.bad, r.why = true, "a sed script this analysis cannot read"
			return r
		}
		skipBlank()
		if i < len(s) && s[i] == ',' {
			i++
			skipBlank()
			if i < len(s) && (s[i] == '+' || s[i] == '~') {
				i++
			}
			if !address() {
				r.bad, r.why = true, "a sed script this analysis cannot read"
				return r
			}
		}
		skipBlank()
		for i < len(s) && (s[i] == '!' || s[i] == ' ') {
			i++
		}
		if i >= len(s) {
			return r
		}
		c = s[i]
		i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'q', 'Q', 'L':
			skipBlank()
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			for i < len(s) && s[i] != '\n' && s[i] != ';' {
				i++
			}
		case 'a', 'i', 'c':
			// Text up to the end of the line, continued by a backslash.
			for i < len(s) {
				line := toEOL()
				if !strings.HasSuffix(line, `\`) || i >= len(s) {
					break
				}
				i++
			}
		case 'r', 'R', 'w', 'W':
			skipBlank()
			f := toEOL()
			if c == 'w' || c == 'W' {
				r.writes = append(r.writes, f)
			} else {
				r.reads = append(r.reads, f)
			}
		case 'e':
			skipBlank()
			if cmd := toEOL(); strings.TrimSpace(cmd) != "" {
				r.runs = append(r.runs, cmd)
			} else {
				r.runsInput = true
			}
		case 's', 'y':
			if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
				r.bad, r.why = true, "a sed script this analysis cannot read"
				return r
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				r.bad, r.why = true, "a sed script this analysis cannot read"
				return r
			}
			if c == 'y' {
				continue
			}
			for i < len(s) {
				f := s[i]
				if f == 'w' {
					i++
					skipBlank()
					r.writes = append(r.writes, toEOL())
					break
				}
				if f == 'e' {
					r.runsInput = true
				}
				if !(f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f == 'e' || f >= '0' && f <= '9') {
					break
				}
				i++
			}
		default:
			r.bad, r.why = true, "a sed script this analysis cannot read"
			return r
		}
	}
	return r
}

// perlCommand: perl (and ruby) -e/-E code, also in a group of switches
// (-pe, -ne, -lane), cannot be seen into: write; -i edits the files in
// place; otherwise the first operand is a script, read and run (the
// worst when not known before run time, as an interpreter's), and with
// none (or "-", or the standard input's path) the program is its
// standard input (stdinProgram).
func perlCommand(w *walker, st *Step, args []string) {
	inline, inPlace := false, false
	var ops []string
	script := -1 // the index of the first operand in args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if script < 0 && i+1 < len(args) {
				script = i + 1
			}
			ops = append(ops, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || len(a) == 1 || strings.HasPrefix(a, "--") {
			if strings.HasPrefix(a, "--") {
				continue
			}
			if script < 0 {
				script = i
			}
			ops = append(ops, a)
			continue
		}
	group:
		for j := 1; j < len(a); j++ {
			switch a[j] {
			case 'e', 'E':
				inline = true
				if j+1 == len(a) {
					i++ // the code is the next word
				}
				break group
			case 'i':
				inPlace = true
				break group // the rest is the backup suffix
			case 'I', 'M', 'm', 'x', 'd', 'D', 'C', 'F', 'r':
				if j+1 == len(a) && (a[j] == 'I' || a[j] == 'r') {
					i++
				}
				break group
			case 'l', '0':
				for j+1 < len(a) && a[j+1] >= '0' && a[j+1] <= '9' {
					j++
				}
			}
		}
	}
	switch {
	case inline:
		st.Effect, st.Subtype, st.Why = Max(st.Effect, Write), SubtypeRunCommand, "inline code -e"
	case len(ops) > 0 && !w.argKnown(script):
		dynamic(st, "a script not known before run time")
		return
	case len(ops) > 0 && ops[0] != "-" && !stdinPath(ops[0]):
		st.Reads = appendNew(st.Reads, w.abs(ops[0]))
		if strings.Contains(path0(ops[0]), "test") {
			st.Subtype = SubtypeRunTest
		}
		ops = ops[1:]
	default:
		if len(ops) > 0 {
			ops = ops[1:] // "-", /dev/stdin: the standard input
		}
		w.stdinProgram(st)
	}
	if inPlace {
		st.Why = "-i"
		for _, o := range ops {
			w.write(st, o)
		}
	} else if inline {
		w.read(st, ops...)
	}
}

func path0(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// sqlDestroys reports whether SQL drops, truncates or deletes.
func sqlDestroys(sql string) bool {
	for _, f := range strings.FieldsFunc(strings.ToUpper(sql), func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r == '_')
	}) {
		switch f {
		case "DROP", "TRUNCATE", "DELETE":
			return true
		}
	}
	return false
}

// sqlRuns reports whether a client's text runs a shell command: psql's
// \! and \o |cmd, COPY … PROGRAM, mysql's system, sqlite's .shell/.system.
func sqlRuns(text string) bool {
	up := strings.ToUpper(text)
	if strings.Contains(text, `\!`) || strings.Contains(up, ".SHELL") || strings.Contains(up, ".SYSTEM") {
		return true
	}
	for _, f := range strings.Fields(up) {
		if f == "PROGRAM" || f == "SYSTEM" {
			return true
		}
	}
	for i := 0; i+1 < len(text); i++ {
		if text[i] == '\\' {
			j := i + 1
			for j < len(text) && text[j] >= 'a' && text[j] <= 'z' {
				j++
			}
			for j < len(text) && text[j] == ' ' {
				j++
			}
			if j < len(text) && text[j] == '|' {
				return true
			}
		}
	}
	return false
}

// sqlClient: a database client runs the SQL given by an option (-c,
// -e) or in a file (-f): at least write (the database is no file of the
// command); destructive when the SQL drops, truncates or deletes; dynamic
// when it runs a shell command or is not known.
func sqlClient(inline, file, valued string) func(w *walker, st *Step, args []string) {
	inl, fil := strings.Fields(inline), strings.Fields(file)
	return func(w *walker, st *Step, args []string) {
		known := w.known
		for i, a := range args {
			if a == "--" {
				break
			}
			for _, n := range inl {
				v, idx := "", -1
				switch {
				case a == n && i+1 < len(args):
					v, idx = args[i+1], i+1
				case strings.HasPrefix(n, "--") && strings.HasPrefix(a, n+"="):
					v, idx = a[len(n)+1:], i
				case len(n) == 2 && strings.HasPrefix(a, n) && len(a) > 2 && !strings.HasPrefix(a, "--"):
					v, idx = a[2:], i
				default:
					continue
				}
				sqlText(st, v, w.argKnownIn(known, idx))
			}
		}
		if v, ok := optValue(args, valued, fil...); ok && len(fil) > 0 {
			st.Reads = appendNew(st.Reads, w.abs(v))
		}
		if v, ok := optValue(args, valued, "-o", "--output"); ok && strings.Contains(valued, "--output") {
			w.write(st, v)
		}
	}
}

// sqlText gives a step the effect of the SQL it runs.
func sqlText(st *Step, sql string, known bool) {
	switch {
	case st.Dynamic:
	case !known:
		st.Why = "SQL not known before run time"
	case sqlRuns(sql):
		dynamic(st, "the SQL client runs a shell command")
	case sqlDestroys(sql):
		st.Effect, st.Subtype, st.Why = Destructive, SubtypeDeleteFile, "SQL that drops or deletes"
	}
}

// sqlite: sqlite3 [options] DB [SQL…] runs SQL on the database file.
func sqlite(w *walker, st *Step, args []string) {
	known := w.known
	valued := " -cmd -separator -newline -nullvalue -init -mmap -lookaside -pagecache -maxsize -vfs "
	var ops []int
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-cmd" && i+1 < len(args):
			sqlText(st, args[i+1], w.argKnownIn(known, i+1))
			i++
		case strings.HasPrefix(a, "-") && strings.Contains(valued, " "+a+" "):
			i++
		case strings.HasPrefix(a, "-"):
		default:
			ops = append(ops, i)
		}
	}
	readOnly := hasOpt(args, "", "-readonly", "--readonly")
	if len(ops) > 0 {
		if db := args[ops[0]]; readOnly {
			st.Reads = appendNew(st.Reads, w.abs(db))
		} else {
			w.write(st, db)
		}
		for _, i := range ops[1:] {
			sqlText(st, args[i], w.argKnownIn(known, i))
		}
	}
	if readOnly && !st.Dynamic && st.Effect != Destructive {
		st.Effect, st.Subtype = ReadOnly, SubtypeReadFile
	}
}

// cloudVerb gives the effect of an operation by its verb: what deletes
// is destructive, what lists or reads reaches the network, the rest
// writes.
func cloudVerb(st *Step, verb string) bool {
	v := strings.ToLower(verb)
	for _, d := range []string{"delete", "terminate", "remove", "deregister", "purge", "destroy", "rb", "rm", "wipe", "drop", "erase"} {
		if v == d || strings.HasPrefix(v, d+"-") {
			st.Effect, st.Subtype, st.Why = Destructive, SubtypeDeleteFile, verb
			return true
		}
	}
	for _, r := range []string{"describe", "list", "get", "ls", "show", "view", "head", "help", "wait", "status", "presign", "search", "browse", "diff", "version", "whoami", "info"} {
		if v == r || strings.HasPrefix(v, r+"-") {
			st.Effect = Network
			return true
		}
	}
	return false
}

// awsCommand: aws SERVICE OPERATION; s3 sync --delete deletes.
func awsCommand(w *walker, st *Step, args []string) {
	ops := splitOperands(args, "--region --profile --output --endpoint-url --query --color --ca-bundle --cli-read-timeout --cli-connect-timeout --exclude --include --acl --storage-class --sse --content-type --cache-control --expires --metadata --grants")
	if len(ops) < 2 {
		st.Effect = Network
		return
	}
	if !cloudVerb(st, ops[1]) {
		st.Effect = Write
	}
	if ops[0] == "s3" && ops[1] == "sync" && hasOpt(args, "", "--delete") {
		st.Effect, st.Subtype, st.Why = Destructive, SubtypeDeleteFile, "s3 sync --delete"
	}
	if ops[0] == "s3" && (ops[1] == "cp" || ops[1] == "sync" || ops[1] == "mv") && len(ops) > 3 && !strings.Contains(ops[3], "://") {
		w.write(st, ops[3]) // a download
	}
}

// verbCommand: gcloud and az name the operation among their words.
func verbCommand(w *walker, st *Step, args []string) {
	for _, o := range splitOperands(args, "--project --region --zone --format --filter --subscription -g --resource-group -n --name --query -o --output") {
		if cloudVerb(st, o) {
			return
		}
	}
}

// ghCommand: gh (glab) GROUP VERB; gh api by its method.
func ghCommand(w *walker, st *Step, args []string) {
	const valued = "-R --repo -X --method -H --header -f -F --field --raw-field --input -q --jq -t --template -b --body -B --base --head -l --label -a --assignee -m --milestone -L --limit -s --state -w --web -e --env -o --output --hostname"
	ops := splitOperands(args, valued)
	if len(ops) == 0 {
		return
	}
	if ops[0] == "api" {
		m, ok := optValue(args, valued, "-X", "--method")
		switch m = strings.ToUpper(m); {
		case m == "DELETE":
			st.Effect, st.Subtype, st.Why = Destructive, SubtypeDeleteFile, "api DELETE"
		case ok && m != "GET" && m != "HEAD":
			st.Effect = Write
		case !ok && hasOpt(args, valued, "-f", "-F", "--field", "--raw-field", "--input"):
			st.Effect = Write // fields make it a POST
		}
		return
	}
	if len(ops) < 2 {
		return
	}
	if !cloudVerb(st, ops[1]) {
		st.Effect = Write
	}
}

// scriptOperands records the file operands of an awk or sed run, ops
// (indexes into args): files it writes with inPlace (why names the
// option), else files it reads ("-" is its input). notFile, when not nil,
// passes over operands that name no file.
func (w *walker) scriptOperands(st *Step, args []string, ops []int, inPlace bool, why string, notFile func(string) bool) {
	for _, i := range ops {
		o := args[i]
		switch {
		case notFile != nil && notFile(o):
		case inPlace:
			w.write(st, o)
		case o != "-":
			st.Reads = appendNew(st.Reads, w.abs(o))
		}
	}
	if inPlace {
		st.Why = why
	}
}

// scriptKnown settles what an awk or sed run's program alone says of its
// step: one read from a file (fromFile) runs what the file holds, at least
// a check; one not known before run time (known false) makes the step
// dynamic, and scriptKnown reports false: what of names is then not read.
func scriptKnown(st *Step, fromFile, known bool, what string) bool {
	if fromFile {
		st.Effect, st.Subtype = Max(st.Effect, ExecuteCheck), SubtypeRunCommand
	}
	if !known {
		dynamic(st, what+" not known before run time")
		return false
	}
	return true
}
