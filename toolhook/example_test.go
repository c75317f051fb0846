package toolhook_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/toolhook"
)

func Example() {
	var hooks toolhook.Registry
	hooks.Pre("process_refund", func(ctx context.Context, c *toolhook.Call) toolhook.PreResult {
		if amount, _ := c.Input["amount"].(float64); amount > 500 {
			return toolhook.PreResult{Decision: decision.Decision{
				Verdict: decision.Deny,
				Reasons: []string{"refunds above 500 go through escalate_to_human"},
			}}
		}
		return toolhook.PreResult{}
	})
	hooks.Post("*", func(ctx context.Context, c *toolhook.Call) toolhook.PostResult {
		if s, ok := c.Output.(string); ok {
			return toolhook.PostResult{Output: strings.ToUpper(s)}
		}
		return toolhook.PostResult{}
	})

	x := &toolhook.Executor{
		Registry: &hooks,
		Tools: map[string]toolhook.Tool{
			"process_refund": func(ctx context.Context, in map[string]any) (any, error) {
				c := toolhook.CurrentCall(ctx)
				return fmt.Sprintf("refunded %v for task %s", in["amount"], c.TaskID), nil
			},
		},
	}
	ctx := toolhook.WithTask(context.Background(), "ticket-4711")
	out, err := x.Call(ctx, "process_refund", map[string]any{"amount": 120.0})
	fmt.Println(out, err)

	_, err = x.Call(ctx, "process_refund", map[string]any{"amount": 800.0})
	var denied *toolhook.DeniedError
	if errors.As(err, &denied) {
		fmt.Println(denied.Verdict, "-", denied.Reason)
	}
	// Output:
	// REFUNDED 120 FOR TASK TICKET-4711 <nil>
	// deny - refunds above 500 go through escalate_to_human
}
