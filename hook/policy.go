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
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hooksock"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/policy/policyfile"
)

// DecideFunc evaluates the policies in force for one hook payload in
// process: policy.Answer has this signature. It returns what to answer on
// stdout, the exit code, the audit record for the envelope, and the
// problems of the policy files (invalid rules left out, fail-open) when
// they changed since a run last returned them — hook.log gets a line for
// each: a headless run (claude -p, codex exec) shows the answer's
// systemMessage to no one.
type DecideFunc func(ctx context.Context, home, cwd, projectDir string, data []byte) (stdout []byte, code int, audit json.RawMessage, problems []error)

// errNoDecision marks a run whose policies could not be evaluated: the hook
// then stays observe-only, which is fail-open, and says so in hook.log.
var errNoDecision = errors.New("policies are in force but could not be evaluated; the event passed unanswered")

// question is the policies' answer to one event, on its way. Most events
// meet no policy file — a few stat calls say so — and need no answer. When
// some apply, the full engine answers: in process when this binary links it
// (cfg.Decide), else the collector attached to this home, which keeps the
// rules compiled, else a `hookwatch hook` process started for this one
// event (which then also delivers it).
//
// The collector is asked at once (ask) and its answer read later (answer),
// so that the hook builds the event's record while the collector
// evaluates: the agent waits for the longer of the two, not their sum.
type question struct {
	cfg      Config
	p        *event.Payload
	data     []byte
	deadline time.Time
	inForce  bool
	call     *hooksock.Call // the question to the collector; nil when cfg.Decide answers
	problems []error        // of the policy files, from cfg.Decide, for hook.log
}

// ask starts answering the event: it finds the policy files in force and,
// when the collector is to answer, sends the question.
func (cfg Config) ask(p *event.Payload, data []byte, deadline time.Time) *question {
	q := &question{cfg: cfg, p: p, data: data, deadline: deadline}
	srcs, inForce := policyfile.InForce(policyfile.ManagedPath, cfg.Home, p.CWD, cfg.ProjectDir)
	if q.inForce = inForce; !inForce || cfg.Decide != nil {
		return q
	}
	// The collector attached to this home, on its socket: it reads the
	// same policy files and keeps the same quota state. No other collector
	// is asked: it could see other files.
	req := hooksock.Request{Payload: bytes.TrimSpace(data)}
	for _, s := range srcs {
		if s.Scope == policyfile.ScopeProject {
			req.ProjectPolicy = s.Path
		}
	}
	q.call = hooksock.Send(hooksock.Path(cfg.Home), req, deadline.Add(-cfg.budget()/10))
	return q
}

// answer waits for the answer. It also returns the HTTP address of the
// collector that answered, when one attached to this home did: the event
// can then be handed over through the spool without asking who is
// attached. When the full binary had to answer, it also recorded the
// event (Verdict.Recorded), so this process must not.
func (q *question) answer(ctx context.Context) (v ingest.Verdict, collector string, err error) {
	switch {
	case !q.inForce:
		return v, "", nil
	case q.call == nil:
		v.Stdout, v.Code, v.Audit, q.problems = q.cfg.Decide(ctx, q.cfg.Home, q.p.CWD, q.cfg.ProjectDir, q.data)
		return v, "", nil
	}
	r, lerr := q.call.Wait()
	if lerr == nil {
		return ingest.Verdict{Stdout: r.Stdout, Code: r.Code, Audit: r.Audit}, r.Addr, nil
	}
	v, err = q.cfg.decideInFullBinary(ctx, q.data, q.deadline)
	if err != nil {
		return v, "", fmt.Errorf("%w: %v", errNoDecision, errors.Join(lerr, err))
	}
	if !errors.Is(lerr, hooksock.ErrNoCollector) {
		// A collector is there but failed to answer: worth a line, as the
		// answer cost a process.
		return v, "", fmt.Errorf("the local collector did not answer (%v); hookwatch hook did", lerr)
	}
	return v, "", nil
}

// logProblems writes a hook.log line for each problem of the policy files
// the answer was made with, when Decide returned them (once per change of
// the files). The collector, when it answers, logs them itself; the full
// binary, when it does, to this hook.log.
func (q *question) logProblems(start time.Time, name, session string) {
	if q == nil {
		return
	}
	for _, p := range q.problems {
		q.cfg.log(start, name, session, fmt.Errorf("invalid policy left out (fail-open): fix it and run hookwatch policy check: %w", p))
	}
}

// close abandons a question whose answer is no longer wanted.
func (q *question) close() {
	if q != nil && q.call != nil {
		q.call.Close()
	}
}

// decideInFullBinary runs `hookwatch hook` (the binary beside this one,
// which links the policy engine) on the payload and takes its answer. That
// process also records the event, so this one must not (Verdict.Recorded).
func (cfg Config) decideInFullBinary(ctx context.Context, data []byte, deadline time.Time) (ingest.Verdict, error) {
	bin, err := fullBinary()
	if err != nil {
		return ingest.Verdict{}, err
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
		return ingest.Verdict{}, err
	}
	if code := cmd.ProcessState.ExitCode(); code >= 0 {
		return ingest.Verdict{Stdout: stdout.Bytes(), Code: code, Recorded: true}, nil
	}
	return ingest.Verdict{}, fmt.Errorf("%s hook did not finish within the budget: %v", bin, err)
}

// fullBinary returns the hookwatch binary beside this hookwatch-hook.
func fullBinary() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(filepath.Base(exe), claudecode.HookBinaryName) {
		return "", errors.New("not running as " + claudecode.HookBinaryName)
	}
	bin := filepath.Join(filepath.Dir(exe), claudecode.BinaryName)
	if _, err := os.Stat(bin); err != nil {
		return "", errors.New("no " + claudecode.BinaryName + " binary beside " + claudecode.HookBinaryName)
	}
	return bin, nil
}
