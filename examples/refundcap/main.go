// Command refundcap is a support agent's tool loop that enforces a refund
// cap written as a hookwatch policy: process_refund above 500 is denied with
// a reason that names the escalation tool, and the agent escalates instead.
//
//	go run ./examples/refundcap -policy examples/refundcap/policy.yaml 120 800
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/hookwatch/hookwatch/toolhook"
)

func main() {
	policyFile := flag.String("policy", "examples/refundcap/policy.yaml", "hookwatch policy file")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *policyFile, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "refundcap:", err)
		os.Exit(1)
	}
}

// run refunds each amount, escalating the ones the policy denies.
func run(ctx context.Context, w io.Writer, policyFile string, amounts []string) error {
	var hooks toolhook.Registry
	if err := hooks.LoadPolicy(policyFile); err != nil {
		return err
	}
	x := &toolhook.Executor{Registry: &hooks, SessionID: "refunds", Tools: map[string]toolhook.Tool{
		"process_refund": func(_ context.Context, in map[string]any) (any, error) {
			return fmt.Sprintf("refunded %v", in["amount"]), nil
		},
		"escalate_to_human": func(_ context.Context, in map[string]any) (any, error) {
			return fmt.Sprintf("escalated a refund of %v", in["amount"]), nil
		},
	}}
	for _, a := range amounts {
		amount, err := strconv.ParseFloat(a, 64)
		if err != nil {
			return fmt.Errorf("cannot read amount %q: %w", a, err)
		}
		out, err := x.Call(ctx, "process_refund", map[string]any{"amount": amount})
		var denied *toolhook.DeniedError
		if errors.As(err, &denied) {
			// What a model would read; this agent follows the reason.
			fmt.Fprintf(w, "denied: %s\n", denied.Reason)
			out, err = x.Call(ctx, "escalate_to_human", map[string]any{"amount": amount})
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(w, out)
	}
	return nil
}
