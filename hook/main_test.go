package hook

import (
	"errors"
	"flag"
	"io"
	"testing"
)

// TestParseArgsAsFlag: parseArgs reads the hook's command line as package
// flag read it, which the hook no longer links: the same runtime, version,
// help and failure for each command line.
func TestParseArgsAsFlag(t *testing.T) {
	for _, args := range [][]string{
		nil, {}, {"--runtime", "codex"}, {"-runtime", "codex"}, {"--runtime=codex"}, {"-runtime=claude-code"},
		{"--runtime="}, {"--runtime"}, {"-h"}, {"--help"}, {"-help=x"}, {"--bogus"}, {"--runtime", "codex", "--bogus"},
		{"---runtime", "codex"}, {"-=x"}, {"--", "--runtime", "codex"}, {"PreToolUse", "--runtime", "codex"},
		{"-", "--runtime", "codex"}, {"--runtime", "codex", "extra"}, {"--runtime", "codex", "--runtime", "x"},
		{"-runtime", "-h"}, {"--runtime", "--"}, {""}, {"-"},
		{"--version"}, {"-version"}, {"--version=false"}, {"--version=x"}, {"--version", "--runtime", "codex"},
		{"--runtime", "codex", "--version", "extra"}, {"--version", "-h"},
	} {
		fs := flag.NewFlagSet("hook", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		want := fs.String("runtime", "", "")
		wantVersion := fs.Bool("version", false, "")
		werr := fs.Parse(args)
		wantHelp := errors.Is(werr, flag.ErrHelp)
		got, help, version, err := parseArgs(args)
		if help != wantHelp || (err != nil) != (werr != nil && !wantHelp) || !help && (got != *want || werr == nil && version != *wantVersion) {
			t.Errorf("%q: parseArgs = %q, help %v, version %v, %v; flag: %q, %v, %v", args, got, help, version, err, *want, *wantVersion, werr)
		}
	}
}
