package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docCommand is one hookwatch command line of the docs: the words after
// hookwatch (or go run ./cmd/hookwatch), where the docs show it.
type docCommand struct {
	file string
	line int
	args []string
}

func (c docCommand) String() string {
	return fmt.Sprintf("%s:%d: hookwatch %s", c.file, c.line, strings.Join(c.args, " "))
}

// docCommands reads the hookwatch command lines of every shell block
// (```sh, ```bash) of README.md and docs/*.md: the one reader of the docs'
// shell blocks. A line continued by a trailing \ is joined to the next; a
// # that starts a word starts a comment; a command is found at the start
// of the line and after &&, ||, ;, | and $( (and past the VAR=value
// assignments before it).
func docCommands(t *testing.T) []docCommand {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "..", "README.md"))
	var out []docCommand
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.ToSlash(strings.TrimPrefix(file, filepath.Join("..", "..")+string(filepath.Separator)))
		inShell, joined, start := false, "", 0
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if strings.HasPrefix(line, "```") {
				inShell = !inShell && (line == "```sh" || line == "```bash")
				joined = ""
				continue
			}
			if !inShell {
				continue
			}
			if joined == "" {
				start = n
			}
			if cont, ok := strings.CutSuffix(line, `\`); ok {
				joined += cont + " "
				continue
			}
			for _, args := range shellCommands(joined + line) {
				out = append(out, docCommand{name, start, args})
			}
			joined = ""
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// assignment is a shell word that sets a variable for the command after it.
var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// shellCommands returns the arguments of each hookwatch command in a shell
// line, as the shell splits them into words (quotes removed, a $VAR left
// as it is written: a value).
func shellCommands(line string) [][]string {
	var cmds [][]string
	for _, words := range shellSegments(line) {
		for len(words) > 0 && assignment.MatchString(words[0]) {
			words = words[1:]
		}
		switch {
		case len(words) > 0 && words[0] == "hookwatch":
			cmds = append(cmds, words[1:])
		case len(words) > 2 && words[0] == "go" && words[1] == "run" && strings.TrimSuffix(words[2], "/") == "./cmd/hookwatch":
			cmds = append(cmds, words[3:])
		}
	}
	return cmds
}

// shellSegments splits a line into the words of each simple command,
// leaving out comments and redirections (< FILE, > FILE, 2>&1). A <word>
// is a placeholder, a value.
func shellSegments(line string) [][]string {
	var segs [][]string
	var words []string
	var word strings.Builder
	inWord, redirect := false, false
	endWord := func() {
		if !inWord {
			return
		}
		switch w := word.String(); {
		case redirect:
			redirect = false
		case w == "<" || w == ">" || w == ">>" || w == "2>" || w == "&>":
			redirect = true
		case strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") || strings.HasPrefix(w, "<") && !strings.HasSuffix(w, ">"):
			// >FILE, 2>&1, <FILE: the redirection and its target in one word.
		default:
			words = append(words, w)
		}
		word.Reset()
		inWord = false
	}
	endSeg := func() {
		endWord()
		if len(words) > 0 {
			segs = append(segs, words)
		}
		words = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			// A quoted part of the word, up to the same quote (or the
			// line's end): its spaces and other quotes are the word's.
			// Between double quotes, as in the shell, a backslash
			// escapes ", \, $ and ` and is kept before anything else;
			// between single quotes it is a backslash.
			inWord = true
			for i++; i < len(line) && line[i] != c; i++ {
				if c == '"' && line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				word.WriteByte(line[i])
			}
		case c == '\\' && i+1 < len(line):
			word.WriteByte(line[i+1])
			inWord, i = true, i+1
		case c == '#' && !inWord:
			endSeg()
			return segs
		case c == ' ' || c == '\t':
			endWord()
		case c == ';' || c == '|' || c == '&' || c == ')' || c == '`':
			endSeg()
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			endSeg()
			i++
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endSeg()
	return segs
}

// devNull is where a flag set of the check writes its usage.
var devNull = io.Discard

// argsParse is how a command parses its arguments with its flag set fs:
// an error for what it refuses before it does anything.
type argsParse func(fs *flag.FlagSet, args []string) error

// noArgs is the parse of a command that takes no argument besides its
// flags (parseFlagsNoArgs).
var noArgs argsParse = parseFlagsNoArgs

// nArgs is the parse of a command whose flags may follow its arguments
// (parseInterleaved), taking n of them, or any number for n < 0.
func nArgs(n int) argsParse {
	return func(fs *flag.FlagSet, args []string) error {
		rest, err := parseInterleaved(fs, args)
		if err == nil && n >= 0 && len(rest) != n {
			err = fmt.Errorf("takes %s, got %d", counted(n, "argument"), len(rest))
		}
		return err
	}
}

// upTo is the parse of a command whose flags may follow its arguments,
// taking n of them at most.
func upTo(n int) argsParse {
	return func(fs *flag.FlagSet, args []string) error {
		rest, err := parseInterleaved(fs, args)
		if err == nil && len(rest) > n {
			err = fmt.Errorf("takes %s at most, got %d", counted(n, "argument"), len(rest))
		}
		return err
	}
}

// docParsers are the flag set each command, and each subcommand, the docs
// may show parses (its ...FlagSet function, the one the command calls) and
// how it parses its arguments, as its run function does.
var docParsers = map[string]func() (*flag.FlagSet, argsParse){
	"audit verify": func() (*flag.FlagSet, argsParse) {
		return auditFlagSet(devNull, devNull), func(fs *flag.FlagSet, args []string) error {
			err := parseFlags(fs, args)
			if err == nil && fs.NArg() == 0 { // as runAudit refuses
				err = errors.New("audit verify needs a directory or a file")
			}
			return err
		}
	},
	"export":       func() (*flag.FlagSet, argsParse) { fs, _ := exportFlagSet(devNull, devNull); return fs, noArgs },
	"policy check": func() (*flag.FlagSet, argsParse) { return policyCheckFlagSet(devNull, devNull), nArgs(-1) },
	"policy test": func() (*flag.FlagSet, argsParse) {
		fs, _, _, _ := policyTestFlagSet(devNull, devNull)
		return fs, nArgs(1)
	},
	"policy explain": func() (*flag.FlagSet, argsParse) {
		fs, _, _ := policyExplainFlagSet(devNull, devNull)
		return fs, upTo(1)
	},
	"service": func() (*flag.FlagSet, argsParse) {
		fs, _, _ := serviceFlagSet(devNull, devNull)
		return fs, func(fs *flag.FlagSet, args []string) error {
			rest, err := parseInterleaved(fs, args)
			if err == nil && (len(rest) != 1 || !slices.Contains(serviceActions[:], rest[0])) {
				err = fmt.Errorf("takes one action of %q, got %q", serviceActions, rest)
			}
			return err
		}
	},
	"statusline": func() (*flag.FlagSet, argsParse) { fs, _ := statuslineFlagSet(devNull, devNull); return fs, noArgs },
	"uninstall":  func() (*flag.FlagSet, argsParse) { fs, _, _ := uninstallFlagSet(devNull, devNull); return fs, noArgs },
	"version":    func() (*flag.FlagSet, argsParse) { return versionFlagSet(devNull, devNull), noArgs },
	"demo":       func() (*flag.FlagSet, argsParse) { fs, _ := demoFlagSet(devNull, devNull); return fs, noArgs },
	"doctor":     func() (*flag.FlagSet, argsParse) { fs, _ := doctorFlagSet(devNull, devNull); return fs, noArgs },
	"forward": func() (*flag.FlagSet, argsParse) {
		fs, _ := forwardFlagSet(devNull, devNull, os.Getenv)
		return fs, noArgs
	},
	"import":   func() (*flag.FlagSet, argsParse) { fs, _ := importFlagSet(devNull, devNull); return fs, nArgs(-1) },
	"install":  func() (*flag.FlagSet, argsParse) { fs, _ := installFlagSet(devNull, devNull); return fs, noArgs },
	"prune":    func() (*flag.FlagSet, argsParse) { fs, _ := pruneFlagSet(devNull, devNull); return fs, noArgs },
	"serve":    func() (*flag.FlagSet, argsParse) { fs, _ := serveFlagSet(devNull, devNull); return fs, noArgs },
	"sessions": func() (*flag.FlagSet, argsParse) { fs, _ := sessionsFlagSet(devNull, devNull); return fs, noArgs },
	"sessions diff": func() (*flag.FlagSet, argsParse) {
		fs, _, _ := sessionsDiffFlagSet(devNull, devNull)
		return fs, nArgs(2)
	},
	"stop":         func() (*flag.FlagSet, argsParse) { return stopFlagSet(devNull, devNull), noArgs },
	"token create": func() (*flag.FlagSet, argsParse) { fs, _ := tokenCreateFlagSet(devNull, devNull); return fs, noArgs },
	"token list":   func() (*flag.FlagSet, argsParse) { fs, _, _ := tokenListFlagSet(devNull, devNull); return fs, noArgs },
	"token revoke": func() (*flag.FlagSet, argsParse) {
		fs, _ := tokenRevokeFlagSet(devNull, devNull)
		return fs, func(fs *flag.FlagSet, args []string) error {
			err := parseFlags(fs, args)
			if err == nil && fs.NArg() != 1 {
				err = fmt.Errorf("takes one token ID, got %s", counted(fs.NArg(), "argument"))
			}
			return err
		}
	},
}

// checkDocCommand returns why hookwatch would refuse the command line c,
// or nil: its subcommand exists, and its parse accepts its flags, each
// flag that takes a value given one, and its number of arguments.
func checkDocCommand(c docCommand) error {
	if len(c.args) == 0 {
		return errors.New("no subcommand")
	}
	name := c.args[0]
	if _, ok := commands[name]; !ok {
		return fmt.Errorf("%q is not a subcommand", name)
	}
	key, args := name, c.args[1:]
	if len(args) > 0 && docParsers[name+" "+args[0]] != nil {
		key, args = name+" "+args[0], args[1:]
	} else if subs := subcommandsOf(name); subs != nil && docParsers[name] == nil {
		return fmt.Errorf("%s takes a subcommand, one of %q", name, subs)
	}
	flags := docParsers[key]
	if flags == nil {
		return fmt.Errorf("%s: the test reaches no flag set of it: give it a flag set function, as serveFlagSet, and add it to docParsers", strings.Join(c.args[:min(2, len(c.args))], " "))
	}
	fs, parse := flags()
	if err := parse(fs, args); err != nil {
		return err
	}
	return valuesGiven(fs, args)
}

// subcommandsOf returns the subcommands of name that docParsers knows, nil
// for a command without any.
func subcommandsOf(name string) []string {
	var subs []string
	for key := range docParsers {
		if sub, ok := strings.CutPrefix(key, name+" "); ok {
			subs = append(subs, sub)
		}
	}
	slices.Sort(subs)
	return subs
}

// valuesGiven reports a flag of fs that takes a value given another flag
// in its place (--url --token x): the flag package takes "--token" for the
// URL. A lone - is a value (--token - reads stdin).
func valuesGiven(fs *flag.FlagSet, args []string) error {
	for i, a := range args {
		if a == "--" {
			return nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		f := fs.Lookup(name) // nil for --name=value, which has its value
		if f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) && strings.HasPrefix(args[i+1], "-") && args[i+1] != "-" {
			return fmt.Errorf("--%s takes a value, not %s", name, args[i+1])
		}
	}
	return nil
}

// TestDocsCommands: every hookwatch command line a shell block of the docs
// shows is one hookwatch accepts: its subcommand exists, and the flags the
// subcommand defines, and the number of arguments it takes, are those the
// line gives.
func TestDocsCommands(t *testing.T) {
	cmds := docCommands(t)
	if len(cmds) < 20 {
		t.Fatalf("found %d hookwatch command lines in the docs' shell blocks: the reader no longer reads them", len(cmds))
	}
	for _, c := range cmds {
		if err := checkDocCommand(c); err != nil {
			t.Errorf("%v: %v", c, err)
		}
	}
}

// TestDocParsersCoverEveryCommand: every command a person runs (the hook's
// arguments are the agent's) has its flags in docParsers, so that a doc
// line of any is checked; and every subcommand of theirs is one the
// command runs.
func TestDocParsersCoverEveryCommand(t *testing.T) {
	for name := range commands {
		if name != "hook" && docParsers[name] == nil && subcommandsOf(name) == nil {
			t.Errorf("hookwatch %s: not in docParsers", name)
		}
	}
	for key := range docParsers {
		path := strings.Fields(key)
		if _, ok := commands[path[0]]; !ok {
			t.Errorf("docParsers: %q is not a subcommand", path[0])
			continue
		}
		// The command answers --help of a subcommand it has, and refuses
		// one it has not.
		if _, _, err := hw(t, "", append(path, "--help")...); err != nil && !errors.Is(err, flag.ErrHelp) {
			t.Errorf("hookwatch %s --help: %v", key, err)
		}
	}
	if _, _, err := hw(t, "", "token", "nonesuch"); err == nil {
		t.Error("hookwatch token nonesuch: no error")
	}
}

// TestHelpExamplesAccepted: the examples of each command's --help are, as
// the docs' command lines are, command lines the command accepts.
func TestHelpExamplesAccepted(t *testing.T) {
	seen := 0
	for key := range docParsers {
		help, _, err := hw(t, "", append(strings.Fields(key), "--help")...)
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("hookwatch %s --help: %v", key, err)
		}
		examples := false // in the examples, indented under a line "Example…:"
		for i, line := range strings.Split(help, "\n") {
			switch {
			case strings.HasPrefix(line, "Example"):
				examples = true
				continue
			case line != "" && !strings.HasPrefix(line, " "):
				examples = false
			}
			if !examples {
				continue
			}
			for _, args := range shellCommands(strings.TrimSpace(line)) {
				seen++
				c := docCommand{"hookwatch " + key + " --help", i + 1, args}
				if err := checkDocCommand(c); err != nil {
					t.Errorf("%v: %v", c, err)
				}
			}
		}
	}
	if seen < 10 {
		t.Fatalf("found %d command lines in the examples of --help: the reader no longer reads them", seen)
	}
}

// TestDocsServeBeyondLoopbackOverTLS: every 'hookwatch serve' a shell
// block of the docs shows that listens beyond loopback, where the tokens
// and the events cross the network, serves TLS (TestDocsCommands holds it
// to serve's flags).
func TestDocsServeBeyondLoopbackOverTLS(t *testing.T) {
	seen := 0
	for _, c := range docCommands(t) {
		if c.args[0] != "serve" {
			continue
		}
		seen++
		fs, sf := serveFlagSet(io.Discard, io.Discard)
		if err := parseFlagsNoArgs(fs, c.args[1:]); err != nil {
			t.Errorf("%v: %v, not what serve accepts", c, err)
			continue
		}
		host, _, err := net.SplitHostPort(*sf.addr)
		if err != nil {
			t.Errorf("%v: --addr %s: %v", c, *sf.addr, err)
			continue
		}
		ip := net.ParseIP(host)
		loopback := host == "localhost" || ip != nil && ip.IsLoopback()
		if !loopback && (*sf.tlsCert == "" || *sf.tlsKey == "") {
			t.Errorf("%v: listens beyond loopback over plain HTTP: the tokens would cross the network in clear text; show --tls-cert and --tls-key", c)
		}
	}
	if seen == 0 {
		t.Fatal("no 'hookwatch serve' in a shell block of the docs")
	}
}

// TestShellCommands: the reader finds hookwatch where the shell runs it,
// and nowhere else, with the words the shell would pass it.
func TestShellCommands(t *testing.T) {
	for line, want := range map[string][][]string{
		"hookwatch doctor   # checks # the setup":                      {{"doctor"}},
		"HOOKWATCH_DB= HOOKWATCH_RETAIN=90d hookwatch service install": {{"service", "install"}},
		"go run ./cmd/hookwatch serve --addr :7421":                    {{"serve", "--addr", ":7421"}},
		"cd x && hookwatch stop; hookwatch token list | jq .":          {{"stop"}, {"token", "list"}},
		"echo $(hookwatch sessions --json) done":                       {{"sessions", "--json"}},
		"hookwatch install --token - < ann.token 2>&1":                 {{"install", "--token", "-"}},
		"hookwatch token revoke <id> '#1' $ID":                         {{"token", "revoke", "<id>", "#1", "$ID"}},
		`hookwatch policy test 'a b' "c  d" ''`:                        {{"policy", "test", "a b", "c  d", ""}},
		`hookwatch policy test 'it"s' "it's"`:                          {{"policy", "test", `it"s`, "it's"}},
		`hookwatch policy test --x='a b'"c d"e\ f`:                     {{"policy", "test", "--x=a bc de f"}},
		`hookwatch policy test 'a b`:                                   {{"policy", "test", "a b"}},
		`hookwatch policy test "a \"b\" \\ \$c \x" 'd\'`:               {{"policy", "test", `a "b" \ $c \x`, `d\`}},
		"sudo -u postgres createdb --owner hookwatch hookwatch":        nil,
		"go install ./cmd/hookwatch ./cmd/hookwatch-hook":              nil,
		"# hookwatch serve":                                            nil,
	} {
		if got := shellCommands(line); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %q, want %q", line, got, want)
		}
	}
	fs, _ := installFlagSet(devNull, devNull)
	if err := valuesGiven(fs, []string{"--url", "--token-file", "ann.token"}); err == nil {
		t.Error("install --url --token-file ann.token: --url given no value, not refused")
	}
	if err := valuesGiven(fs, []string{"--dry-run", "--token", "-", "--url=http://x"}); err != nil {
		t.Errorf("install --dry-run --token - --url=http://x: %v", err)
	}
}
