package main

import (
	"context"
	"flag"
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

// auditFlagSet defines the flags of audit verify, none: the one definition
// runAudit parses and the docs' command lines are checked against.
func auditFlagSet(stdout, stderr io.Writer) *flag.FlagSet {
	fs := newFlagSet("audit", "audit verify DIR|FILE…\n\n"+
		"Checks the hash chain of audit trails (an audit directory, a session's directory, or one\n"+
		"file) and reports, per stream, the first line altered, removed or reordered, a file cut\n"+
		"short, or OK with the number of lines and the hash of the last one (keep it elsewhere to\n"+
		"detect later that lines were cut off at the end). A stream with no line is EMPTY: it\n"+
		"proves nothing. A stream whose oldest segments serve --audit-retain pruned starts from\n"+
		"the hash the prune recorded, and OK says which lines were pruned (docs/audit.md).\n\n"+
		"Exit status: 0 every stream verified; 1 a stream failed, a path cannot be verified, or\n"+
		"a path holds no line to verify (only EMPTY streams); 2 a usage error.", stdout, stderr)
	usageTrailer(fs, "Examples:\n"+
		"  hookwatch audit verify ~/hookwatch-audit          # every session's trail; exit 1 when a stream fails\n"+
		"  hookwatch audit verify trail/<session>/events.jsonl\n")
	return fs
}

// runAudit is `hookwatch audit verify PATH…`: one line per stream, exit
// status 1 when any stream has a problem, any path cannot be verified, or
// a path's streams hold no line at all. An empty stream proves nothing (a
// file emptied looks like one never written to): it is told as EMPTY, and
// passes only beside a stream of the same path that verified lines (a
// session that made no tool call has an empty tool_calls.jsonl).
func runAudit(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := auditFlagSet(stdout, stderr)
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
		verified := false
		for _, r := range reports {
			fmt.Fprintln(stdout, audit.Summary(r))
			failed = failed || r.Problem != nil
			verified = verified || !r.Empty()
		}
		if !verified {
			fmt.Fprintf(stderr, "hookwatch: nothing verified in %s: its audit trail holds no line (an empty file proves nothing: it may have been emptied)\n", p)
			failed = true
		}
	}
	if failed {
		return exitError{1}
	}
	return nil
}
