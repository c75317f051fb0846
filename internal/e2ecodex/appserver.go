package e2ecodex

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// AppServer is a running `codex app-server`, driven over its stdio
// JSON-RPC (one JSON object a line): what an IDE does, and the only way
// to get approvals (PermissionRequest), interrupts and manual compaction,
// which `codex exec` cannot do. Approval requests are accepted.
type AppServer struct {
	e      *Env
	cmd    *exec.Cmd
	in     io.WriteCloser
	mu     sync.Mutex
	nextID int
	// results gets each response, by id; notes each notification.
	results map[int]chan json.RawMessage
	notes   chan note
	done    chan struct{}
	// Approvals counts the approval requests accepted.
	Approvals int
}

type note struct {
	Method string
	Params json.RawMessage
}

// AppServer starts `codex app-server` in the project directory and
// initializes it; it is ended when the test ends.
func (e *Env) AppServer() *AppServer {
	e.tb.Helper()
	cmd := exec.Command(e.Bin, "app-server")
	cmd.Dir, cmd.Env = e.Project, e.Environ()
	in, err := cmd.StdinPipe()
	if err != nil {
		e.tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.tb.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		e.tb.Fatal(err)
	}
	a := &AppServer{e: e, cmd: cmd, in: in, results: map[int]chan json.RawMessage{}, notes: make(chan note, 4096), done: make(chan struct{})}
	e.tb.Cleanup(func() { a.Close() })
	go a.read(out)
	a.Call("initialize", map[string]any{"clientInfo": map[string]any{"name": "hookwatch-e2e", "version": "0"}})
	a.send(map[string]any{"jsonrpc": "2.0", "method": "initialized"})
	return a
}

func (a *AppServer) read(out io.Reader) {
	defer close(a.done)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var m struct {
			ID     *json.RawMessage `json:"id"`
			Method string           `json:"method"`
			Params json.RawMessage  `json:"params"`
			Result json.RawMessage  `json:"result"`
			Error  json.RawMessage  `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch {
		case m.Method != "" && m.ID != nil: // a request of the server's
			a.mu.Lock()
			a.Approvals++
			a.mu.Unlock()
			a.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"decision": "accept"}})
		case m.Method != "":
			select {
			case a.notes <- note{m.Method, m.Params}:
			default:
			}
		case m.ID != nil:
			var id int
			_ = json.Unmarshal(*m.ID, &id)
			a.mu.Lock()
			ch := a.results[id]
			a.mu.Unlock()
			if ch != nil {
				if len(m.Error) > 0 {
					ch <- m.Error
				} else {
					ch <- m.Result
				}
			}
		}
	}
}

func (a *AppServer) send(v any) {
	b, _ := json.Marshal(v)
	a.mu.Lock()
	defer a.mu.Unlock()
	_, _ = a.in.Write(append(b, '\n'))
}

// Call sends a request and waits (bounded) for its result.
func (a *AppServer) Call(method string, params any) json.RawMessage {
	a.e.tb.Helper()
	a.mu.Lock()
	a.nextID++
	id := a.nextID
	ch := make(chan json.RawMessage, 1)
	a.results[id] = ch
	a.mu.Unlock()
	a.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case r := <-ch:
		return r
	case <-a.done:
		a.e.tb.Fatalf("codex app-server exited before answering %s", method)
	case <-time.After(time.Minute):
		a.e.tb.Fatalf("codex app-server did not answer %s", method)
	}
	return nil
}

// StartThread starts a thread asking for approvals in a workspace-write
// sandbox and returns its id.
func (a *AppServer) StartThread() string {
	a.e.tb.Helper()
	var r struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	raw := a.Call("thread/start", map[string]any{"cwd": a.e.Project, "approvalPolicy": "on-request", "sandbox": "workspace-write"})
	if err := json.Unmarshal(raw, &r); err != nil || r.Thread.ID == "" {
		a.e.tb.Fatalf("thread/start: %s", raw)
	}
	return r.Thread.ID
}

// Fork forks the thread (thread/fork) and returns the new thread's id.
func (a *AppServer) Fork(thread string) string {
	a.e.tb.Helper()
	var r struct {
		Thread struct {
			ID           string `json:"id"`
			ForkedFromID string `json:"forkedFromId"`
		} `json:"thread"`
	}
	raw := a.Call("thread/fork", map[string]any{"threadId": thread})
	if err := json.Unmarshal(raw, &r); err != nil || r.Thread.ID == "" || r.Thread.ForkedFromID != thread {
		a.e.tb.Fatalf("thread/fork: %s", raw)
	}
	return r.Thread.ID
}

// StartTurn sends a prompt and returns the turn's id without waiting.
func (a *AppServer) StartTurn(thread, prompt string) string {
	a.e.tb.Helper()
	var r struct {
		Turn struct {
			ID string `json:"id"`
		} `json:"turn"`
	}
	raw := a.Call("turn/start", map[string]any{"threadId": thread, "input": []any{map[string]any{"type": "text", "text": prompt, "text_elements": []any{}}}})
	if err := json.Unmarshal(raw, &r); err != nil || r.Turn.ID == "" {
		a.e.tb.Fatalf("turn/start: %s", raw)
	}
	return r.Turn.ID
}

// Wait waits for a notification of method and returns its params.
func (a *AppServer) Wait(method string) json.RawMessage {
	a.e.tb.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case n := <-a.notes:
			if n.Method == method {
				return n.Params
			}
		case <-a.done:
			a.e.tb.Fatalf("codex app-server exited while waiting for %s", method)
		case <-timeout:
			a.e.tb.Fatalf("no %s from codex app-server", method)
		}
	}
}

// Turn sends a prompt and waits for the turn to complete.
func (a *AppServer) Turn(thread, prompt string) string {
	a.e.tb.Helper()
	id := a.StartTurn(thread, prompt)
	a.Wait("turn/completed")
	return id
}

// Close closes the server's stdin, on which it ends the session
// (SessionEnd) and exits, and waits for it (bounded).
func (a *AppServer) Close() {
	if a.cmd.ProcessState != nil {
		return
	}
	a.in.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	select {
	case <-a.done:
	case <-ctx.Done():
		_ = a.cmd.Process.Signal(os.Interrupt)
	}
	_ = a.cmd.Wait()
}
