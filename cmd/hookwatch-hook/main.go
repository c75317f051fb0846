// Command hookwatch-hook is the lean twin of `hookwatch hook`: the same code,
// linked without the server, the store and their dependencies. Go runs the
// init of every linked package on each start, and the hook starts once per
// agent event, so this binary is what `hookwatch install` registers when it
// sits beside hookwatch. Its dependencies are listed in depaware.txt.
package main

import (
	"context"
	"os"

	"github.com/hookwatch/hookwatch/hook"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	// No in-process policy engine: see hook.Config.Decide.
	os.Exit(hook.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv, version, nil))
}
