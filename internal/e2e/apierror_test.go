package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/claudecode"
	hwevent "github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/ingest"
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
		filepath.Walk(projects, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || filepath.Ext(p) != ".jsonl" {
				return err
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
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
			return nil
		})
		if len(synthetic) != 2 || synthetic[""] == 0 {
			t.Fatalf("error records per agent: %v", synthetic)
		}

		// The hooks: StopFailure for either agent.
		fails := filter(r.events(), "StopFailure", nil)
		var failed []string
		for _, ev := range fails {
			if !slices.Contains(failed, ev.str("agent_id")) {
				failed = append(failed, ev.str("agent_id"))
			}
		}
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
