// Command hookwatch watches and steers AI coding agents through their hooks.
//
// Each subcommand lives in its own file and registers itself with register; main
// only maps the returned error to an exit code. The hook subcommand is the one
// exception to "errors exit non-zero": it must never break the agent.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/hookwatch/hookwatch/internal/nearest"
)

// command is one subcommand of the hookwatch binary.
type command struct {
	name    string
	summary string // one line for the top-level help
	// run executes the subcommand. args excludes the subcommand name.
	run func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

// register adds a subcommand; each subcommand file calls it from init, which
// only inserts into a map so that the hook path pays nothing for it.
func register(c command) { commands[c.name] = c }

// errUsage marks an error caused by bad arguments: exit code 2.
var errUsage = errors.New("usage error")

// interruptedError is a run a signal (Ctrl-C, SIGTERM) cut short: exit
// status 128 plus the signal's number (130 for SIGINT, 143 for SIGTERM),
// as a shell reports a process the signal ended, so that a script never
// takes what it did for the whole. Its text says what was done before the
// stop. A command whose end is the signal (serve, forward) returns
// context.Canceled instead: exit status 0.
type interruptedError struct{ done string }

func (e interruptedError) Error() string { return "interrupted: " + e.done }

// caught is the signal that asked the command to stop, 0 before one did.
var caught atomic.Int32

// interruptedStatus is the exit status of a run the caught signal cut
// short: 130 when none was caught (a context canceled otherwise, as
// Ctrl-C's).
func interruptedStatus() int {
	if s := caught.Load(); s != 0 {
		return 128 + int(s)
	}
	return 128 + int(syscall.SIGINT)
}

// exitError carries a specific exit code without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal asks the command to end cleanly; the next one
		// ends the process, as it would have without Notify, should the
		// command be stuck where ctx does not reach (an open or a read of
		// a FIFO no one writes).
		sig := <-sigs
		if s, ok := sig.(syscall.Signal); ok {
			caught.Store(int32(s))
		}
		signal.Stop(sigs)
		cancel()
	}()
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode maps the error of a subcommand to the process exit code, printing it.
func exitCode(err error, stderr io.Writer) int {
	var ee exitError
	var ie interruptedError
	switch {
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "hookwatch: %v\n", err)
		return interruptedStatus()
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, errorLine(err))
		return 2
	default:
		fmt.Fprintln(stderr, errorLine(err))
		return 1
	}
}

// run dispatches to the subcommand named by args[0].
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return fmt.Errorf("%w: missing subcommand", errUsage)
	}
	switch {
	case args[0] == "help" && len(args) > 1:
		// help COMMAND is COMMAND --help.
		c, ok := commands[args[1]]
		if !ok {
			if near := nearestCommand(args[1]); near != "" {
				return fmt.Errorf("%w: no help for %q: it is not a subcommand; did you mean %q?", errUsage, args[1], near)
			}
			usage(stderr)
			return fmt.Errorf("%w: no help for %q: it is not a subcommand", errUsage, args[1])
		}
		return c.run(ctx, []string{"--help"}, stdin, stdout, stderr)
	case slices.Contains(helpArgs[:], args[0]):
		usage(stdout)
		return nil
	case args[0] == "-version" || args[0] == "--version" || args[0] == "-v":
		return runVersion(ctx, args[1:], stdin, stdout, stderr)
	}
	c, ok := commands[args[0]]
	if !ok {
		if near := nearestCommand(args[0]); near != "" {
			// A slip of the fingers: the one name it was meant for says
			// more than the list of all of them.
			return fmt.Errorf("%w: unknown subcommand %q; did you mean %q? ('hookwatch help' lists them all)", errUsage, args[0], near)
		}
		usage(stderr)
		return fmt.Errorf("%w: unknown subcommand %q", errUsage, args[0])
	}
	return c.run(ctx, args[1:], stdin, stdout, stderr)
}

// nearestCommand returns the subcommand name is a slip of (two edits or
// fewer: a letter missing, extra, wrong, or two swapped; one for a short
// name), the first in alphabetical order when two are as near, or "" for
// none.
func nearestCommand(name string) string {
	return nearest.Name(name, maps.Keys(commands))
}

// helpArgs ask a command with subcommands for its usage.
var helpArgs = [...]string{"-h", "-help", "--help", "help"}

// subcommand is one subcommand of a command that has several.
type subcommand struct {
	name string
	run  func(args []string) error
}

// runSubcommand runs the subcommand of command that args[0] names, as run
// does for commands: usage goes to stdout when asked for, and to stderr
// with a usage error when args name none of subs.
func runSubcommand(command, usage string, args []string, stdout, stderr io.Writer, subs ...subcommand) error {
	if len(args) == 0 {
		io.WriteString(stderr, usage)
		return fmt.Errorf("%w: missing %s subcommand", errUsage, command)
	}
	if slices.Contains(helpArgs[:], args[0]) {
		io.WriteString(stdout, usage)
		return nil
	}
	names := make([]string, len(subs))
	for i, sub := range subs {
		if sub.name == args[0] {
			return sub.run(args[1:])
		}
		names[i] = sub.name
	}
	io.WriteString(stderr, usage)
	want := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	return fmt.Errorf("%w: unknown %s subcommand %q (want %s)", errUsage, command, args[0], want)
}

func usage(w io.Writer) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("hookwatch watches and steers AI coding agents through their hooks.\n\nUsage:\n  hookwatch <command> [flags]\n\nCommands:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-12s %s\n", n, commands[n].summary)
	}
	b.WriteString("\nRun 'hookwatch <command> --help' for a command's flags.\n")
	io.WriteString(w, b.String())
}

// newFlagSet returns a flag set that reports errors instead of exiting.
// Its usage, the synopsis then the flags, goes to stdout when asked for
// (--help: the answer, to page or grep) and to stderr with a usage error.
func newFlagSet(name, synopsis string, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	out := &flagOutput{stdout: stdout, stderr: stderr}
	out.synopsis, _, _ = strings.Cut("Usage: hookwatch "+synopsis, "\n\n")
	out.usage = func(w io.Writer) {
		if !hasFlags(fs) {
			fmt.Fprintf(w, "Usage: hookwatch %s\n%s", synopsis, out.trailer)
			return
		}
		fmt.Fprintf(w, "Usage: hookwatch %s\n\n", synopsis)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(out)
		io.WriteString(w, out.trailer)
	}
	fs.SetOutput(out)
	fs.Usage = func() { out.usage(stderr) }
	return fs
}

// flagOutput is the output of a flag set of newFlagSet. What the flag
// package writes to it is dropped: a bad flag's error is printed once,
// after the synopsis (parseFlags), by the caller of run (exitCode).
type flagOutput struct {
	stdout   io.Writer
	stderr   io.Writer
	synopsis string          // the usage's first paragraph
	usage    func(io.Writer) // prints the usage
	trailer  string          // what the usage ends with (usageTrailer)
	quiet    bool            // a bad flag prints nothing (quietFlagErrors)
}

// quietFlagErrors makes a bad flag of fs, a flag set of newFlagSet, print
// nothing: parseFlags still returns its error, and --help still prints.
func quietFlagErrors(fs *flag.FlagSet) {
	fs.Output().(*flagOutput).quiet = true
}

func (*flagOutput) Write(p []byte) (int, error) { return len(p), nil }

// usageTrailer ends the usage of fs, a flag set of newFlagSet, with text.
func usageTrailer(fs *flag.FlagSet, text string) {
	fs.Output().(*flagOutput).trailer = text
}

// printHelp prints the usage of fs, a flag set of newFlagSet, where --help
// prints it.
func printHelp(fs *flag.FlagSet) {
	out := fs.Output().(*flagOutput)
	out.usage(out.stdout)
}

// parseFlags parses args and wraps a bad flag as a usage error, after
// the synopsis and where to read the flags (the whole list would push
// the error a screen away from the command that caused it); a flag that
// is a slip of one of fs's is named in the error. --help prints the
// usage to stdout (printHelp) and returns flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	usage := fs.Usage
	fs.Usage = func() {} // the synopsis is printed below, where it belongs
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		printHelp(fs)
		return err
	default:
		if out := fs.Output().(*flagOutput); !out.quiet {
			hint := "Run 'hookwatch %s --help' for its flags."
			if !hasFlags(fs) {
				hint = "It takes no flags: run 'hookwatch %s --help' for what it does."
			}
			fmt.Fprintf(out.stderr, "%s\n"+hint+"\n", out.synopsis, fs.Name())
		}
		if near := nearestFlag(fs, err); near != "" {
			return fmt.Errorf("%w: %v; did you mean --%s?", errUsage, err, near)
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
}

// hasFlags reports whether fs defines any flag.
func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// nearestFlag returns the flag of fs that the undefined flag err reports
// is a slip of, or "" when err is another error or the flag none's.
func nearestFlag(fs *flag.FlagSet, err error) string {
	// The flag package says so only in words.
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return nearest.Name(strings.TrimPrefix(name, "-"), slices.Values(names))
}

// flagSet reports whether the flag name was given on the command line,
// rather than left at its default.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parseInterleaved is parseFlags for a subcommand whose flags may also
// follow its arguments (A B --json): the arguments are fs.Args() after.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return rest, nil
		}
		if args[0] == "--" {
			return append(rest, args[1:]...), nil
		}
		rest, args = append(rest, args[0]), args[1:]
	}
}

// parseFlagsNoArgs is parseFlags for subcommands that take no arguments
// besides their flags.
func parseFlagsNoArgs(fs *flag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}

// counted is n and noun, plural unless n is 1: "1 session", "2 sessions".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
