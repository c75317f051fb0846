package hooksock

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestRequestRoundTrip(t *testing.T) {
	for _, r := range []Request{
		{},
		{ProjectPolicy: "/src/demo/.hookwatch/policy.yaml", Payload: []byte(`{"hook_event_name":"PreToolUse"}`)},
		{ProjectPolicy: "/odd\ndir/\"quoted\"/.hookwatch/policy.yaml", Payload: []byte("{\n  \"a\": \"line\\nbreak\"\n}\n")},
	} {
		got, err := ParseRequest(AppendRequest(nil, r))
		if err != nil || got.ProjectPolicy != r.ProjectPolicy || !bytes.Equal(got.Payload, r.Payload) {
			t.Errorf("round trip of %+v = %+v, %v", r, got, err)
		}
	}
	for _, bad := range []string{"", "GET / HTTP/1.1\r\n\r\n", magic, magic + "/no/quotes\n{}", magic + "\"unterminated\n{}"} {
		if _, err := ParseRequest([]byte(bad)); err == nil {
			t.Errorf("ParseRequest(%q) accepted it", bad)
		}
	}
}

func TestReplyRoundTrip(t *testing.T) {
	for _, r := range []Reply{
		{Addr: "127.0.0.1:7421"},
		{Addr: "[::1]:7421", Code: 0, Audit: json.RawMessage(`{"action":"deny","rule_ids":["a"]}`),
			Stdout: []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}`)},
		{Code: 2, Audit: json.RawMessage(`{"action":"block"}`), Stdout: []byte("line one\nline two\n")},
	} {
		got, err := ParseReply(AppendReply(nil, r))
		if err != nil || got.Addr != r.Addr || got.Code != r.Code || !bytes.Equal(got.Audit, r.Audit) || !bytes.Equal(got.Stdout, r.Stdout) {
			t.Errorf("round trip of %+v = %+v, %v", r, got, err)
		}
	}
	// An audit record that spans lines is made one.
	got, err := ParseReply(AppendReply(nil, Reply{Audit: json.RawMessage("{\n\"a\": 1\n}")}))
	if err != nil || string(got.Audit) != `{"a": 1}` {
		t.Errorf("multi-line audit: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "addr", "addr\n0", "addr\nx\n\n", "addr\n0\n{not json}\n", "addr\n0\nno newline after"} {
		if _, err := ParseReply([]byte(bad)); err == nil {
			t.Errorf("ParseReply(%q) accepted it", bad)
		}
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add(AppendRequest(nil, Request{ProjectPolicy: "/p/.hookwatch/policy.yaml", Payload: []byte(`{"a":1}`)}))
	f.Add([]byte(magic + "\"\\u0000\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRequest(b)
		if err != nil {
			return
		}
		again, err := ParseRequest(AppendRequest(nil, r))
		if err != nil || again.ProjectPolicy != r.ProjectPolicy || !bytes.Equal(again.Payload, r.Payload) {
			t.Fatalf("%q parsed as %+v, which re-encodes to %+v, %v", b, r, again, err)
		}
	})
}

func FuzzParseReply(f *testing.F) {
	f.Add([]byte("127.0.0.1:7421\n0\n\n"))
	f.Add(AppendReply(nil, Reply{Addr: "a", Code: 2, Audit: json.RawMessage(`{"a":1}`), Stdout: []byte("out")}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseReply(b)
		if err != nil {
			return
		}
		if len(r.Audit) > 0 && !json.Valid(r.Audit) {
			t.Fatalf("accepted invalid audit %q", r.Audit)
		}
		again, err := ParseReply(AppendReply(nil, r))
		if err != nil || again.Addr != r.Addr || again.Code != r.Code || !bytes.Equal(again.Audit, r.Audit) || !bytes.Equal(again.Stdout, r.Stdout) {
			t.Fatalf("%q parsed as %+v, which re-encodes to %+v, %v", b, r, again, err)
		}
	})
}

// serve starts a Server on a socket in a fresh directory and returns its
// path and what it logged.
func serve(t testing.TB, handle Handler) (string, *Server, func() []string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "hooksock") // short: socket paths are bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := Path(dir)
	s, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var logged []string
	s.Serve(handle, func(err error) { mu.Lock(); logged = append(logged, err.Error()); mu.Unlock() })
	t.Cleanup(func() { s.Close() })
	return path, s, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), logged...) }
}

// echo answers with what it was asked, so a test sees the request arrived whole.
func echo(r Request) Reply {
	return Reply{Addr: "127.0.0.1:7421", Code: len(r.Payload), Audit: json.RawMessage(`{"project":` + string(mustJSON(r.ProjectPolicy)) + `}`), Stdout: r.Payload}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func TestAskAndAnswer(t *testing.T) {
	path, _, logged := serve(t, echo)
	if fi, err := os.Stat(path); err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %s: %v, %v; want a socket only its owner can use", path, fi.Mode(), err)
	}
	big := bytes.Repeat([]byte("x"), 3<<20) // larger than any socket buffer
	payload := append(append([]byte(`{"tool_response":"`), big...), `"}`...)
	var wg sync.WaitGroup
	for i := range 16 { // parallel subagents: more than the threads
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := []byte(`{"n":1}`)
			if i == 0 {
				p = payload
			}
			r, err := Ask(path, Request{ProjectPolicy: "/p/.hookwatch/policy.yaml", Payload: p}, time.Now().Add(10*time.Second))
			if err != nil || r.Code != len(p) || !bytes.Equal(r.Stdout, p) || string(r.Audit) != `{"project":"/p/.hookwatch/policy.yaml"}` || r.Addr != "127.0.0.1:7421" {
				t.Errorf("ask %d: code %d, audit %s, addr %q, %d bytes of stdout, %v", i, r.Code, r.Audit, r.Addr, len(r.Stdout), err)
			}
		}()
	}
	wg.Wait()
	if l := logged(); len(l) > 0 {
		t.Errorf("logged %q", l)
	}
}

func TestStalledClientsDoNotStopAnswers(t *testing.T) {
	path, _, _ := serve(t, echo)
	// Clients that connect and never finish their request hold a thread
	// each until the I/O timeout; the rest keep answering.
	for range threads - 1 {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(fd)
		if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	if _, err := Ask(path, Request{Payload: []byte(`{}`)}, time.Now().Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= ioTimeout {
		t.Errorf("the answer waited %v, behind the stalled clients", d)
	}
}

func TestBadRequestsAreLoggedNotAnswered(t *testing.T) {
	path, _, logged := serve(t, func(r Request) Reply {
		if string(r.Payload) == "panic" {
			panic("boom")
		}
		return echo(r)
	})
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	syscall.Write(fd, []byte("GET / HTTP/1.1\r\n\r\n"))
	syscall.Shutdown(fd, syscall.SHUT_WR)
	var buf [64]byte
	if n, _ := syscall.Read(fd, buf[:]); n != 0 {
		t.Errorf("a stray client got %q", buf[:n])
	}
	syscall.Close(fd)
	if _, err := Ask(path, Request{Payload: []byte("panic")}, time.Now().Add(5*time.Second)); err == nil {
		t.Error("a handler's panic produced an answer")
	}
	// Still serving.
	if _, err := Ask(path, Request{Payload: []byte(`{}`)}, time.Now().Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	l := strings.Join(logged(), "\n")
	if !strings.Contains(l, "not a hook socket request") || !strings.Contains(l, "panic answering a hook: boom") {
		t.Errorf("logged %q", l)
	}
}

func TestCloseRemovesTheSocket(t *testing.T) {
	path, s, _ := serve(t, echo)
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return: its threads stayed in accept(2)")
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
	if _, err := Ask(path, Request{Payload: []byte(`{}`)}, time.Now().Add(time.Second)); !errors.Is(err, ErrNoCollector) {
		t.Errorf("Ask after Close: %v, want ErrNoCollector", err)
	}
}

func TestStaleSocketIsReplaced(t *testing.T) {
	dir, err := os.MkdirTemp("", "hooksock")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := Path(dir)
	// A collector that died leaves its socket: nothing listens behind it.
	dead, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Close(dead.fd)
	if _, err := Ask(path, Request{Payload: []byte(`{}`)}, time.Now().Add(time.Second)); !errors.Is(err, ErrNoCollector) {
		t.Errorf("Ask on a dead socket: %v, want ErrNoCollector", err)
	}
	s, err := Listen(path)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	s.Serve(echo, func(err error) { t.Error(err) })
	defer s.Close()
	if _, err := Ask(path, Request{Payload: []byte(`{}`)}, time.Now().Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
}

func TestTooLongAPath(t *testing.T) {
	path := filepath.Join("/tmp", strings.Repeat("d", maxPathLen), FileName)
	if _, err := Listen(path); err == nil || !strings.Contains(err.Error(), "HOOKWATCH_HOME") {
		t.Errorf("Listen(%d bytes): %v, want an error naming the fix", len(path), err)
	}
	if _, err := Ask(path, Request{}, time.Now().Add(time.Second)); !errors.Is(err, ErrNoCollector) {
		t.Errorf("Ask: %v, want ErrNoCollector", err)
	}
}

// BenchmarkAsk is one question and answer over the socket, the handler
// answering at once: the transport's share of a policy answer (warm; a hook
// process pays it cold, and the wake-up of an idle collector on top).
func BenchmarkAsk(b *testing.B) {
	path, _, _ := serve(b, echo)
	payload, err := os.ReadFile("../internal/bench/testdata/pretooluse.json")
	if err != nil {
		b.Fatal(err)
	}
	req := Request{ProjectPolicy: "/src/demo/.hookwatch/policy.yaml", Payload: payload}
	for b.Loop() {
		if _, err := Ask(path, req, time.Now().Add(5*time.Second)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSocketIsPrivate: whatever the umask, the socket only ever exists under
// its name with mode 0600, and leaves no temporary name behind.
func TestSocketIsPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	path, _, _ := serve(t, echo)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %s: %v, %v; want mode 0600", path, fi.Mode(), err)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil || len(entries) != 1 || entries[0].Name() != FileName {
		t.Errorf("the socket's directory holds %v, %v; want only %s", entries, err, FileName)
	}
}
