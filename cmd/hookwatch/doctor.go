package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hookwatch/hookwatch/doctor"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/policy"
	"github.com/hookwatch/hookwatch/spool"
)

func init() {
	register(command{
		name:    "doctor",
		summary: "check the installation end to end and say how to fix what is wrong",
		run:     runDoctor,
	})
}

// doctorFlags are the values of doctor's flags.
type doctorFlags struct {
	asJSON, noTrip, start, ack *bool
	project                    *string
}

// doctorFlagSet defines doctor's flags: the one definition runDoctor
// parses and the docs' command lines are checked against.
func doctorFlagSet(stdout, stderr io.Writer) (*flag.FlagSet, doctorFlags) {
	fs := newFlagSet("doctor", "doctor [--json] [--no-round-trip] [--project DIR] [--start] [--ack-losses]\n\n"+
		"Checks the installation and changes nothing, unless --start or --ack-losses asks it to.\n"+
		"The round trip sends one synthetic event through the registered hook; it is stored\n"+
		"in a probe session that the session list leaves out, and starts no collector nor\n"+
		"forwarder: with none to take it, the event waits in a scratch home's spool.\n"+
		"With --json, standard output is the report alone: what --start and --ack-losses\n"+
		"did is said on standard error.", stdout, stderr)
	return fs, doctorFlags{
		asJSON:  fs.Bool("json", false, "print the report as JSON, and nothing else on standard output"),
		noTrip:  fs.Bool("no-round-trip", false, "do not send a synthetic event through the registered hook"),
		project: fs.String("project", "", "project directory whose settings and policy are checked (default: the working directory)"),
		start:   fs.Bool("start", false, "start the collector first when none answers where the hooks send (HOOKWATCH_URL, else the URL 'hookwatch install --url' kept), as a hook would"),
		ack:     fs.Bool("ack-losses", false, "acknowledge the events lost so far (spool drops and corrupt lines), so that health is no longer degraded by them"),
	}
}

// runDoctor is `hookwatch doctor`: exit status 1 when a check failed.
func runDoctor(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, f := doctorFlagSet(stdout, stderr)
	asJSON, noTrip, project, start, ack := f.asJSON, f.noTrip, f.project, f.start, f.ack
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	if *project != "" {
		// Checked against settings that cannot be there, a missing or
		// mistyped directory would read as a broken install.
		if fi, err := os.Stat(*project); err != nil {
			return fmt.Errorf("%w: --project %s: %v", errUsage, *project, errors.Unwrap(err))
		} else if !fi.IsDir() {
			return fmt.Errorf("%w: --project %s is not a directory", errUsage, *project)
		}
	}
	self, hookBin, err := binaries()
	if err != nil {
		return err
	}
	home := hook.Home(os.Getenv)
	// A script reading the JSON report parses standard output whole.
	said := stdout
	if *asJSON {
		said = stderr
	}
	if *ack {
		if err := ackLosses(home, said); err != nil {
			return err
		}
	}
	// A HOOKWATCH_URL that is no collector URL starts nothing: the report
	// says what is wrong with it.
	if base, _, err := collectorURL(); *start && err == nil && !healthy(ctx, base, time.Second) {
		if err := startCollector(ctx, home, base, said); err != nil {
			return err
		}
		fmt.Fprintf(said, "started a collector at %s (log: %s)\n\n", base, filepath.Join(home, hook.ServeLog))
	}
	r := doctor.Run(ctx, doctor.Options{
		Getenv:     os.Getenv,
		WorkDir:    *project,
		Self:       self,
		HookBinary: hookBin,
		Version:    version,
		// The database serve would open without --db.
		Database:  dbFile(dbDSN(""), home),
		RoundTrip: !*noTrip,
		// serve's and forward's own reading of their settings.
		CheckSettings: settingRefusals,
		// Warned about as policy check warns where Codex's hooks run.
		CheckPolicy: func(w io.Writer, files ...string) error {
			return policy.CheckWith(w, policy.CheckOptions{Codex: doctor.CodexHooked(os.Getenv, *project)}, files...)
		},
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

// ackLosses acknowledges the losses the spool of home has counted, and
// says so on w.
func ackLosses(home string, w io.Writer) error {
	dir := filepath.Join(home, "spool")
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintln(w, "no events were lost: there is no spool yet")
		return nil
	}
	sp, err := spool.Open(dir, spool.Options{})
	if err != nil {
		return err
	}
	// The counters count every loss since the spool was made: the ones
	// acknowledged before are not news.
	before, err := sp.Stats()
	if err != nil {
		return err
	}
	st, err := sp.Acknowledge()
	if err != nil {
		return err
	}
	newly := max(0, st.Acknowledged-before.Acknowledged)
	if newly == 0 {
		fmt.Fprintf(w, "no new lost events to acknowledge (%d in all, acknowledged before: %d dropped, %d corrupt)\n\n", st.Acknowledged, st.Dropped, st.Corrupt)
		return nil
	}
	fmt.Fprintf(w, "acknowledged %d lost event(s) (%d in all: %d dropped, %d corrupt); only new losses make hookwatch degraded again\n\n", newly, st.Acknowledged, st.Dropped, st.Corrupt)
	return nil
}
