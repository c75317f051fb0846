package main

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// version is the hookwatch version, set at build time with
// -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func init() {
	register(command{
		name:    "version",
		summary: "print hookwatch's version (also --version)",
		run:     runVersion,
	})
}

// versionFlagSet defines version's flags, none: the one definition
// runVersion parses and the docs' command lines are checked against.
func versionFlagSet(stdout, stderr io.Writer) *flag.FlagSet {
	return newFlagSet("version", "version\n\nPrints the version of this hookwatch binary: hookwatch "+version+".", stdout, stderr)
}

// runVersion is `hookwatch version` (and --version, -version).
func runVersion(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := versionFlagSet(stdout, stderr)
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "hookwatch %s\n", version)
	return err
}
