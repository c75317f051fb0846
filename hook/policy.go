package hook

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/policy"
)

// decide evaluates the policies in force for p; see Decide.
func (cfg Config) decide(ctx context.Context, p *event.Payload, data []byte) (stdout []byte, code int, audit json.RawMessage) {
	return Decide(ctx, cfg.Home, cfg.ProjectDir, p, data)
}

// Decide evaluates the policies in force for the payload p (data is its
// JSON) and returns what to answer on stdout, the exit code, and the audit
// record for the envelope (nil when no rule had an opinion). home holds the
// user policy and the quota state; projectDir is CLAUDE_PROJECT_DIR, if
// known. It sees the payload as the agent sent it, before redaction,
// because a rule about a secret must see the secret. Both the hook and the
// collector's http hook endpoint answer through it.
func Decide(ctx context.Context, home, projectDir string, p *event.Payload, data []byte) (stdout []byte, code int, audit json.RawMessage) {
	set := policy.Discover(home, p.CWD, projectDir)
	if len(set.Rules) == 0 && len(set.Problems) == 0 {
		return nil, 0, nil
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, 0, nil // Decode accepted it, so this cannot happen; stay observe-only
	}
	d := set.Evaluate(ctx, m, policy.OpenState(filepath.Join(home, "state")))
	stdout, code = decision.Render(d)
	if a := d.Audit(); a != nil {
		audit, _ = json.Marshal(a)
	}
	return stdout, code, audit
}
