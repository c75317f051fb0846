package shell

import (
	"net/url"
	"path"
	"strings"
)

// The analyses of programs whose meaning the table cannot say.

// optValue returns the value of an option given as `-o v`, `--output v`
// or `--output=v`.
func optValue(args []string, names ...string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, n := range names {
			if a == n && i+1 < len(args) {
				return args[i+1], true
			}
			if strings.HasPrefix(n, "--") && strings.HasPrefix(a, n+"=") {
				return a[len(n)+1:], true
			}
		}
	}
	return "", false
}

func hasOpt(args []string, names ...string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		for _, n := range names {
			if a == n || (strings.HasPrefix(n, "--") && strings.HasPrefix(a, n+"=")) {
				return true
			}
			if len(n) == 2 && n[1] != '-' && len(a) > 2 && a[0] == '-' && a[1] != '-' && isLetters(a[1:]) && strings.IndexByte(a[1:], n[1]) >= 0 {
				return true
			}
		}
	}
	return false
}

// outputOption records the file an -o/--output option writes (curl, sort).
func outputOption(names ...string) func(w *walker, st *Step, args []string) {
	return func(w *walker, st *Step, args []string) {
		if v, ok := optValue(args, names...); ok {
			w.write(st, v)
		}
		if hasOpt(args, "-O", "--remote-name") {
			for _, h := range splitOperands(args, curlValued) {
				if u, err := url.Parse(h); err == nil && u.Host != "" {
					w.write(st, path.Base(u.Path))
				}
			}
		}
	}
}

// wgetOutput: wget writes the file it downloads (-O names it, - is stdout).
func wgetOutput(w *walker, st *Step, args []string) {
	v, ok := optValue(args, "-O", "--output-document")
	for i, a := range args {
		// -qO- and -Ofile: the value attached to a group of short options.
		if j := strings.IndexByte(a, 'O'); !ok && j > 0 && a[0] == '-' && a[1] != '-' && isLetters(a[1:j]) {
			if v, ok = a[j+1:], true; v == "" && i+1 < len(args) {
				v = args[i+1]
			}
		}
	}
	if ok {
		if v == "-" {
			st.Effect = Network
			return
		}
		w.write(st, v)
		return
	}
	dir, _ := optValue(args, "-P", "--directory-prefix")
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

// mvToNull: mv x /dev/null deletes x.
func mvToNull(w *walker, st *Step, args []string) {
	ops := splitOperands(args, copyValued)
	if n := len(ops); n > 1 && ops[n-1] == "/dev/null" {
		st.Effect, st.Subtype, st.Why = Destructive, SubtypeDeleteFile, "mv to /dev/null"
		st.Writes = st.Reads
		st.Reads = nil
	}
}

// remoteHosts: scp and rsync operands host:path name a host, not a local
// file.
func remoteHosts(w *walker, st *Step, args []string) {
	// Operands were made absolute against the working directory; look at
	// the raw ones.
	remote := map[string]bool{}
	for _, o := range splitOperands(args, "-e --rsh -P -i -o -F -c -l -S -J --exclude --include --filter") {
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

// sedInPlace: sed -i writes the files it edits; otherwise it reads them.
func sedInPlace(w *walker, st *Step, args []string) {
	ops := splitOperands(args, "-e -f -l --expression --file")
	if !hasOpt(args, "-e", "-f", "--expression", "--file") && len(ops) > 0 {
		ops = ops[1:] // the script
	}
	inPlace := false
	for _, a := range args {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--in-place") || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "i") && (isLetters(a[1:]) || strings.HasPrefix(a, "-i"))) {
			inPlace = true
		}
	}
	st.Reads = nil
	for _, o := range ops {
		if inPlace {
			w.write(st, o)
		} else {
			st.Reads = appendNew(st.Reads, w.abs(o))
		}
	}
	if inPlace {
		st.Why = "-i"
	}
}

// awkInPlace: gawk -i inplace writes the files it edits.
func awkInPlace(w *walker, st *Step, args []string) {
	ops := splitOperands(args, "-f -v -F -i --file --assign --field-separator --include")
	if v, _ := optValue(args, "-i", "--include"); v == "inplace" {
		for _, o := range ops[min(1, len(ops)):] {
			w.write(st, o)
		}
		st.Why = "-i inplace"
		return
	}
	if !hasOpt(args, "-f", "--file") && len(ops) > 0 {
		ops = ops[1:]
	}
	for _, o := range ops {
		st.Reads = appendNew(st.Reads, w.abs(o))
	}
}

// tarMode: tar -c writes the archive, -x writes the files it extracts
// (into -C or the working directory), -t only reads.
func tarMode(w *walker, st *Step, args []string) {
	st.Reads, st.Writes = nil, nil
	mode, archive := byte(0), ""
	for i, a := range args {
		letters := strings.TrimPrefix(a, "-")
		if strings.HasPrefix(a, "--") {
			switch {
			case a == "--create":
				mode = 'c'
			case a == "--extract" || a == "--get":
				mode = 'x'
			case a == "--list":
				mode = 't'
			case a == "--append" || a == "--update":
				mode = 'c'
			case strings.HasPrefix(a, "--file="):
				archive = a[len("--file="):]
			case a == "--file" && i+1 < len(args):
				archive = args[i+1]
			}
			continue
		}
		if (i == 0 || strings.HasPrefix(a, "-")) && isLetters(letters) {
			for j := 0; j < len(letters); j++ {
				switch letters[j] {
				case 'c', 'r', 'u':
					mode = 'c'
				case 'x':
					mode = 'x'
				case 't':
					mode = 't'
				case 'f':
					if i+1 < len(args) {
						archive = args[i+1]
					}
				}
			}
		}
	}
	switch mode {
	case 'x':
		dir, ok := optValue(args, "-C", "--directory")
		if !ok {
			dir = "."
		}
		st.Reads = appendNew(st.Reads, w.abs(archive))
		w.write(st, dir)
	case 'c':
		if archive != "" && archive != "-" {
			w.write(st, archive)
		} else {
			st.Effect = ReadOnly
		}
		st.Subtype = SubtypeModifyFile
	default:
		st.Effect, st.Subtype = ReadOnly, SubtypeReadFile
		if archive != "" {
			st.Reads = appendNew(st.Reads, w.abs(archive))
		}
	}
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
// counts as able to write; a script operand is read and run.
func interpreter(inline ...string) func(w *walker, st *Step, args []string) {
	return func(w *walker, st *Step, args []string) {
		for i, a := range args {
			for _, f := range inline {
				if a == f || (len(f) == 2 && strings.HasPrefix(a, f) && a != f && f != "-p") {
					st.Effect, st.Subtype, st.Why = Write, SubtypeRunCommand, "inline code "+f
					return
				}
			}
			if !strings.HasPrefix(a, "-") {
				st.Reads = appendNew(st.Reads, w.abs(args[i]))
				if strings.Contains(path.Base(a), "test") {
					st.Subtype = SubtypeRunTest
				}
				return
			}
		}
	}
}

// pythonModule: python -m pytest runs tests, -m pip install installs.
func pythonModule(w *walker, st *Step, args []string) {
	if m, ok := optValue(args, "-m"); ok {
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

// sshRemote: ssh host cmd runs cmd on the host: it is analysed like any
// command, so `ssh h rm -rf /` is destructive.
func sshRemote(w *walker, st *Step, args []string) {
	ops := splitOperands(args, "-p -i -l -o -F -J -L -R -D -b -c -E -e -m -O -Q -S -W -w -B")
	if len(ops) == 0 {
		return
	}
	st.Hosts = appendNew(st.Hosts, hostOf(ops[0]))
	if len(ops) > 1 {
		dir := w.dir
		w.dir = ""
		w.script(strings.Join(ops[1:], " "), []string{"ssh " + ops[0]})
		w.dir = dir
	}
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
			for _, a := range args[i+1 : j] {
				cmd = append(cmd, strings.ReplaceAll(a, "{}", roots[0]))
			}
			if len(cmd) > 0 {
				sub := Step{}
				known := make([]bool, len(cmd))
				for k := range known {
					known[k] = true
				}
				n := len(w.a.Steps)
				w.resolve(&sub, cmd, known, nil)
				sub.Via = append([]string{"find " + args[i]}, sub.Via...)
				if sub.Effect.Rank() > st.Effect.Rank() {
					st.Effect, st.Why = sub.Effect, args[i]+" "+sub.Program
				}
				if sub.Subtype == SubtypeDeleteFile {
					st.Subtype = SubtypeDeleteFile
				}
				st.Writes = appendNew(st.Writes, sub.Writes...)
				w.insert(n, sub)
			}
			i = j
		}
	}
}

// gitCommand analyses git: its global options, then the subcommand.
// Reading (status, log, diff …) is read_only; changing the repository
// (add, commit, merge …) is write; reaching a remote is network; what
// discards work (reset --hard, clean -f, checkout -- ., restore, branch -D,
// stash drop, push --force) is destructive.
func gitCommand(w *walker, st *Step, args []string) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		switch args[i] {
		case "-C":
			if i+1 < len(args) {
				w.dir = w.abs(args[i+1])
			}
			i++
		case "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path":
			i++
		}
		i++
	}
	st.Effect, st.Subtype = ReadOnly, SubtypeGitOperation
	if i >= len(args) {
		return
	}
	sub, rest := args[i], args[i+1:]
	ops := splitOperands(rest, "-m -F -C -c -b -B -u --message --file --author --date -s --strategy -X --onto --upstream -o --orphan -t --track --depth --branch --reference")
	destroy := func(why string, paths ...string) {
		st.Effect, st.Why = Destructive, why
		for _, p := range paths {
			st.Writes = appendNew(st.Writes, w.abs(p))
		}
	}
	remote := func() {
		for _, o := range ops {
			if strings.Contains(o, "://") || strings.Contains(o, "@") {
				st.Hosts = appendNew(st.Hosts, hostOf(o))
			}
		}
	}
	switch sub {
	case "status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "blame", "grep", "describe",
		"shortlog", "reflog", "cat-file", "for-each-ref", "whatchanged", "help", "version", "check-ignore",
		"name-rev", "show-ref", "rev-list", "merge-base", "count-objects", "var", "annotate", "difftool", "range-diff":
		st.Effect = ReadOnly
	case "commit":
		st.Effect, st.Subtype = Write, SubtypeGitCommit
	case "push":
		st.Effect, st.Subtype = Network, SubtypeGitPush
		remote()
		if hasOpt(rest, "--force", "-f", "--force-with-lease", "--mirror", "--delete", "-d", "--prune") {
			destroy("push --force")
		}
		for _, o := range ops {
			if strings.HasPrefix(o, "+") || strings.HasPrefix(o, ":") {
				destroy("push " + o)
			}
		}
	case "fetch", "ls-remote":
		st.Effect = Network
		remote()
	case "pull", "clone":
		st.Effect = Write
		remote()
		if sub == "clone" && len(ops) > 1 {
			st.Writes = appendNew(st.Writes, w.abs(ops[len(ops)-1]))
		}
	case "clean":
		st.Effect = Write
		if hasOpt(rest, "-f", "--force") && !hasOpt(rest, "-n", "--dry-run") {
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
		if hasOpt(rest, "--hard", "--merge", "--keep") {
			destroy("reset --hard", ".")
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
		case hasOpt(rest, "-f", "--force"):
			destroy("checkout --force", ".")
		case len(ops) == 1 && (ops[0] == "." || strings.ContainsAny(ops[0], "/*")) && !hasOpt(rest, "-b", "-B"):
			destroy("checkout of paths discards changes", ops...)
		}
	case "restore":
		st.Effect = Write
		if !hasOpt(rest, "--staged", "-S") || hasOpt(rest, "--worktree", "-W") {
			paths := ops
			if len(paths) == 0 {
				paths = []string{"."}
			}
			destroy("restore discards changes", paths...)
		}
	case "switch":
		st.Effect = Write
		if hasOpt(rest, "--discard-changes", "-f", "--force") {
			destroy("switch --discard-changes", ".")
		}
	case "rm":
		destroy("git rm", ops...)
	case "branch":
		st.Effect = ReadOnly
		switch {
		case hasOpt(rest, "-D", "--delete", "-d") && len(ops) > 0:
			destroy("branch delete")
		case len(ops) > 0 || hasOpt(rest, "-m", "-M", "-c", "-C"):
			st.Effect = Write
		}
	case "tag":
		st.Effect = ReadOnly
		switch {
		case hasOpt(rest, "-d", "--delete"):
			destroy("tag -d")
		case len(ops) > 0 && !hasOpt(rest, "-l", "--list"):
			st.Effect = Write
		}
	case "stash":
		st.Effect = Write
		if len(ops) > 0 {
			switch ops[0] {
			case "list", "show":
				st.Effect = ReadOnly
			case "drop", "clear":
				destroy("stash " + ops[0])
			}
		}
	case "config", "remote", "worktree", "submodule", "notes", "lfs":
		st.Effect = ReadOnly
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
		if hasOpt(rest, "-d") {
			destroy("update-ref -d")
		}
	case "filter-branch", "filter-repo":
		destroy(sub + " rewrites history")
	case "gc", "prune":
		st.Effect = Write
	default:
		st.Effect = Write
	}
}
