package main

import (
	"context"
	"fmt"
	"io"

	"github.com/hookwatch/hookwatch/audit"
)

func init() {
	register(command{
		name:    "audit",
		summary: "verify an audit trail: audit verify DIR|FILE…",
		run:     runAudit,
	})
}

// runAudit is `hookwatch audit verify PATH…`: one line per stream, exit
// status 1 when any stream has a problem or any path cannot be verified.
func runAudit(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit", "audit verify DIR|FILE…\n\n"+
		"Checks the hash chain of audit trails (an audit directory, a session's directory, or one\n"+
		"file) and reports, per stream, the first line altered, removed or reordered, a file cut\n"+
		"short, or OK with the number of lines and the hash of the last one (keep it elsewhere to\n"+
		"detect later that lines were cut off at the end).", stdout, stderr)
	usageTrailer(fs, "Examples:\n"+
		"  hookwatch audit verify ~/hookwatch-audit          # every session's trail; exit 1 when a stream fails\n"+
		"  hookwatch audit verify trail/<session>/events.jsonl\n")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 || fs.Arg(0) != "verify" {
		fs.Usage()
		return fmt.Errorf("%w: want audit verify DIR|FILE…", errUsage)
	}
	// Flags may follow the subcommand: audit verify --help.
	if err := parseFlags(fs, fs.Args()[1:]); err != nil {
		return err
	}
	paths := fs.Args()
	if len(paths) == 0 {
		return fmt.Errorf("%w: audit verify needs a directory or a file", errUsage)
	}
	failed := false
	for _, p := range paths {
		reports, err := audit.Verify(p)
		if err != nil {
			// A path mistyped or unreadable must not keep the verdict on
			// the others from being told: it is one more failure.
			fmt.Fprintf(stderr, "hookwatch: %v\n", err)
			failed = true
			continue
		}
		for _, r := range reports {
			fmt.Fprintln(stdout, audit.Summary(r))
			failed = failed || r.Problem != nil
		}
	}
	if failed {
		return exitError{1}
	}
	return nil
}
