package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hookwatch/hookwatch/doctor"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/patherr"
	"github.com/hookwatch/hookwatch/internal/regfile"
	"github.com/hookwatch/hookwatch/policy"
)

func init() {
	register(command{
		name:    "policy",
		summary: "check, test (a dry run on recorded events) and explain the policy rules the hook enforces",
		run:     runPolicy,
	})
}

// policyUsage is policy --help: userFile is this home's policy file, where
// a tried file goes ($HOOKWATCH_HOME/policy.yaml, as the hook finds it).
func policyUsage(userFile string) string {
	return `Usage: hookwatch policy <subcommand> [flags]

Subcommands:
  check [FILE…]
      validate and compile policy files (default: the files in force here);
      problems print as file:line: rule "id": message and exit 1
  test FILE --events EVENTS.jsonl [--json]
      dry-run a policy over recorded hook events
  test FILE --command CMD [--json]
      dry-run a policy on a Bash call of CMD run here: try a file before
      it is in force, then copy it to ` + userFile + `
      (or a project's .hookwatch/policy.yaml)
  explain [DIR] [--command CMD [--json]]
      list the policy files and rules in force for DIR (default: here);
      with --command, show the analysis of a shell command (its steps,
      effect, files) and what the rules answer to a Bash call of it

Exit status: 0 ok; 1 a problem in a policy file, or a file that cannot be
read; 2 a usage error.

Run 'hookwatch policy <subcommand> --help' for its flags. See docs/policy.md for the language.
`
}

// runPolicy is `hookwatch policy`: it dispatches to check, test and explain.
func runPolicy(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return runSubcommand("policy", policyUsage(filepath.Join(hook.Home(os.Getenv), "policy.yaml")), args, stdout, stderr,
		subcommand{"check", func(args []string) error { return runPolicyCheck(args, stdout, stderr) }},
		subcommand{"test", func(args []string) error { return runPolicyTest(args, stdin, stdout, stderr) }},
		subcommand{"explain", func(args []string) error { return runPolicyExplain(args, stdout, stderr) }})
}

// policyCheckFlagSet defines policy check's flags, none: the one
// definition runPolicyCheck parses and the docs' command lines are checked
// against.
func policyCheckFlagSet(stdout, stderr io.Writer) *flag.FlagSet {
	return newFlagSet("policy check", "policy check [FILE…]\n\nValidates and compiles policy files as they would be in force together\n(a rule id defined twice is a problem). Without FILE, checks the files in\nforce for the working directory: managed, $HOOKWATCH_HOME/policy.yaml and\nthe project's .hookwatch/policy.yaml (found as policy explain finds it).\nWarns, without failing, about a condition on a field of tool_input that\nnone of the rule's tools sends, and, where Codex's hooks run hookwatch\n(its user's or this project's hooks file), about a rule for both runtimes\nwhose action or effect Codex does not carry out.\nExit status 1 when a file has a problem.", stdout, stderr)
}

// runPolicyCheck is `hookwatch policy check [FILE…]`. Without files it
// checks the files in force for the working directory, as the hook would
// find them (managed, user, project). Problems are printed one per line as
// file:line: rule "id": message, and make the exit status 1.
func runPolicyCheck(args []string, stdout, stderr io.Writer) error {
	fs := policyCheckFlagSet(stdout, stderr)
	// It takes no flags, but --help (or a slip) after the files is read as
	// one, not as a file name: a file named "-x" is written after "--".
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		cwd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("cannot get the working directory: %w", err)
		}
		home := hook.Home(os.Getenv)
		proj := policy.GuessProject(home, cwd, os.Getenv("CLAUDE_PROJECT_DIR"))
		var looked []string
		for _, src := range policy.Locate(home, cwd, proj.Dir) {
			looked = append(looked, src.Path)
			if fi, err := os.Stat(src.Path); err == nil && !fi.IsDir() {
				files = append(files, src.Path)
			}
		}
		if len(files) == 0 {
			fmt.Fprintf(stdout, "no policy files in force for %s (project directory %s; looked for %s)\n", cwd, proj, strings.Join(looked, ", "))
			return nil
		}
		fmt.Fprintf(stdout, "policy files in force for %s (project directory %s):\n", cwd, proj)
	}
	cwd, _ := os.Getwd()
	return policy.CheckWith(stdout, policyOptions(cwd, stderr), files...) // an error exits 1
}

// policyOptions is what policy check, test and explain know of the machine
// when the agent works in dir: whether Codex's hooks (the user's, or dir's
// project's) run hookwatch, which decides what they warn about. Beside
// JSON output, which holds results only, they warn on stderr.
func policyOptions(dir string, stderr io.Writer) policy.CheckOptions {
	return policy.CheckOptions{Codex: doctor.CodexHooked(os.Getenv, dir), Stderr: stderr}
}

// policyTestFlagSet defines policy test's flags, --events, --command and
// --json: the one definition runPolicyTest parses and the docs' command
// lines are checked against.
func policyTestFlagSet(stdout, stderr io.Writer) (fs *flag.FlagSet, events, command *string, asJSON *bool) {
	fs = newFlagSet("policy test", "policy test FILE --events EVENTS.jsonl [--json]\n       hookwatch policy test FILE --command CMD [--json]\n\nDry-runs the policy FILE over recorded hook events (one JSON object per\nline: a raw payload, or an envelope with the payload under \"payload\", as\nthe corpus files and exports hold), or on the Bash call of one command\nrun in the working directory, and prints what each rule would decide and\nthe reason the agent is given. FILE need not be in force: test it, then\ncopy it where the hook reads it. Quotas count in memory from zero. The\nwarnings policy check prints come first (on stderr with --json). Exit\nstatus 1 when the policy has problems, whatever it decides; warnings do\nnot fail it.", stdout, stderr)
	events = fs.String("events", "", "JSON Lines file of hook events to replay (- for stdin)")
	command = fs.String("command", "", "a shell command: dry-run FILE on a Bash call of it (PreToolUse) in the working directory")
	asJSON = fs.Bool("json", false, "print one JSON result per event (JSON Lines) instead of a table: the decision, and the\nstdout and exit code the hook answers the agent with")
	return fs, events, command, asJSON
}

// runPolicyTest is `hookwatch policy test FILE --events EVENTS.jsonl`.
func runPolicyTest(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, events, command, asJSON := policyTestFlagSet(stdout, stderr)
	// The policy file may come before or after the flags.
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(files) == 0:
		fs.Usage()
		return fmt.Errorf("%w: policy test needs a policy FILE", errUsage)
	case len(files) > 1:
		return fmt.Errorf("%w: policy test takes one policy file, got %q", errUsage, files)
	case *events != "" && flagSet(fs, "command"):
		return fmt.Errorf("%w: policy test takes --events or --command, not both", errUsage)
	case *command == "" && flagSet(fs, "command"):
		// An unset shell variable: dry-running nothing would say nothing.
		return fmt.Errorf("%w: --command is empty: give the shell command to test", errUsage)
	case *events == "" && *command == "":
		fs.Usage()
		return fmt.Errorf("%w: policy test needs --events EVENTS.jsonl or --command CMD", errUsage)
	}
	// A file that cannot be read (missing, a directory) is refused before
	// the dry run, which would otherwise go on without its rules.
	f, _, err := regfile.Open(files[0])
	if err != nil {
		return fmt.Errorf("cannot read policy file %s: %w", files[0], patherr.Strip(err, files[0]))
	}
	f.Close()
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("cannot get the working directory: %w", err)
	}
	var in io.Reader = stdin
	switch {
	case *command != "":
		b, err := json.Marshal(policy.CommandPayload(cwd, *command))
		if err != nil {
			return fmt.Errorf("cannot encode the command's payload: %w", err)
		}
		in = bytes.NewReader(b)
	case *events != "-":
		f, err := os.Open(*events)
		if err != nil {
			return fmt.Errorf("cannot open events: %w", err)
		}
		defer f.Close()
		in = f
	}
	return policy.Test(stdout, hook.Home(os.Getenv), files[0], in, *asJSON, policyOptions(cwd, stderr)) // an error exits 1
}

// policyExplainFlagSet defines policy explain's flags, --command and
// --json: the one definition runPolicyExplain parses and the docs' command
// lines are checked against.
func policyExplainFlagSet(stdout, stderr io.Writer) (fs *flag.FlagSet, command *string, asJSON *bool) {
	fs = newFlagSet("policy explain", "policy explain [DIR] [--command CMD [--json]]\n\nLists the policy files that apply to DIR (default: the working directory),\nthe rules in force in evaluation order, and the invalid parts left out.\nThe project directory is CLAUDE_PROJECT_DIR when DIR is inside it, else\nthe nearest directory from DIR up holding .hookwatch/policy.yaml or .git\n(where a session is commonly started); the output names the one taken.\nWith --command, shows how the rules see a shell command run in DIR: its\nsteps, effect and files (the variables command and subtype) and what the\nrules in force answer to a Bash call of it. Ends with the warnings policy\ncheck prints (on stderr with --json), which do not fail it. To try a file\nnot yet in force: policy test FILE --command CMD.", stdout, stderr)
	return fs, fs.String("command", "", "a shell command to analyse"), fs.Bool("json", false, "with --command: write the variables and the answer as JSON")
}

// runPolicyExplain is `hookwatch policy explain [DIR]`.
func runPolicyExplain(args []string, stdout, stderr io.Writer) error {
	fs, command, asJSON := policyExplainFlagSet(stdout, stderr)
	// The directory may come before the flags, as the usage line has it.
	dirs, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) > 1 {
		return fmt.Errorf("%w: policy explain takes one directory, got %q", errUsage, dirs)
	}
	if *command == "" && flagSet(fs, "command") {
		// An empty command (an unset shell variable) would otherwise list
		// the rules in force, as if --command had not been given.
		return fmt.Errorf("%w: --command is empty: give the shell command to analyse", errUsage)
	}
	if *asJSON && *command == "" {
		return fmt.Errorf("%w: --json goes with --command (the listing of the rules in force is text only)", errUsage)
	}
	dir := "."
	if len(dirs) == 1 {
		dir = dirs[0]
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("cannot resolve %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return fmt.Errorf("cannot explain policy: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", errUsage, dir)
	}
	home := hook.Home(os.Getenv)
	proj := policy.GuessProject(home, abs, os.Getenv("CLAUDE_PROJECT_DIR"))
	o := policyOptions(abs, stderr)
	if *command != "" {
		return policy.ExplainCommand(stdout, home, abs, proj, *command, *asJSON, o)
	}
	return policy.Explain(stdout, home, abs, proj, o)
}
