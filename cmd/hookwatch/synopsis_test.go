package main

import (
	"errors"
	"flag"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestSynopsisNamesFlags: the synopsis of every command a person runs, and
// of each subcommand (those of docParsers, the one table of them), names
// every flag the command defines, as --name, but for the few left out on
// purpose; so a flag added is not forgotten there.
func TestSynopsisNamesFlags(t *testing.T) {
	// Flags a synopsis leaves out, with why.
	omitted := map[string]string{
		"uninstall --codex-bin": "install's flag, accepted and ignored so that an install's command line can be reused",
		"sessions --cwd":        "--project's other name, kept for the command lines that use it",
	}
	flagLine := regexp.MustCompile(`(?m)^  -([A-Za-z][\w-]*)(?: |$)`)
	var paths [][]string
	for name := range commands {
		if name == "hook" { // the hook's arguments are Claude Code's, not a person's
			continue
		}
		paths = append(paths, []string{name})
		for _, sub := range subcommandsOf(name) { // those with flag sets of their own
			paths = append(paths, []string{name, sub})
		}
	}
	for _, path := range paths {
		cmd := strings.Join(path, " ")
		out, _, err := hw(t, "", append(slices.Clone(path), "--help")...)
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			t.Errorf("hookwatch %s --help: %v", cmd, err)
			continue
		}
		synopsis, _, _ := strings.Cut(out, "\n\n")
		flags := flagLine.FindAllStringSubmatch(out, -1)
		if cmd == "serve" && len(flags) < 20 {
			t.Fatalf("found %d flags in serve --help: the test no longer reads the flag list:\n%s", len(flags), out)
		}
		for _, m := range flags {
			name := m[1]
			if _, ok := omitted[cmd+" --"+name]; ok {
				continue
			}
			if !regexp.MustCompile(`--` + regexp.QuoteMeta(name) + `\b(?:[^-]|$)`).MatchString(synopsis) {
				t.Errorf("the synopsis of hookwatch %s does not name --%s:\n%s", cmd, name, synopsis)
			}
		}
	}
}

// TestHelpKeepsTheDatabaseURLOffTheCommandLine: no example of any --help
// passes the database by --db from HOOKWATCH_DB or as a postgres:// URL:
// such a URL holds the password, which an argument shows in ps to every
// user of the machine, while the commands read HOOKWATCH_DB themselves.
func TestHelpKeepsTheDatabaseURLOffTheCommandLine(t *testing.T) {
	leak := regexp.MustCompile(`--db[ =]+["']?(?:\$\{?HOOKWATCH_DB|postgres(?:ql)?://)`)
	for name := range commands {
		if name == "hook" {
			continue
		}
		out, _, err := hw(t, "", name, "--help")
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			t.Errorf("hookwatch %s --help: %v", name, err)
			continue
		}
		for _, line := range strings.Split(out, "\n") {
			if leak.MatchString(line) {
				t.Errorf("hookwatch %s --help shows the database URL passed on the command line:\n%s", name, line)
			}
		}
	}
}
