package main

import (
	"context"
	"io"
	"os"

	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/policy"
)

func init() {
	register(command{
		name:    "hook",
		summary: "handle one agent hook event from stdin (what the agent runs)",
		run:     runHook,
	})
}

// runHook is `hookwatch hook`. It follows the hook rule: whatever happens,
// the error it returns is nil or an exitError chosen by a policy, and stdout
// holds nothing but a policy's answer.
func runHook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	code := hook.Main(ctx, args, stdin, stdout, stderr, os.Getenv, version, policy.Answer)
	if code != 0 {
		return exitError{code}
	}
	return nil
}
