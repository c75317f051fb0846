package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hookwatch/hookwatch/doctor"
)

// flagRefusal is a value a command refuses of one of its flags, naming the
// flag: so that a value its variable set (flagsFromEnv) is named by that
// variable, in the command's error and in doctor's report of the
// environment (settingRefusals), which say the same.
type flagRefusal struct {
	flag string
	// err is the refusal: errUsage's, or the reading's (a price table
	// that does not parse).
	err error
	// env and value are the variable that set the flag and its value,
	// when one did and the command line did not.
	env, value string
}

func (r *flagRefusal) Error() string {
	if r.env == "" {
		return r.err.Error()
	}
	msg, pre := r.err.Error(), ""
	if m, ok := strings.CutPrefix(msg, errUsage.Error()+": "); ok {
		msg, pre = m, errUsage.Error()+": "
	}
	return fmt.Sprintf("%s%s=%q, the default of --%s: %s", pre, r.env, r.value, r.flag, msg)
}

func (r *flagRefusal) Unwrap() error { return r.err }

// refuse is the usage error msg about --flag's value.
func refuse(flag, msg string) error {
	return &flagRefusal{flag: flag, err: fmt.Errorf("%w: %s", errUsage, msg)}
}

// refused is err, the refusal of --flag's value.
func refused(flag string, err error) error { return &flagRefusal{flag: flag, err: err} }

// parseEnvFlags sets the flags of names of fs from the environment
// (flagsFromEnv), parses args, and runs check on what they make. A
// refusal of check (a *flagRefusal) of a flag whose value a variable set
// names the variable, as flagsFromEnv names it for a value the flag
// itself refuses: the collector or forwarder a hook or the service starts
// writes it to a log its user reads without knowing its environment.
func parseEnvFlags(fs *flag.FlagSet, names, args []string, getenv func(string) string, check func() error) error {
	if err := flagsFromEnv(fs, names, getenv); err != nil {
		return err
	}
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	err := check()
	var r *flagRefusal
	if errors.As(err, &r) && r.env == "" && slices.Contains(names, r.flag) && !commandLineFlags(fs, args)[r.flag] {
		if v := getenv(flagEnv(r.flag)); v != "" {
			r.env, r.value = flagEnv(r.flag), v
		}
	}
	return err
}

// commandLineFlags are the flags of fs that args set, args parsed as fs
// parses them but into values that keep nothing: fs's own were set by the
// environment too.
func commandLineFlags(fs *flag.FlagSet, args []string) map[string]bool {
	probe := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	probe.SetOutput(io.Discard)
	fs.VisitAll(func(f *flag.Flag) {
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		probe.Var(probeValue(ok && b.IsBoolFlag()), f.Name, "")
	})
	set := map[string]bool{}
	_ = probe.Parse(args)
	probe.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// probeValue takes any value; true for a boolean flag's.
type probeValue bool

func (probeValue) String() string     { return "" }
func (probeValue) Set(string) error   { return nil }
func (p probeValue) IsBoolFlag() bool { return bool(p) }

// envCommand is a command whose flags take their defaults from the
// environment: its flag set, as the command defines it, the environment
// read from getenv, with the check it runs once they are parsed; and the
// flags whose variables set them.
type envCommand struct {
	flags func(getenv func(string) string) (*flag.FlagSet, func() error)
	names []string
}

// envCommands are serve and forward, the commands a hook or the user
// service starts with an environment of their own.
var envCommands = map[string]envCommand{
	"serve": {
		flags: func(func(string) string) (*flag.FlagSet, func() error) {
			fs, f := serveFlagSet(io.Discard, io.Discard)
			return fs, f.check
		},
		names: serveEnvFlags(),
	},
	"forward": {
		flags: func(getenv func(string) string) (*flag.FlagSet, func() error) {
			fs, f := forwardFlagSet(io.Discard, io.Discard, getenv)
			return fs, f.check
		},
		names: forwardEnvFlags,
	},
}

// envExamples are values the flags of envCommands take, for the flags whose
// default (which is the example otherwise) is none to give: a variable
// doctor finds refused is fixed by unsetting it or by such a value.
var envExamples = map[string]string{
	"retain": "90d", "retain-size": "10GB", "audit-retain": "90d", "archive-retain": "30d",
}

// settingRefusals returns each variable of command (envCommands) that
// getenv sets to a value the command refuses to start on, given args, as
// parseEnvFlags reads them for the command itself: what it says is what it
// would print as it exits. Those after the first are found with the ones
// before unset.
func settingRefusals(command string, args []string, getenv func(string) string) []doctor.Refusal {
	c, ok := envCommands[command]
	if !ok {
		return nil
	}
	dropped := map[string]bool{}
	env := func(k string) string {
		if dropped[k] {
			return ""
		}
		return getenv(k)
	}
	var out []doctor.Refusal
	for range len(c.names) {
		fs, check := c.flags(env)
		var r *flagRefusal
		if err := parseEnvFlags(fs, c.names, args, env, check); !errors.As(err, &r) || r.env == "" {
			break
		}
		example := envExamples[r.flag]
		if example == "" {
			example = fs.Lookup(r.flag).DefValue
		}
		out = append(out, doctor.Refusal{Var: r.env, Value: r.value, Says: errorLine(r), Example: example})
		dropped[r.env] = true
	}
	return out
}

// errorLine is the line a command's error is printed as, as it exits
// (exitCode).
func errorLine(err error) string { return "hookwatch: " + err.Error() }
