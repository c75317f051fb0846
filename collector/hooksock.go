package collector

import (
	"context"

	"github.com/hookwatch/hookwatch/hooksock"
	"github.com/hookwatch/hookwatch/policy"
)

// AnswerHooks returns the handler of the home's hook socket (hooksock): a
// hook that meets a policy file asks there for the answer, which policies
// gives with its rules kept compiled. addr, where this collector takes
// HTTP, goes back with the answer so the hook can hand the event over
// through the spool at once. Nothing is stored here: the hook delivers the
// event, with the answer's audit record in its envelope.
func AnswerHooks(policies *policy.Evaluator, addr string) hooksock.Handler {
	return func(req hooksock.Request) hooksock.Reply {
		stdout, code, audit := policies.AnswerProject(context.Background(), req.ProjectPolicy, req.Payload)
		return hooksock.Reply{Addr: addr, Code: code, Audit: audit, Stdout: stdout}
	}
}
