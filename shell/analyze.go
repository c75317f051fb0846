package shell

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds of one analysis. Beyond any of them the command is Unknown (and
// so Destructive): the caution falls on the side of the rule.
const (
	// MaxInput is the longest command analysed, in bytes.
	MaxInput = 256 << 10
	// MaxSteps is the most steps an analysis lists.
	MaxSteps = 2000
	// maxDepth bounds shells in shells (bash -c, eval, ssh, functions
	// calling functions).
	maxDepth = 12
	// maxWork bounds the statements visited, function bodies inlined at
	// every call included, and maxParsed the bytes parsed, nested shells
	// and evals included.
	maxWork   = 50000
	maxParsed = 4 * MaxInput
	// maxVar bounds a variable's known value; a longer one is unknown.
	maxVar = 4 << 10
	// maxText bounds the source text kept for a word that is not known.
	maxText = 200
)

// Anywhere is the path a step writes when what it writes cannot be named
// as a path: a program or code not known before run time (`$TOOL -rf x`,
// `bash -c "$CMD"`, `curl … | sh`, awk's system()), and what a destructive
// program destroys that is no file of the command (a container, a remote
// branch, a cloud bucket, a database). It is the root, the one directory
// every path is under, so `under(#, dir)` holds for it only when dir is /:
// a rule that allows destruction under a directory never allows it.
const Anywhere = "/"

// parsers keeps parsers for reuse: a parser is a few KB of buffers, more
// than the rest of the analysis of a typical command allocates. A parser
// resets itself on every Parse.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// Options are the context of a command.
type Options struct {
	// Dir is the working directory the command starts in (the hook
	// payload's cwd); relative paths are made absolute against it. ""
	// leaves them relative.
	Dir string
}

// Analyze analyses a shell command (bash syntax). It never fails: what it
// cannot analyse makes the result Unknown, with effect Destructive.
func Analyze(src string, opt Options) (a Analysis) {
	w := &walker{dir: opt.Dir, start: opt.Dir, vars: map[string]string{}}
	w.a.Steps = make([]Step, 0, 4)
	defer func() {
		if r := recover(); r != nil {
			w.a = Analysis{}
			w.unknown(fmt.Sprintf("internal error: %v", r))
		}
		w.a.finish()
		a = w.a
	}()
	if len(src) > MaxInput {
		w.unknown(fmt.Sprintf("command longer than %d bytes", MaxInput))
		return
	}
	w.script(src, nil)
	return
}

// walker is the state of one analysis.
type walker struct {
	a     Analysis
	dir   string // working directory, "" when unknown
	start string // the directory the command starts in (Options.Dir)
	// remotes maps the git remotes the command names (git remote add,
	// set-url) to the host of their URL.
	remotes map[string]string
	vars    map[string]string // variables whose value is known
	funcs   map[string]*syntax.Stmt
	// known says which arguments of the program being applied are known
	// statically (args of program, aligned), for the custom analyses.
	known []bool
	// in is what the program being applied reads on its standard input
	// (a pipe, a heredoc), nil when nothing feeds it.
	in *input
	// env is the environment given to the command being resolved and
	// to what it runs: the NAME=value words before it, its own and
	// those of the commands running it, and env's; the last of a name
	// wins. assigned holds the variables the command sets as it goes
	// (X=v; export X=v), each in the environment when exported or when
	// it already was: the value, as vars has it when known, else with
	// what is not known as written ($HOME/bin:$PATH).
	env      []envAssign
	assigned map[string]string
	depth    int
	work     int
	bytes    int
	stop     bool // a bound was hit: no more steps
}

// unknown marks the analysis as incomplete; the first reason is kept.
func (w *walker) unknown(reason string) {
	if !w.a.Unknown {
		w.a.Unknown, w.a.Reason = true, reason
	}
}

// limit reports whether a bound is hit, marking the analysis unknown.
func (w *walker) limit() bool {
	if w.stop {
		return true
	}
	switch {
	case w.work > maxWork:
		w.unknown("too many statements to analyse")
	case len(w.a.Steps) >= MaxSteps:
		w.unknown(fmt.Sprintf("more than %d steps", MaxSteps))
	case w.bytes > maxParsed:
		w.unknown("too much nested shell text to analyse")
	case w.depth > maxDepth:
		w.unknown("shells nested too deeply")
	default:
		return false
	}
	w.stop = true
	return true
}

// script parses and walks shell text: the command itself, or a nested
// one (bash -c, eval, a heredoc fed to a shell). via is prefixed to the
// Via of every step it yields.
func (w *walker) script(src string, via []string) { w.scriptIn(src, via, nil) }

// scriptIn is script with in on the standard input of its commands (nc
// -c CMD: what the remote end sends).
func (w *walker) scriptIn(src string, via []string, in *input) {
	w.bytes += len(src)
	if w.limit() {
		return
	}
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	parsers.Put(p)
	if err != nil {
		w.unknown("cannot parse: " + err.Error())
		return
	}
	w.depth++
	defer func() { w.depth-- }()
	n := len(w.a.Steps)
	w.stmts(f.Stmts, in)
	if len(via) > 0 {
		for i := n; i < len(w.a.Steps); i++ {
			w.a.Steps[i].Via = append(append([]string(nil), via...), w.a.Steps[i].Via...)
		}
	}
}

// input is what a command reads on its standard input, when it matters:
// the text of a heredoc or of echo/printf piped in, an unknown producer,
// or a file redirected to it (< FILE), whose content is not known.
type input struct {
	text    string
	known   bool
	program string // the producer in a pipe, for messages
	file    string // the file redirected, for messages
}

// what names the input in a message: "what curl writes", "the file f".
func (in *input) what() string {
	if in.file != "" {
		return "the file " + in.file
	}
	return "what " + cmpOr(in.program, "a command") + " writes"
}

func (w *walker) stmts(list []*syntax.Stmt, in *input) {
	for _, s := range list {
		w.stmt(s, in)
	}
}

// subshell runs fn in a copy of the working directory and variables:
// what a subshell, a pipeline part or a command substitution changes does
// not last.
func (w *walker) subshell(fn func()) {
	dir, vars := w.dir, w.vars
	w.vars = make(map[string]string, len(vars))
	for k, v := range vars {
		w.vars[k] = v
	}
	fn()
	w.dir, w.vars = dir, vars
}

func (w *walker) stmt(s *syntax.Stmt, in *input) {
	w.work++
	if s == nil || w.limit() {
		return
	}
	if hin := w.stdin(s.Redirs); hin != nil {
		in = hin
	}
	switch c := s.Cmd.(type) {
	case nil:
		w.redirectOnly(s.Redirs)
		return
	case *syntax.CallExpr:
		w.call(c, s.Redirs, in)
		return
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			w.subshell(func() { w.stmt(c.X, in) })
			out := w.producer(c.X)
			w.subshell(func() { w.stmt(c.Y, out) })
		} else {
			w.stmt(c.X, in)
			w.stmt(c.Y, in)
		}
	case *syntax.Block:
		w.stmts(c.Stmts, in)
	case *syntax.Subshell:
		w.subshell(func() { w.stmts(c.Stmts, in) })
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			w.stmts(ic.Cond, in)
			w.stmts(ic.Then, in)
		}
	case *syntax.WhileClause:
		w.stmts(c.Cond, in)
		w.stmts(c.Do, in)
	case *syntax.ForClause:
		if wi, ok := c.Loop.(*syntax.WordIter); ok {
			for _, it := range wi.Items {
				w.substitutions(it)
			}
			if wi.Name != nil {
				delete(w.vars, wi.Name.Value)
			}
		}
		w.stmts(c.Do, in)
	case *syntax.CaseClause:
		w.substitutions(c.Word)
		for _, it := range c.Items {
			w.stmts(it.Stmts, in)
		}
	case *syntax.FuncDecl:
		if c.Name != nil {
			if w.funcs == nil {
				w.funcs = map[string]*syntax.Stmt{}
			}
			w.funcs[c.Name.Value] = c.Body
		}
	case *syntax.DeclClause:
		for _, as := range c.Args {
			w.assign(as)
		}
	case *syntax.TimeClause:
		w.stmt(c.Stmt, in)
	case *syntax.CoprocClause:
		w.stmt(c.Stmt, in)
	default:
		// Arithmetic, [[ tests ]], let: no program runs, but command
		// substitutions inside them do.
		syntax.Walk(c, w.visitSubst)
	}
	if _, ok := s.Cmd.(*syntax.FuncDecl); !ok && hasFileRedirect(s.Redirs) {
		st := Step{Program: "redirect", Effect: ReadOnly, Subtype: SubtypeRunCommand}
		w.redirects(&st, s.Redirs)
		w.add(st)
	}
}

// producer describes what a pipeline's left side writes to the right
// side's input.
func (w *walker) producer(s *syntax.Stmt) *input {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return &input{program: "a compound command"}
	}
	args, known := w.words(c.Args)
	name := ""
	if len(args) > 0 && known[0] {
		name = path.Base(args[0])
	}
	for _, k := range known {
		if !k {
			return &input{program: name}
		}
	}
	switch name {
	case "echo":
		rest := args[1:]
		for len(rest) > 0 && (rest[0] == "-n" || rest[0] == "-e" || rest[0] == "-E") {
			rest = rest[1:]
		}
		return &input{text: strings.Join(rest, " "), known: true, program: name}
	case "printf":
		if len(args) > 1 && !strings.Contains(args[1], "%") {
			return &input{text: strings.ReplaceAll(args[1], `\n`, "\n"), known: true, program: name}
		}
	}
	return &input{program: name}
}

// stdin returns the input the redirections give the command: the text
// of a heredoc or herestring, or a file (< FILE, <> FILE), the last
// redirection of the standard input winning as in the shell. A file's
// substitutions are analysed with the redirections' (redirects).
func (w *walker) stdin(rs []*syntax.Redirect) *input {
	var in *input
	for _, r := range rs {
		var wd *syntax.Word
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			wd = r.Hdoc
		case syntax.WordHdoc:
			wd = r.Word
		case syntax.RdrIn, syntax.RdrInOut:
			if r.Word != nil && (r.N == nil || r.N.Value == "0") {
				f, _, _ := w.word(r.Word)
				in = &input{file: f}
			}
			continue
		default:
			continue
		}
		if wd == nil {
			in = &input{text: "", known: true, program: "a heredoc"}
			continue
		}
		w.substitutions(wd)
		v, ok, _ := w.word(wd)
		in = &input{text: v, known: ok, program: "a heredoc"}
	}
	return in
}

// hasFileRedirect reports whether a redirection names a file.
func hasFileRedirect(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		case syntax.DplIn, syntax.DplOut:
			if r.Word != nil && !isFD(r.Word.Lit()) {
				return true
			}
		default:
			return true
		}
	}
	return false
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// redirectOnly is a statement of redirections alone: `> f` truncates f.
func (w *walker) redirectOnly(rs []*syntax.Redirect) {
	st := Step{Program: "redirect", Effect: ReadOnly, Subtype: SubtypeRunCommand}
	w.redirects(&st, rs)
	w.truncation(&st, rs)
	w.add(st)
}

// truncation makes a step destructive when it empties a file without
// writing anything into it (`> f`, `: > f`, `true > f`).
func (w *walker) truncation(st *Step, rs []*syntax.Redirect) {
	for _, r := range rs {
		switch r.Op {
		case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll:
			if len(st.Writes) > 0 {
				st.Effect, st.Subtype, st.Why = Destructive, SubtypeDeleteFile, "> with nothing written truncates the file"
			}
		}
	}
}

// redirects adds a statement's redirections to a step: files read and
// written.
func (w *walker) redirects(st *Step, rs []*syntax.Redirect) {
	for _, r := range rs {
		if r.Word == nil {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			continue
		}
		w.substitutions(r.Word)
		target, _, _ := w.word(r.Word)
		switch r.Op {
		case syntax.RdrIn:
			st.Reads = appendNew(st.Reads, w.abs(target))
		case syntax.DplIn:
			if !isFD(target) {
				st.Reads = appendNew(st.Reads, w.abs(target))
			}
		case syntax.DplOut:
			if !isFD(target) {
				w.write(st, target)
			}
		default:
			w.write(st, target)
		}
	}
}

// read records the files a step reads; "-" (the standard input) is no
// file.
func (w *walker) read(st *Step, paths ...string) {
	for _, p := range paths {
		if p != "-" {
			st.Reads = appendNew(st.Reads, w.abs(p))
		}
	}
}

// write records a file the step writes, unless it is a device that keeps
// nothing.
func (w *walker) write(st *Step, p string) {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-":
		return
	}
	if strings.HasPrefix(p, "/dev/fd/") {
		return
	}
	st.Writes = appendNew(st.Writes, w.abs(p))
	st.Effect = Max(st.Effect, Write)
	switch st.Subtype {
	case "", SubtypeRunCommand, SubtypeReadFile, SubtypeListFiles, SubtypeSearch:
		st.Subtype = SubtypeModifyFile
	}
}

// abs makes a path absolute against the working directory when both are
// known. A path starting with ~ or a variable is kept as written.
func (w *walker) abs(p string) string {
	if p == "" || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "$") || strings.HasPrefix(p, "<") {
		return p
	}
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	if w.dir == "" {
		return p
	}
	return path.Join(w.dir, p)
}

// absIn makes a path absolute against dir, itself taken against the
// working directory: a path a program names after changing directory
// (tar -C DIR). An empty dir is the working directory.
func (w *walker) absIn(dir, p string) string {
	if dir == "" {
		return w.abs(p)
	}
	wd := w.dir
	defer func() { w.dir = wd }()
	w.dir = w.abs(dir)
	return w.abs(p)
}

// add appends a step, within MaxSteps. What a step does that cannot be
// known counts as the worst it could be: a dynamic step makes the analysis
// unknown and writes Anywhere; a destructive step always names what it
// destroys, Anywhere when that is no path, so that a rule such as
// `all(command.writes, {under(#, dir)})` is never true of it for want of
// a path.
func (w *walker) add(st Step) {
	if w.limit() {
		return
	}
	if st.Dynamic {
		st.Effect, st.Subtype = Destructive, SubtypeUnknown
		w.unknown(cmpOr(st.Why, "a command not known before run time"))
	}
	if st.Effect == "" {
		st.Effect = ReadOnly
	}
	if st.Subtype == "" {
		st.Subtype = SubtypeRunCommand
	}
	if st.Dynamic || (st.Effect == Destructive && len(st.Writes) == 0) {
		st.Writes = appendNew(st.Writes, Anywhere)
	}
	w.a.Steps = append(w.a.Steps, st)
}

// visitSubst analyses the command substitutions met while walking a node.
func (w *walker) visitSubst(n syntax.Node) bool {
	switch x := n.(type) {
	case *syntax.CmdSubst:
		w.subshell(func() { w.stmts(x.Stmts, nil) })
		return false
	case *syntax.ProcSubst:
		w.subshell(func() { w.stmts(x.Stmts, nil) })
		return false
	}
	return true
}

// substitutions analyses the command substitutions of a word: they run
// before the command that holds them.
func (w *walker) substitutions(wd *syntax.Word) {
	if wd != nil {
		syntax.Walk(wd, w.visitSubst)
	}
}

// assign records a variable assignment: its value when known, else that
// it is not known.
func (w *walker) assign(as *syntax.Assign) {
	if as == nil || as.Name == nil {
		return
	}
	if as.Array != nil {
		syntax.Walk(as.Array, w.visitSubst)
		delete(w.vars, as.Name.Value)
		return
	}
	if as.Naked {
		return // export X: its value does not change
	}
	if w.assigned == nil {
		w.assigned = map[string]string{}
	}
	if as.Value == nil {
		w.vars[as.Name.Value], w.assigned[as.Name.Value] = "", ""
		return
	}
	w.substitutions(as.Value)
	v, ok, _ := w.word(as.Value)
	if as.Append {
		old, had := w.vars[as.Name.Value]
		v, ok = old+v, ok && had
	}
	w.assigned[as.Name.Value] = v
	if ok && len(v) <= maxVar {
		w.vars[as.Name.Value] = v
	} else {
		delete(w.vars, as.Name.Value)
	}
}

// call analyses a simple command.
func (w *walker) call(c *syntax.CallExpr, rs []*syntax.Redirect, in *input) {
	for _, as := range c.Assigns {
		if as.Value != nil && len(c.Args) > 0 {
			w.substitutions(as.Value) // assign walks them otherwise
		}
	}
	if len(c.Args) > 0 && len(c.Assigns) > 0 {
		// NAME=value cmd: the environment of cmd and of what it runs.
		defer func(n int) { w.env = w.env[:n] }(len(w.env))
		for _, as := range c.Assigns {
			if as.Name == nil || as.Array != nil {
				continue
			}
			e := envAssign{name: as.Name.Value, known: true}
			if as.Value != nil {
				e.val, e.known, _ = w.word(as.Value)
			}
			w.env = append(w.env, e)
		}
	}
	for _, a := range c.Args {
		w.substitutions(a)
	}
	if len(c.Args) == 0 {
		for _, as := range c.Assigns {
			w.assign(as)
		}
		if hasFileRedirect(rs) {
			w.redirectOnly(rs)
		}
		return
	}
	args, known := w.words(c.Args)
	if len(args) == 0 {
		return // every word expanded to nothing
	}
	n := len(w.a.Steps)
	if fn, ok := w.funcs[args[0]]; ok && known[0] {
		st := Step{Program: args[0], Args: args[1:], Subtype: SubtypeRunCommand, Why: "function"}
		w.redirects(&st, rs)
		w.add(st)
		w.depth++
		if !w.limit() {
			w.withArgs(args, known, func() { w.stmt(fn, in) })
		}
		w.depth--
		return
	}
	st := Step{}
	w.resolve(&st, args, known, in)
	w.redirects(&st, rs)
	if st.Program == ":" || st.Program == "true" {
		w.truncation(&st, rs)
	}
	w.insert(n, st)
}

// insert adds a step at index n: a wrapper (bash -c, find -exec) before
// the steps it runs, which were added while it was resolved.
func (w *walker) insert(n int, st Step) {
	before := len(w.a.Steps)
	w.add(st)
	if last := len(w.a.Steps) - 1; last == before && last > n && n >= 0 {
		added := w.a.Steps[last]
		copy(w.a.Steps[n+1:], w.a.Steps[n:last])
		w.a.Steps[n] = added
	}
}

// withArgs runs fn with the positional parameters of a function call.
func (w *walker) withArgs(args []string, known []bool, fn func()) {
	saved := map[string]*string{}
	for i := 1; i <= 9; i++ {
		k := strconv.Itoa(i)
		if v, ok := w.vars[k]; ok {
			saved[k] = &v
		} else {
			saved[k] = nil
		}
		if i < len(args) && known[i] {
			w.vars[k] = args[i]
		} else {
			delete(w.vars, k)
		}
	}
	fn()
	for k, v := range saved {
		if v == nil {
			delete(w.vars, k)
		} else {
			w.vars[k] = *v
		}
	}
}

// words evaluates a command's words, splitting the fields of unquoted
// known variables; known[i] says whether args[i] is known statically.
func (w *walker) words(ws []*syntax.Word) (args []string, known []bool) {
	for _, wd := range ws {
		v, ok, split := w.word(wd)
		if ok && split {
			for _, f := range strings.Fields(v) {
				args, known = append(args, f), append(known, true)
			}
			continue
		}
		args, known = append(args, v), append(known, ok)
	}
	return args, known
}

// shellWords splits text into words as a shell splits a command's
// (quotes, backslashes; words evaluated as words does), for a value
// that holds options (GNU parallel's PARALLEL): ok is false when the
// text is not one simple command's words (a ;, a redirection, an
// assignment, text that does not parse). "" holds no words.
func (w *walker) shellWords(text string) (args []string, known []bool, ok bool) {
	if strings.TrimSpace(text) == "" {
		return nil, nil, true
	}
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(text), "")
	parsers.Put(p)
	if err != nil || len(f.Stmts) != 1 {
		return nil, nil, false
	}
	s := f.Stmts[0]
	c, isCall := s.Cmd.(*syntax.CallExpr)
	if !isCall || len(c.Assigns) > 0 || len(s.Redirs) > 0 || s.Negated || s.Background || s.Coprocess {
		return nil, nil, false
	}
	args, known = w.words(c.Args)
	return args, known, true
}

// word evaluates a word: its value with quotes removed and known
// variables substituted, whether all of it is known, and whether an
// unquoted variable contributed (and so splits into fields).
func (w *walker) word(wd *syntax.Word) (string, bool, bool) {
	var b strings.Builder
	known, split := true, false
	for _, p := range wd.Parts {
		v, ok, sp := w.part(p, false)
		b.WriteString(v)
		known = known && ok
		split = split || sp
		if b.Len() > maxVar {
			return b.String()[:maxVar], false, false
		}
	}
	return b.String(), known, split
}

func (w *walker) part(p syntax.WordPart, quoted bool) (string, bool, bool) {
	switch x := p.(type) {
	case *syntax.Lit:
		if quoted {
			return unescapeQuoted(x.Value), true, false
		}
		return unescape(x.Value), true, false
	case *syntax.SglQuoted:
		if x.Dollar {
			return ansiC(x.Value), true, false
		}
		return x.Value, true, false
	case *syntax.DblQuoted:
		var b strings.Builder
		known := true
		for _, q := range x.Parts {
			v, ok, _ := w.part(q, true)
			b.WriteString(v)
			known = known && ok
		}
		return b.String(), known, false
	case *syntax.ParamExp:
		if x.Param != nil && x.Exp == nil && x.Repl == nil && x.Slice == nil && x.Index == nil &&
			!x.Excl && !x.Length && x.NestedParam == nil {
			if v, ok := w.vars[x.Param.Value]; ok {
				return v, true, !quoted
			}
		}
	case *syntax.CmdSubst:
		if prog, ok := w.which(x); ok {
			return prog, true, false
		}
	case *syntax.ExtGlob, *syntax.BraceExp:
		return sourceText(p), true, false
	}
	return sourceText(p), false, false
}

// which resolves $(which rm), $(command -v rm) and $(type -P rm) to the
// program they name.
func (w *walker) which(cs *syntax.CmdSubst) (string, bool) {
	if len(cs.Stmts) != 1 {
		return "", false
	}
	c, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) < 2 {
		return "", false
	}
	args, known := w.words(c.Args)
	for _, k := range known {
		if !k {
			return "", false
		}
	}
	switch {
	case len(args) == 2 && (args[0] == "which" || args[0] == "whereis"):
		return args[1], true
	case len(args) == 3 && args[0] == "command" && (args[1] == "-v" || args[1] == "-V"):
		return args[2], true
	case len(args) == 3 && args[0] == "type" && (args[1] == "-P" || args[1] == "-p"):
		return args[2], true
	}
	return "", false
}

// sourceText prints a node as written, cut to maxText.
func sourceText(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, n); err != nil {
		return "?"
	}
	s := b.String()
	if len(s) > maxText {
		s = s[:maxText] + "…"
	}
	return s
}

// unescape removes the backslashes of an unquoted literal (\r m → rm) and
// its line continuations.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeQuoted removes the backslashes a double-quoted string gives a
// meaning to: before $ ` " \ and newline.
func unescapeQuoted(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes the common escapes of a $'…' string.
func ansiC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	r := strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`, `\'`, `'`, `\"`, `"`, `\e`, "\x1b")
	return r.Replace(s)
}
