// Command agenttree is a tiny multi-agent program: an orchestrator spawns
// two workers in parallel, each of which spawns two sub-workers in
// parallel, every agent reading one file. Its calls go through a
// toolhook.Executor into an audit trail (the events.jsonl and
// tool_calls.jsonl of `hookwatch export`), where depth and parent
// tool_use_id show the tree,
// and, with -collector, to a hookwatch collector (hookwatch serve, at
// 127.0.0.1:7421 unless told otherwise), which shows the session
// and its agents as it shows Claude Code's.
//
//	go run ./examples/agenttree -audit /tmp/agenttree
//	cat /tmp/agenttree/agenttree-demo/tool_calls.jsonl
//	go run ./examples/agenttree -collector http://127.0.0.1:7421 -spool /tmp/agenttree-spool
//	curl -s http://127.0.0.1:7421/v1/sessions/agenttree-demo/agents
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"

	"github.com/hookwatch/hookwatch/audit"
	"github.com/hookwatch/hookwatch/toolhook"
)

// SessionID is the session the program's calls are recorded under.
const SessionID = "agenttree-demo"

func main() {
	dir := flag.String("audit", "agenttree-audit", "audit directory")
	url := flag.String("collector", "", "collector URL to forward the calls to")
	spoolDir := flag.String("spool", "", "where calls wait while the collector is down")
	flag.Parse()
	if err := main1(*dir, *url, *spoolDir); err != nil {
		fmt.Fprintln(os.Stderr, "agenttree:", err)
		os.Exit(1)
	}
}

func main1(dir, url, spoolDir string) error {
	if url == "" {
		return run(context.Background(), dir, nil)
	}
	fw, err := toolhook.NewForwarder(toolhook.ForwardOptions{URL: url, Token: os.Getenv("HOOKWATCH_TOKEN"), SpoolDir: spoolDir})
	if err != nil {
		return err
	}
	return errors.Join(run(context.Background(), dir, fw), fw.Close())
}

// run runs the agents, recording their calls in the audit trail in dir
// and, if also is not nil, with also.
func run(ctx context.Context, dir string, also toolhook.Recorder) error {
	w, err := audit.NewWriter(dir, audit.WriterOptions{UniqueCalls: true})
	if err != nil {
		return err
	}
	defer w.Close()
	rec := toolhook.NewAuditRecorder(w, toolhook.AuditOptions{})
	x := &toolhook.Executor{SessionID: SessionID, Recorder: rec}
	if also != nil {
		x.Recorder = toolhook.Recorders{rec, also}
	}
	x.Tools = map[string]toolhook.Tool{
		"Read": func(_ context.Context, in map[string]any) (any, error) {
			return fmt.Sprintf("contents of %v", in["file_path"]), nil
		},
		// Task starts a sub-agent, which reads its file and then starts
		// its own sub-agents in parallel.
		"Task": func(ctx context.Context, in map[string]any) (any, error) {
			name := in["agent"].(string)
			actx := toolhook.SpawnAgent(ctx, name, in["type"].(string))
			if _, err := x.Call(actx, "Read", map[string]any{"file_path": name + ".md"}); err != nil {
				return nil, err
			}
			children, _ := in["children"].([]string)
			return name + " done", spawnAll(actx, x, children, "sub-worker")
		},
	}
	if err := spawnAll(toolhook.WithTask(ctx, "build-report"), x, []string{"worker-a", "worker-b"}, "worker"); err != nil {
		return err
	}
	// The report is built: the session is over, for the trail and the
	// collector alike.
	x.EndSession(ctx, "")
	return rec.Flush()
}

// spawnAll runs a Task per agent, in parallel; worker-a and worker-b get
// two sub-workers each.
func spawnAll(ctx context.Context, x *toolhook.Executor, agents []string, typ string) error {
	var wg sync.WaitGroup
	errs := make([]error, len(agents))
	for i, a := range agents {
		wg.Go(func() {
			in := map[string]any{"agent": a, "type": typ}
			if typ == "worker" {
				in["children"] = []string{a + "-1", a + "-2"}
			}
			_, errs[i] = x.CallID(ctx, "Task", "spawn-"+a, in)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
