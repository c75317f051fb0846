// Command rmguard is a Claude Code PreToolUse command hook written with
// package cmdhook: it denies Bash commands that delete recursively and
// forcefully (rm -rf, rm -fr, rm -r -f, rm --recursive --force).
//
// Install it in .claude/settings.json:
//
//	{"hooks": {"PreToolUse": [{"matcher": "Bash",
//	  "hooks": [{"type": "command", "command": "/path/to/rmguard"}]}]}}
package main

import (
	"context"
	"strings"

	"github.com/hookwatch/hookwatch/cmdhook"
	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/event"
)

func main() { cmdhook.Main(guard) }

func guard(_ context.Context, p *event.Payload) (decision.Decision, error) {
	var in struct {
		Command string `json:"command"`
	}
	tool, err := cmdhook.ToolInput(p, &in)
	if p.Name() != event.PreToolUse || tool != "Bash" || err != nil {
		return decision.Decision{}, err
	}
	if recursiveForce(in.Command) {
		return decision.Decision{
			Verdict: decision.Deny,
			Reasons: []string{"rmguard: recursive force deletes are not allowed; delete specific files instead"},
		}, nil
	}
	return decision.Decision{}, nil
}

// recursiveForce reports whether a command line runs rm with both the
// recursive and the force flags, in any spelling. It reads words, not
// shell syntax: good enough for a guard, not a parser.
func recursiveForce(cmd string) bool {
	words := strings.FieldsFunc(cmd, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == ';' || r == '&' || r == '|' || r == '(' || r == ')'
	})
	for i, w := range words {
		if w != "rm" && !strings.HasSuffix(w, "/rm") {
			continue
		}
		var r, f bool
		for _, a := range words[i+1:] {
			switch {
			case a == "--":
			case a == "--recursive":
				r = true
			case a == "--force":
				f = true
			case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--"):
				r = r || strings.ContainsAny(a, "rR")
				f = f || strings.Contains(a, "f")
			default:
				continue
			}
		}
		if r && f {
			return true
		}
	}
	return false
}
