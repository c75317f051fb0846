package main

import (
	"context"
	"io"
	"os"

	"github.com/hookwatch/hookwatch/doctor"
	"github.com/hookwatch/hookwatch/policy"
)

func init() {
	register(command{
		name:    "doctor",
		summary: "check the installation end to end and say how to fix what is wrong",
		run:     runDoctor,
	})
}

// runDoctor is `hookwatch doctor`: exit status 1 when a check failed.
func runDoctor(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("doctor", "doctor [--json] [--no-round-trip] [--project DIR]", stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	noTrip := fs.Bool("no-round-trip", false, "do not send a synthetic event through the registered hook")
	project := fs.String("project", "", "project directory whose settings and policy are checked (default: the working directory)")
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	self, hookBin, err := binaries()
	if err != nil {
		return err
	}
	r := doctor.Run(ctx, doctor.Options{
		Getenv:      os.Getenv,
		WorkDir:     *project,
		Self:        self,
		HookBinary:  hookBin,
		Version:     version,
		RoundTrip:   !*noTrip,
		CheckPolicy: policy.Check,
	})
	if *asJSON {
		err = r.WriteJSON(stdout)
	} else {
		err = r.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if !r.OK() {
		return exitError{1}
	}
	return nil
}
