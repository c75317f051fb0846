package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/claudecode"
	hwevent "github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/internal/testtree"
	"github.com/hookwatch/hookwatch/privacy"
)

// errorRecord is what the test reads of a transcript's assistant record.
type errorRecord struct {
	Type           string `json:"type"`
	AgentID        string `json:"agentId"`
	IsAPIError     bool   `json:"isApiErrorMessage"`
	APIErrorStatus int    `json:"apiErrorStatus"`
	Message        struct {
		ID      string                  `json:"id"`
		Model   string                  `json:"model"`
		Usage   *hwevent.Usage          `json:"usage"`
		Content []struct{ Text string } `json:"content"`
	} `json:"message"`
}

// TestAPIErrorTranscript: a turn the API fails (400) is written to the
// transcript as an assistant record of the client's own, model
// claudecode.SyntheticModel with a usage of zeros, for the main agent and
// for a subagent, and the hooks report it with StopFailure; imported, the
// session counts the real responses only, each agent answered by the one
// real model. HOOKWATCH_E2E_KEEP=DIR keeps the transcripts (the importer's
// testdata/apierror was made so).
func TestAPIErrorTranscript(t *testing.T) {
	EachClient(t, func(t *testing.T, c Client) {
		r := newRecorded(t, c)
		sc := APIErrors()
		r.Model.SetScript(sc.Script)
		// The run the API failed ends in an error result, and exits 1.
		res, err := r.RunContext(context.Background(), sc.Prompt)
		if !res.IsError || res.SessionID == "" {
			t.Fatalf("the failed run: %v, result %s", err, res.JSON)
		}
		res2, err := r.RunContext(context.Background(), "go on", "--resume", res.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		if res2.Text != ResumedAfterErrorText && res2.Text != "done" {
			t.Errorf("the resume answered %q", res2.Text)
		}
		projects := filepath.Join(r.Home, ".claude", "projects")
		if keep := os.Getenv("HOOKWATCH_E2E_KEEP"); keep != "" {
			exec.Command("cp", "-r", projects, filepath.Join(keep, c.Name())).Run()
		}

		// The transcripts: the client's own records, one per agent at
		// least, and the real responses' ids.
		synthetic := map[string]int{} // agent id → error records
		real := map[string]map[string]bool{}
		testtree.Files(t, projects, ".jsonl", func(f io.Reader) {
			s := bufio.NewScanner(f)
			s.Buffer(nil, 64<<20)
			for s.Scan() {
				var rec errorRecord
				if json.Unmarshal(s.Bytes(), &rec) != nil || rec.Type != "assistant" {
					continue
				}
				if rec.Message.Model != claudecode.SyntheticModel {
					if real[rec.AgentID] == nil {
						real[rec.AgentID] = map[string]bool{}
					}
					real[rec.AgentID][rec.Message.ID] = true
					continue
				}
				if !rec.IsAPIError {
					continue // "No response requested." after the resume
				}
				want := "API Error: 400 " + MainAPIError
				if rec.AgentID != "" {
					want = "API Error: 400 " + SubagentAPIError
				}
				if rec.APIErrorStatus != 400 || len(rec.Message.Content) != 1 || rec.Message.Content[0].Text != want {
					t.Errorf("error record of agent %q: %s", rec.AgentID, s.Bytes())
				}
				if u := rec.Message.Usage; u == nil || u.InputTokens+u.OutputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens != 0 {
					t.Errorf("error record of agent %q: usage %+v", rec.AgentID, u)
				}
				synthetic[rec.AgentID]++
			}
		})
		if len(synthetic) != 2 || synthetic[""] == 0 {
			t.Fatalf("error records per agent: %v", synthetic)
		}

		// The hooks: StopFailure for either agent.
		var failed []string
		settle(func() bool {
			failed = nil
			for _, ev := range filter(r.events(), "StopFailure", nil) {
				if !slices.Contains(failed, ev.str("agent_id")) {
					failed = append(failed, ev.str("agent_id"))
				}
			}
			return len(failed) == 2 && slices.Contains(failed, "")
		})
		if len(failed) != 2 || !slices.Contains(failed, "") {
			r.dump()
			t.Fatalf("StopFailure of agents %q", failed)
		}

		// Imported: no response of the client's own.
		files, err := importer.Find([]string{projects})
		if err != nil {
			t.Fatal(err)
		}
		var envs []hwevent.Envelope
		_, err = importer.Run(context.Background(), files, importer.Options{
			Pipeline: &ingest.Pipeline{Origin: ingest.Origin{Host: "h", User: "u", Version: "test"}, Privacy: privacy.DefaultOptions()},
			Deliver: func(_ context.Context, e []hwevent.Envelope) error {
				envs = append(envs, e...)
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		b := attribution.Build(envs)
		if len(b.Sessions) != 1 {
			t.Fatalf("%d sessions", len(b.Sessions))
		}
		for _, a := range b.Sessions[0].Agents {
			if a.Usage == nil {
				t.Fatalf("agent %q: no usage", a.AgentID)
			}
			if slices.Contains(a.Usage.Models, claudecode.SyntheticModel) || len(a.Usage.Models) != 1 ||
				a.Model == "" || strings.Contains(a.Model, "synthetic") {
				t.Errorf("agent %q: model %q, usage models %q", a.AgentID, a.Model, a.Usage.Models)
			}
			if n := len(real[a.AgentID]); a.Usage.Responses != n {
				t.Errorf("agent %q: %d responses, the transcript holds %d", a.AgentID, a.Usage.Responses, n)
			}
		}
	})
}

// TestAPIErrorHooks runs the scenario of TestAPIErrorTranscript with the
// real hook (cmd/hookwatch-hook, its envelopes left in the spool): the
// subagent the API failed is reported by a StopFailure of its agent_id and
// no SubagentStop, and the model of the hooks' envelopes has it stopped,
// failed with the StopFailure's error, its last message the error text.
// HOOKWATCH_E2E_KEEP=DIR keeps the envelopes (DIR/<client>/envelopes.jsonl)
// beside the transcripts (DIR/<client>/projects): attribution's
// testdata/claude-apierror-<version> was made so.
func TestAPIErrorHooks(t *testing.T) {
	built := buildPolicyBins(t)
	EachClient(t, func(t *testing.T, c Client) {
		bins := built
		bins.client = c
		p := newPolicyEnv(t, bins, "")
		sc := APIErrors()
		p.Model.SetScript(sc.Script)
		res, err := p.RunContext(context.Background(), sc.Prompt)
		if !res.IsError || res.SessionID == "" {
			t.Fatalf("the failed run: %v, result %s", err, res.JSON)
		}
		var envs []hwevent.Envelope
		var failed, subStops []string
		var subError string
		// Every turn of the main agent fails here: 2.1.197 runs one,
		// 2.1.332 a second when the background subagent's end is
		// delivered to it as a prompt. The client starts the last turn's
		// StopFailure hook as it exits, after SessionEnd's, and ends it
		// with SIGTERM a tenth of a second later, which the hook outlives
		// to store its event; and 2.1.332 sometimes runs no hook at all
		// for the first turn's. So the look waits for the session's end
		// and the last turn's failure, paired with its prompt by
		// prompt_id: the session is failed once that has landed.
		var lastTurn string             // prompt_id of the last main prompt
		mainFailed := map[string]bool{} // prompt_ids of the main StopFailures
		ended := false
		// Each look drains what the spool holds so far.
		settle(func() bool {
			for _, s := range p.drain() {
				envs = append(envs, s.env)
				switch s.payload.name() {
				case "UserPromptSubmit":
					if s.payload.str("agent_id") == "" {
						lastTurn = s.payload.str("prompt_id")
					}
				case "StopFailure":
					failed = append(failed, s.payload.str("agent_id"))
					if s.payload.str("agent_id") != "" {
						subError = s.payload.str("error")
					} else {
						mainFailed[s.payload.str("prompt_id")] = true
					}
				case "SubagentStop":
					subStops = append(subStops, s.payload.str("agent_id"))
				case "SessionEnd":
					ended = true
				}
			}
			return ended && lastTurn != "" && mainFailed[lastTurn] && slices.ContainsFunc(failed, func(id string) bool { return id != "" })
		})
		if keep := os.Getenv("HOOKWATCH_E2E_KEEP"); keep != "" {
			dir := filepath.Join(keep, c.Name())
			os.MkdirAll(dir, 0o755)
			var b strings.Builder
			for _, e := range envs {
				line, _ := json.Marshal(e)
				b.Write(append(line, '\n'))
			}
			writeFile(t, filepath.Join(dir, "envelopes.jsonl"), b.String())
			exec.Command("cp", "-r", filepath.Join(p.Home, ".claude", "projects"), dir).Run()
		}
		var sub string
		for _, id := range failed {
			if id != "" {
				sub = id
			}
		}
		if sub == "" || !ended || lastTurn == "" || !mainFailed[lastTurn] || len(subStops) != 0 {
			t.Fatalf("StopFailure of agents %q (the main agent's of prompts %v; the last prompt %q), session ended %v, SubagentStop of %q", failed, mainFailed, lastTurn, ended, subStops)
		}

		b := attribution.Build(envs)
		s := b.Session(res.SessionID)
		if s == nil {
			t.Fatalf("no session %s", res.SessionID)
		}
		if s.Status != attribution.SessionFailed {
			t.Errorf("session status %q", s.Status)
		}
		for _, a := range s.Agents {
			if a.AgentID != sub {
				continue
			}
			if a.StoppedAt == nil || subError == "" || a.StopError != subError || a.LastMessage != "API Error: 400 "+SubagentAPIError {
				t.Errorf("the failed subagent: stopped %v, error %q (the hook's %q), last message %q", a.StoppedAt, a.StopError, subError, a.LastMessage)
			}
			// The parent's Agent call: the client reports it completed
			// (PostToolUse), its result the error text; run in the
			// foreground, it returns once the agent stopped. The two
			// times are the stamps of two hook processes the client
			// starts one after the other without waiting for
			// StopFailure's (its output is ignored), so the PostToolUse
			// may be stamped a few milliseconds first.
			const hookJitter = 100 * time.Millisecond
			for _, c := range s.ToolCalls {
				if c.ToolUseID != a.SpawnToolUseID {
					continue
				}
				if c.Status != attribution.StatusOK || c.EndedAt == nil || !a.Background && a.StoppedAt != nil && c.EndedAt.Before(a.StoppedAt.Add(-hookJitter)) {
					t.Errorf("the spawning call %s: %s, ended %v; the agent stopped %v", c.ToolUseID, c.Status, c.EndedAt, a.StoppedAt)
				}
				return
			}
			t.Errorf("no spawning call %q of the failed subagent", a.SpawnToolUseID)
			return
		}
		t.Errorf("no agent %s", sub)
	})
}
