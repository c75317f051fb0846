package hook

import (
	"errors"
	"flag"
	"io"
	"testing"
)

// TestParseArgsAsFlag: parseArgs reads the hook's command line as package
// flag read it, which the hook no longer links: the same runtime, help and
// failure for each command line.
func TestParseArgsAsFlag(t *testing.T) {
	for _, args := range [][]string{
		nil, {}, {"--runtime", "codex"}, {"-runtime", "codex"}, {"--runtime=codex"}, {"-runtime=claude-code"},
		{"--runtime="}, {"--runtime"}, {"-h"}, {"--help"}, {"-help=x"}, {"--bogus"}, {"--runtime", "codex", "--bogus"},
		{"---runtime", "codex"}, {"-=x"}, {"--", "--runtime", "codex"}, {"PreToolUse", "--runtime", "codex"},
		{"-", "--runtime", "codex"}, {"--runtime", "codex", "extra"}, {"--runtime", "codex", "--runtime", "x"},
		{"-runtime", "-h"}, {"--runtime", "--"}, {""}, {"-"},
	} {
		fs := flag.NewFlagSet("hook", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		want := fs.String("runtime", "", "")
		werr := fs.Parse(args)
		wantHelp := errors.Is(werr, flag.ErrHelp)
		got, help, err := parseArgs(args)
		if help != wantHelp || (err != nil) != (werr != nil && !wantHelp) || !help && got != *want {
			t.Errorf("%q: parseArgs = %q, help %v, %v; flag: %q, %v", args, got, help, err, *want, werr)
		}
	}
}
