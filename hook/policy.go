package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonstr"
	"github.com/hookwatch/hookwatch/policy/policyfile"
	"github.com/hookwatch/hookwatch/spool"
)

// DecideFunc evaluates the policies in force for one hook payload in
// process: policy.Answer has this signature. It returns what to answer on
// stdout, the exit code, and the audit record for the envelope.
type DecideFunc func(ctx context.Context, home, cwd, projectDir string, data []byte) (stdout []byte, code int, audit json.RawMessage)

// errNoDecision marks a run whose policies could not be evaluated: the hook
// then stays observe-only, which is fail-open, and says so in hook.log.
var errNoDecision = errors.New("policies are in force but could not be evaluated; the event passed unanswered")

// policyVerdict is what the policies answered for one event.
type policyVerdict struct {
	stdout []byte
	code   int
	audit  json.RawMessage
}

// decide answers the event with the policies in force. Most events meet
// none — a few stat calls say so. When some apply, the full engine answers:
// in process when this binary links it (cfg.Decide), else the collector
// attached to this home's spool, which keeps the rules compiled, else a
// `hookwatch hook` process started for this one event (which then also
// delivers it: handled reports that).
func (cfg Config) decide(ctx context.Context, p *event.Payload, data []byte, deadline time.Time) (v policyVerdict, handled *Result, err error) {
	if !policyfile.Any(policyfile.Locate(policyfile.ManagedPath, cfg.Home, p.CWD, cfg.ProjectDir)) {
		return v, nil, nil
	}
	if cfg.Decide != nil {
		v.stdout, v.code, v.audit = cfg.Decide(ctx, cfg.Home, p.CWD, cfg.ProjectDir, data)
		return v, nil, nil
	}
	if v, err := cfg.decideRemote(p, data, deadline); err == nil {
		return v, nil, nil
	}
	res, err := cfg.decideInFullBinary(ctx, data, deadline)
	if err != nil {
		return v, nil, fmt.Errorf("%w: %v", errNoDecision, err)
	}
	return v, &res, nil
}

// DecisionReply encodes the answer of POST /v1/decide: the exit code on the
// first line, the audit record (compact JSON, or nothing) on the second, and
// the bytes for stdout after it. A hook process reads it without
// encoding/json, whose first use of a type costs more than the rest.
func DecisionReply(code int, audit json.RawMessage, stdout []byte) []byte {
	b := strconv.AppendInt(nil, int64(code), 10)
	b = append(b, '\n')
	b = append(b, bytes.ReplaceAll(audit, []byte("\n"), nil)...) // compact already; never two lines
	b = append(b, '\n')
	return append(b, stdout...)
}

// parseDecisionReply reads what DecisionReply wrote.
func parseDecisionReply(b []byte) (policyVerdict, error) {
	line, rest, ok := bytes.Cut(b, []byte("\n"))
	code, err := strconv.Atoi(string(line))
	if !ok || err != nil {
		return policyVerdict{}, errors.New("malformed decision from the collector")
	}
	audit, stdout, ok := bytes.Cut(rest, []byte("\n"))
	if !ok || (len(audit) > 0 && !json.Valid(audit)) {
		return policyVerdict{}, errors.New("malformed decision from the collector")
	}
	v := policyVerdict{code: code, stdout: stdout}
	if len(audit) > 0 {
		v.audit = audit
	}
	if len(stdout) == 0 {
		v.stdout = nil
	}
	return v, nil
}

// decideRemote asks the collector attached to this home's spool: it reads
// the same policy files and keeps the same quota state, with the rules
// already compiled. Any other collector could see other files, so it is
// never asked.
func (cfg Config) decideRemote(p *event.Payload, data []byte, deadline time.Time) (policyVerdict, error) {
	ep, err := parseEndpoint(cfg.URL)
	if err != nil {
		return policyVerdict{}, err
	}
	if !spool.AttachedTo(filepath.Join(cfg.Home, "spool"), ep.addr.String()) {
		return policyVerdict{}, errors.New("no collector attached to this home")
	}
	// {"project_dir": …, "payload": …}, built by hand for the same reason.
	body := append([]byte(`{"project_dir":`), jsonstr.AppendQuoted(nil, cfg.ProjectDir)...)
	body = append(append(append(body, `,"payload":`...), bytes.TrimSpace(data)...), '}')
	code, resp, err := postRead(ep, "/v1/decide", cfg.Token, body, deadline.Add(-cfg.budget()/10))
	if err != nil {
		return policyVerdict{}, err
	}
	if code != 200 {
		return policyVerdict{}, statusError{code}
	}
	return parseDecisionReply(resp)
}

// decideInFullBinary runs `hookwatch hook` (the binary beside this one,
// which links the policy engine) on the payload and takes its answer. That
// process also records the event, so this one must not.
func (cfg Config) decideInFullBinary(ctx context.Context, data []byte, deadline time.Time) (Result, error) {
	bin, err := fullBinary()
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "hook")
	cmd.Env = append(os.Environ(), "HOOKWATCH_HOME="+cfg.Home, "HOOKWATCH_URL="+cfg.URL)
	cmd.Stdin = bytes.NewReader(data)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return Result{}, err
	}
	if code := cmd.ProcessState.ExitCode(); code >= 0 {
		return Result{Stdout: stdout.Bytes(), ExitCode: code, Delivered: true}, nil
	}
	return Result{}, fmt.Errorf("%s hook did not finish within the budget: %v", bin, err)
}

// fullBinary returns the hookwatch binary beside this hookwatch-hook.
func fullBinary() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(filepath.Base(exe), "hookwatch-hook") {
		return "", errors.New("not running as hookwatch-hook")
	}
	bin := filepath.Join(filepath.Dir(exe), "hookwatch")
	if _, err := os.Stat(bin); err != nil {
		return "", errors.New("no hookwatch binary beside hookwatch-hook")
	}
	return bin, nil
}
