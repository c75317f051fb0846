package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/audit"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/toolhook"
)

// TestCollectorShowsTheTree forwards the program's calls while the
// collector is down (they are spooled), then starts a real collector (a
// SQLite file) at that address, whose model of the session, read through
// /v1/sessions/{id}/agents, must be the program's tree, every agent
// stopped, once a new Forwarder delivered the spool, and the session ended
// as the program ended it. An export of that session (`hookwatch export`)
// holds the events the program's own audit trail holds, the sub-agents'
// starts and stops among them.
func TestCollectorShowsTheTree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // down: connections are refused
	url := "http://" + addr
	spoolDir := filepath.Join(t.TempDir(), "spool")

	fw, err := toolhook.NewForwarder(toolhook.ForwardOptions{URL: url, SpoolDir: spoolDir})
	if err != nil {
		t.Fatal(err)
	}
	sdkDir := t.TempDir()
	if err := run(context.Background(), sdkDir, fw); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil || fw.Dropped() != 0 {
		t.Fatalf("close: %v, %d dropped", err, fw.Dropped())
	}
	sp, err := spool.Open(spoolDir, spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := sp.Stats(); err != nil || st.PendingBytes == 0 {
		t.Fatalf("nothing spooled while the collector was down: %+v, %v", st, err)
	}

	db := sqlite.MustOpenDB(t)
	srv, err := collector.New(collector.Config{Store: db, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if l, err = net.Listen("tcp", addr); err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(l)
	t.Cleanup(func() {
		hs.Close()
		srv.Shutdown(context.Background())
	})

	fw, err = toolhook.NewForwarder(toolhook.ForwardOptions{URL: url, SpoolDir: spoolDir})
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil || fw.Dropped() != 0 {
		t.Fatalf("close: %v, %d dropped", err, fw.Dropped())
	}
	if st, err := sp.Stats(); err != nil || st.PendingBytes != 0 {
		t.Fatalf("spool not delivered: %+v, %v", st, err)
	}

	want := []string{
		"<- via  depth 0 tools 2 runtime go-sdk ended stopped",
		"worker-a-1<-worker-a via spawn-worker-a-1 depth 2 tools 1 sub-worker stopped",
		"worker-a-2<-worker-a via spawn-worker-a-2 depth 2 tools 1 sub-worker stopped",
		"worker-a<- via spawn-worker-a depth 1 tools 3 worker stopped",
		"worker-b-1<-worker-b via spawn-worker-b-1 depth 2 tools 1 sub-worker stopped",
		"worker-b-2<-worker-b via spawn-worker-b-2 depth 2 tools 1 sub-worker stopped",
		"worker-b<- via spawn-worker-b depth 1 tools 3 worker stopped",
	}
	var got []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got = agents(t, url); slices.Equal(got, want) {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("agents\n got %q\nwant %q", got, want)
	}

	exportDir := t.TempDir()
	w, err := audit.NewWriter(exportDir, audit.WriterOptions{MaxFileBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := audit.ExportSession(context.Background(), db, w, SessionID, nil); err != nil {
		t.Fatal(err)
	}
	sdk, exported := trailEvents(t, sdkDir), trailEvents(t, exportDir)
	// 12 calls, each a PreToolUse and a PostToolUse, 6 sub-agents, each a
	// SubagentStart and a SubagentStop, and the session's end.
	if len(sdk) != 37 || len(exported) != len(sdk) || sdk[" "+event.SessionEnd] == "" || sdk["worker-a-1 "+event.SubagentStop] == "" {
		t.Fatalf("%d events in the program's trail, %d in the export, want 36 and a SessionEnd", len(sdk), len(exported))
	}
	for k, e := range sdk {
		if x := exported[k]; x != e {
			t.Errorf("%s:\n program's %s\n exported  %s", k, e, x)
		}
	}
}

// trailEvents reads the events.jsonl of the session in an audit directory,
// by tool_use_id (an agent's start and stop: agent_id) and event, without what only its writer knows: the
// sequence number, the envelope id, and the chain.
func trailEvents(t *testing.T, dir string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, audit.SessionDir(SessionID), audit.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e audit.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		e.Seq, e.ID = 0, ""
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		// A call's events by its id, an agent's start and stop by the
		// agent's.
		out[cmp.Or(e.ToolUseID, e.AgentID)+" "+e.Event] = string(b)
	}
	return out
}

// agents reads the session's agents from the collector, one line each, the
// main agent's with the session's runtime and status.
func agents(t *testing.T, url string) []string {
	var sess struct {
		Runtime string `json:"runtime"`
		Status  string `json:"status"`
	}
	get(t, url+"/v1/sessions/"+SessionID, &sess)
	var body struct {
		Agents []struct {
			AgentID        string  `json:"agent_id"`
			AgentType      *string `json:"agent_type"`
			ParentAgentID  *string `json:"parent_agent_id"`
			SpawnToolUseID string  `json:"spawn_tool_use_id"`
			Depth          int     `json:"depth"`
			ToolCount      int     `json:"tool_count"`
			StoppedAt      *string `json:"stopped_at"`
		} `json:"agents"`
	}
	get(t, url+"/v1/sessions/"+SessionID+"/agents", &body)
	var out []string
	for _, a := range body.Agents {
		parent, typ := "", "runtime "+sess.Runtime+" "+sess.Status
		if a.ParentAgentID != nil {
			parent = *a.ParentAgentID
		}
		if a.AgentType != nil {
			typ = *a.AgentType
		}
		if a.StoppedAt != nil {
			typ += " stopped"
		}
		out = append(out, fmt.Sprintf("%s<-%s via %s depth %d tools %d %s", a.AgentID, parent, a.SpawnToolUseID, a.Depth, a.ToolCount, typ))
	}
	slices.Sort(out)
	return out
}

func get(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return // not derived yet
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %s: %v", url, resp.Status, err)
	}
}
