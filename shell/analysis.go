// Package shell analyses a shell command the way the shell will run it: a
// real parser (mvdan.cc/sh/v3/syntax, the parser behind shfmt) splits it into
// steps — each simple command, with its program resolved through wrappers
// (sudo, env, xargs, time, nice, timeout, bash -c '…', eval of a literal,
// $(which rm)) — and a table of programs and flags (programs.go) gives each
// step the files it reads and writes, the hosts it reaches and its effect.
//
// Effects are ordered read_only < execute_check < network < write <
// destructive; a command's effect is the greatest of its steps'. What cannot
// be known statically counts as the worst case it could be: input that does
// not parse, that is too large or too deeply nested, a program named by a
// variable or a command substitution, a shell fed from a pipe, an awk
// program that runs commands. Such an analysis is Unknown, Destructive and
// writes Anywhere ("/"), and a destructive step always writes something
// (Anywhere when what it destroys is no path). So a rule on
// `effect == "destructive"`, or on where a command writes, is not dodged by
// rephrasing a command; it may be too cautious about a command built at
// run time, never too lenient.
//
// Analyze never panics and is bounded in time and memory by the input's size
// (MaxInput), the nesting of shells in shells (maxDepth) and the number of
// steps (MaxSteps).
package shell

import "slices"

// Effect is what a command can do, ordered from harmless to irreversible.
type Effect string

// The effects, in increasing order of risk.
const (
	// ReadOnly: reads files or the system, changes nothing (ls, cat, grep,
	// git status, find without -delete/-exec).
	ReadOnly Effect = "read_only"
	// ExecuteCheck: runs code that checks or builds the project (go test,
	// npm test, make, linters, a script of the project).
	ExecuteCheck Effect = "execute_check"
	// Network: reaches other hosts without writing locally (curl without
	// -o, git fetch, ssh, ping).
	Network Effect = "network"
	// Write: creates or changes files or state (touch, cp, sed -i, > file,
	// npm install, git commit, inline interpreter code).
	Write Effect = "write"
	// Destructive: deletes or overwrites what cannot be recovered, or runs
	// what cannot be seen (rm, find -delete, git reset --hard, git clean -f,
	// dd of=, a bare truncation > file, curl | sh, anything unparsable).
	Destructive Effect = "destructive"
)

// effects are the effects in increasing order of risk.
var effects = [...]Effect{ReadOnly, ExecuteCheck, Network, Write, Destructive}

// Effects returns the effects in increasing order of risk (Rank). The
// slice is the caller's.
func Effects() []Effect { return slices.Clone(effects[:]) }

// Rank orders effects: 0 for read_only up to 4 for destructive (the order
// of Effects); an unknown effect ranks as destructive.
func (e Effect) Rank() int {
	if i := slices.Index(effects[:], e); i >= 0 {
		return i
	}
	return len(effects) - 1
}

// Max returns the greater of two effects.
func Max(a, b Effect) Effect {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}

// Step subtypes (Step.Subtype, Analysis.Subtype): what a step is for.
const (
	SubtypeReadFile          = "read_file"
	SubtypeListFiles         = "list_files"
	SubtypeSearch            = "search"
	SubtypeModifyFile        = "modify_file"
	SubtypeDeleteFile        = "delete_file"
	SubtypeRunTest           = "run_test"
	SubtypeRunBuild          = "run_build"
	SubtypeRunLint           = "run_lint"
	SubtypeFormatCode        = "format_code"
	SubtypeInstallDependency = "install_dependency"
	SubtypeGitCommit         = "git_commit"
	SubtypeGitPush           = "git_push"
	SubtypeGitOperation      = "git_operation"
	SubtypeWebFetch          = "web_fetch"
	SubtypeRunCommand        = "run_command"
	// SubtypeUnknown: the command could not be analysed.
	SubtypeUnknown = "unknown"
)

// subtypePriority orders step subtypes by how much they say about a whole
// command: `cd x && go test ./...` is a test run, `go build && git commit`
// a commit.
var subtypePriority = []string{
	SubtypeUnknown, SubtypeDeleteFile, SubtypeGitPush, SubtypeGitCommit, SubtypeInstallDependency,
	SubtypeRunTest, SubtypeRunBuild, SubtypeRunLint, SubtypeFormatCode, SubtypeWebFetch,
	SubtypeGitOperation, SubtypeModifyFile, SubtypeSearch, SubtypeReadFile, SubtypeListFiles,
	SubtypeRunCommand,
}

// Analysis is what a command does.
type Analysis struct {
	// Effect is the greatest effect of the steps; Destructive when Unknown.
	Effect Effect `json:"effect"`
	// Subtype is the most telling subtype of the steps (subtypePriority).
	Subtype string `json:"subtype"`
	// Unknown is set when the command could not be analysed in full
	// (Reason says why) — it does not parse, it is too large, or a step
	// is Dynamic: its effect is then Destructive and Writes holds
	// Anywhere.
	Unknown bool   `json:"unknown,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Steps are the simple commands in source order, those inside
	// command substitutions, nested shells and called functions included.
	Steps []Step `json:"steps"`
	// Reads, Writes and Hosts are the union of the steps', in order of
	// appearance, each listed once. Writes include deleted paths; a
	// destructive command's Writes are never empty (Anywhere when what it
	// destroys is no path). Hosts hold "<remote NAME>" for a git remote
	// whose URL the command does not give.
	Reads  []string `json:"reads,omitempty"`
	Writes []string `json:"writes,omitempty"`
	Hosts  []string `json:"hosts,omitempty"`
}

// Step is one simple command.
type Step struct {
	// Program is the program that runs, after the wrappers in Via:
	// `sudo env X=1 rm -rf d` is rm. "" when it cannot be known statically
	// (a variable, a command substitution); Dynamic is then set, and with
	// it the analysis's Unknown, and the step writes Anywhere.
	// "redirect" is the redirections of a statement without a command of
	// its own (`> f`, `{ …; } > f`).
	Program string `json:"program"`
	// Args are the arguments after Program, with quotes removed and known
	// variables substituted; a part that cannot be known keeps its source
	// text ($DIR).
	Args    []string `json:"args,omitempty"`
	Via     []string `json:"via,omitempty"`
	Dynamic bool     `json:"dynamic,omitempty"`
	// Reads and Writes are the files and directories the step reads and
	// writes (or deletes), redirections included, made absolute against
	// the working directory when it is known (Options.Dir, cd); globs are
	// kept as written (/proj/build/*).
	Reads  []string `json:"reads,omitempty"`
	Writes []string `json:"writes,omitempty"`
	// Hosts are the network hosts the step names.
	Hosts   []string `json:"hosts,omitempty"`
	Effect  Effect   `json:"effect"`
	Subtype string   `json:"subtype"`
	// Why says what made the effect, when the program alone does not
	// ("-delete", "--force", "> with no command").
	Why string `json:"why,omitempty"`
}

// finish computes the whole command's effect, subtype and file lists from
// its steps.
func (a *Analysis) finish() {
	if a.Unknown {
		a.Effect, a.Subtype = Destructive, SubtypeUnknown
	} else {
		a.Effect, a.Subtype = ReadOnly, ""
	}
	best := len(subtypePriority)
	if a.Unknown {
		best = 0
	}
	for i := range a.Steps {
		s := &a.Steps[i]
		a.Effect = Max(a.Effect, s.Effect)
		if p := slices.Index(subtypePriority, s.Subtype); p >= 0 && p < best {
			best, a.Subtype = p, s.Subtype
		}
		a.Reads = appendNew(a.Reads, s.Reads...)
		a.Writes = appendNew(a.Writes, s.Writes...)
		a.Hosts = appendNew(a.Hosts, s.Hosts...)
	}
	if a.Unknown {
		// What was not analysed may write anywhere.
		a.Writes = appendNew(a.Writes, Anywhere)
	}
	if a.Subtype == "" {
		a.Subtype = SubtypeRunCommand
	}
}

// appendNew appends the values not already in list.
func appendNew(list []string, vs ...string) []string {
	for _, v := range vs {
		if v != "" && !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}
