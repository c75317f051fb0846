package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/secrettest"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// secretSession is the session_id of every payload secrettest places.
const secretSession = "0e2e0b5d-7136-4322-8086-c38ed16b10ad"

// TestNoSecretOnDisk places a secret of every kind the redactor knows
// everywhere a payload carries text (secrettest.Placements), written every
// way JSON allows (secrettest.Literals), sends the payloads down every
// ingest path — the hook binary with the collector down (spool), the hook
// with the collector up (the attached spool's fast path and the POST),
// http hooks (POST /v1/hooks/claude), the batch endpoint (POST /v1/events
// with raw, unredacted envelopes) and the spool drain (a collector started
// after the hook spooled) — and then reads every byte under each
// HOOKWATCH_HOME, the database, its WAL and SHM, spool segments, logs,
// rejected files, state and the audit trail (serve --audit-dir in the
// home), while the collector runs and after it stopped,
// and finds none of the secrets, raw, JSON-escaped or unicode-escaped.
//
// Every path stores every payload it was sent, so a path that refused them
// cannot pass for one that redacted them. A process per payload is slow, so
// the hook and http-hook paths send one payload per placement and way of
// writing it, with every secret in it on a line of its own (which one comes
// first rotates); the batch endpoint, cheap per payload, gets every secret
// in every placement alone.
//
// The test can fail: its last step, "redaction off is caught", runs a
// collector with HOOKWATCH_REDACT=0 and requires the same scan to find the
// secrets posted to its batch endpoint.
func TestNoSecretOnDisk(t *testing.T) {
	// The collector inherits this environment: no ambient setting may turn
	// the privacy rules off.
	t.Setenv("HOOKWATCH_REDACT", "")
	t.Setenv("HOOKWATCH_CAPTURE", "")
	hookBin := testbin.Build(t, "./cmd/hookwatch-hook")
	serveBin := testbin.Build(t, "./cmd/hookwatch")
	joined, alone := secretPayloads()

	t.Run("hook, collector down, then the spool drain", func(t *testing.T) {
		home, addr := t.TempDir(), testbin.FreeAddr(t)
		runHooks(t, hookBin, "http://"+addr, func(int) string { return home }, joined)
		if !hasFiles(t, filepath.Join(home, "spool")) {
			t.Fatal("nothing spooled with the collector down")
		}
		noSecretUnder(t, home)
		auditIn(t, home)
		c := testbin.StartCollector(t, serveBin, home, addr)
		storedWithoutSecrets(t, c, len(joined), home)
	})

	t.Run("hook, collector up", func(t *testing.T) {
		home, other := t.TempDir(), t.TempDir()
		auditIn(t, home)
		c := testbin.StartCollector(t, serveBin, home, "")
		// Half the hooks share the collector's home (its attached spool:
		// the fast path), half have their own (a POST).
		runHooks(t, hookBin, c.URL(), func(i int) string {
			if i%2 == 0 {
				return home
			}
			return other
		}, joined)
		storedWithoutSecrets(t, c, len(joined), home, other)
	})

	t.Run("http hooks", func(t *testing.T) {
		home := t.TempDir()
		auditIn(t, home)
		c := testbin.StartCollector(t, serveBin, home, "")
		for _, p := range joined {
			resp, err := http.Post(c.URL()+"/v1/hooks/claude", "application/json", bytes.NewReader(p))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("POST /v1/hooks/claude: HTTP %d for %s", resp.StatusCode, p)
			}
		}
		storedWithoutSecrets(t, c, len(joined), home)
	})

	t.Run("batch endpoint", func(t *testing.T) {
		home := t.TempDir()
		auditIn(t, home)
		c := testbin.StartCollector(t, serveBin, home, "")
		postEnvelopes(t, c.URL(), append(alone, joined...))
		storedWithoutSecrets(t, c, len(alone)+len(joined), home)
	})

	t.Run("imports, the compaction archive and the exports", func(t *testing.T) {
		home, out := t.TempDir(), t.TempDir()
		auditIn(t, home)
		c := testbin.StartCollector(t, serveBin, home, "")
		var texts []string
		for _, s := range secrettest.Samples() {
			texts = append(texts, s.Text)
		}
		all := strings.Join(texts, "\n")

		// A Claude Code session's transcript, its subagents' beside it, with
		// every secret in the prompt, commands, written files and the
		// outputs of Bash and Read; and a Codex rollout, with them in the
		// prompt, the command (JSON text in a string) and its output.
		src := filepath.Join(testbin.ModuleRoot(), "importer", "testdata", "parallel", "projects")
		projects := filepath.Join(t.TempDir(), "projects")
		var transcript string
		err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(src, path)
			dst := filepath.Join(projects, rel)
			if strings.HasSuffix(path, ".jsonl") && !strings.Contains(rel, "subagents") {
				transcript = dst
			}
			return writeFile(dst, plant(t, path, all, "work through the project", "main-0-0", "package main", "# main, turn 0", "a-0-0", "b-0-0", "first half"))
		})
		if err != nil {
			t.Fatal(err)
		}
		rollout := filepath.Join(t.TempDir(), "rollout-2026-11-25T14-46-05-01a2132b-c636-7c31-93a8-aeaecf1768f7.jsonl")
		if err := writeFile(rollout, plant(t, filepath.Join(testbin.ModuleRoot(), "codex", "testdata", filepath.Base(rollout)), all, "do it", "echo hello", "hi.txt")); err != nil {
			t.Fatal(err)
		}
		env := []string{"HOOKWATCH_HOME=" + home, "HOOKWATCH_URL=" + c.URL(), "HOOKWATCH_AUTOSTART=0"}
		hw := func(args ...string) []byte {
			t.Helper()
			cmd := exec.Command(serveBin, args...)
			cmd.Env = append(os.Environ(), env...)
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("hookwatch %s: %v\n%s", strings.Join(args, " "), err, b)
			}
			return b
		}
		hw("import", filepath.Dir(transcript))
		hw("import", "--codex", rollout)

		// The compaction archive: the hook's PreCompact copies the
		// transcript.
		claudeID := strings.TrimSuffix(filepath.Base(transcript), ".jsonl")
		pre, _ := json.Marshal(map[string]string{"session_id": claudeID, "transcript_path": transcript, "cwd": "/tmp/hc-1665870347/c/demo",
			"hook_event_name": "PreCompact", "trigger": "manual", "custom_instructions": ""})
		runHooks(t, hookBin, c.URL(), func(int) string { return home }, [][]byte{pre})
		if !hasFiles(t, filepath.Join(home, "archive")) {
			t.Fatal("the PreCompact hook archived no transcript: the scan cannot cover the archive")
		}

		// Both sessions, stored, exported as the audit trail and as OTLP.
		codexID := "01a2132b-c636-7c31-93a8-aeaecf1768f7"
		for _, id := range []string{claudeID, codexID} {
			for deadline := time.Now().Add(30 * time.Second); len(sessionEvents(t, c.URL(), id)) == 0; time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("session %s: nothing stored", id)
				}
			}
		}
		var mu sync.Mutex
		var spans [][]byte
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			spans = append(spans, b)
			mu.Unlock()
		}))
		defer rcv.Close()
		c.Stop(t) // the exports read what was stored, all of it
		for _, id := range []string{claudeID, codexID} {
			hw("export", "--session", id, "--out", out)
			hw("export", "--session", id, "--format", "otlp", "--otlp-endpoint", rcv.URL)
		}
		noSecretUnder(t, home)
		noSecretUnder(t, out)
		mu.Lock()
		defer mu.Unlock()
		for _, s := range secrettest.Samples() {
			for _, b := range spans {
				if secrettest.Leaks(b, s.Secret) {
					t.Errorf("%s exported in clear in an OTLP span", s.Kind)
					break
				}
			}
		}
		// The secrets were stored, redacted, not left out: the exports say
		// so.
		for _, id := range []string{claudeID, codexID} {
			b, err := os.ReadFile(filepath.Join(out, id, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			for _, kind := range []string{"github_token", "private_key", "password"} {
				if !bytes.Contains(b, []byte("[REDACTED:"+kind+"]")) {
					t.Errorf("session %s: no %s redacted in the exported audit trail", id, kind)
				}
			}
		}
		if len(spans) == 0 || !bytes.Contains(bytes.Join(spans, nil), []byte("[REDACTED:")) {
			t.Error("no OTLP span holds a redacted secret: the scan cannot see a leak there")
		}
	})

	t.Run("redaction off is caught", func(t *testing.T) {
		t.Setenv("HOOKWATCH_REDACT", "0")
		home := t.TempDir()
		auditIn(t, home)
		c := testbin.StartCollector(t, serveBin, home, "")
		postEnvelopes(t, c.URL(), joined)
		waitStored(t, c.URL(), len(joined))
		c.Stop(t)
		found := map[string]bool{}
		for _, s := range secrettest.Samples() {
			if where := secretUnder(t, home, s.Secret); where != "" {
				found[s.Kind] = true
			}
		}
		if len(found) == 0 {
			t.Fatal("with redaction off no secret was found on disk: the scan cannot see a leak")
		}
		if secretUnder(t, filepath.Join(home, "audit"), secrettest.Samples()[0].Secret) == "" {
			t.Error("with redaction off, no secret was found in the audit trail: the scan does not cover it")
		}
		for _, s := range secrettest.Samples() {
			if !found[s.Kind] {
				t.Errorf("with redaction off, no %s was found on disk: the scan misses it", s.Kind)
			}
		}
	})
}

// secretPayloads returns the payloads to send: joined has one per placement
// and way of writing, with every secret on a line of its own, the first
// rotating; alone has one per secret, placement and way of writing.
func secretPayloads() (joined, alone [][]byte) {
	all := secrettest.Samples()
	for _, pl := range secrettest.Placements() {
		for _, l := range secrettest.Literals {
			texts := make([]string, len(all))
			for i := range all {
				texts[i] = all[(i+len(joined))%len(all)].Text
			}
			joined = append(joined, []byte(pl.Payload(l.Lit, strings.Join(texts, "\n"))))
			for _, s := range all {
				alone = append(alone, []byte(pl.Payload(l.Lit, s.Text)))
			}
		}
	}
	return joined, alone
}

// runHooks pipes each payload into its own hook process, four at a time,
// with HOOKWATCH_HOME=home(i) and no autostart.
func runHooks(t *testing.T, hookBin, url string, home func(i int) string, payloads [][]byte) {
	t.Helper()
	var wg sync.WaitGroup
	next := make(chan int)
	errs := make(chan error, len(payloads))
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				cmd := exec.Command(hookBin)
				cmd.Env = []string{"HOOKWATCH_HOME=" + home(i), "HOOKWATCH_URL=" + url, "HOOKWATCH_AUTOSTART=0", "HOOKWATCH_HOOK_BUDGET=5s"}
				cmd.Stdin = bytes.NewReader(payloads[i])
				var out bytes.Buffer
				cmd.Stdout = &out
				if err := cmd.Run(); err != nil || out.Len() > 0 {
					errs <- fmt.Errorf("hook on payload %d: %v, stdout %q", i, err, out.String())
				}
			}
		}()
	}
	for i := range payloads {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// postEnvelopes wraps each payload, unredacted, in an envelope as an older
// hook or a script would, and posts them to /v1/events in batches.
func postEnvelopes(t *testing.T, base string, payloads [][]byte) {
	t.Helper()
	for len(payloads) > 0 {
		n := min(200, len(payloads))
		envs := make([]event.Envelope, n)
		for i, p := range payloads[:n] {
			now := time.Now()
			envs[i] = event.Envelope{ID: event.NewID(now), Runtime: event.RuntimeClaudeCode, Kind: event.KindHook, ReceivedAt: now, Payload: p}
		}
		payloads = payloads[n:]
		body, err := json.Marshal(map[string]any{"envelopes": envs})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post(base+"/v1/events", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST /v1/events: HTTP %d", resp.StatusCode)
		}
	}
}

// waitStored waits until the collector holds want events of the session.
func waitStored(t *testing.T, base string, want int) {
	t.Helper()
	got := 0
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = len(sessionEvents(t, base, secretSession)); got >= want {
			break
		}
	}
	if got != want {
		t.Fatalf("%d events stored, want %d", got, want)
	}
}

// storedWithoutSecrets waits until the collector c holds want events,
// then looks for the secrets under homes while it runs (the WAL and SHM
// files are there) and again once it has stopped.
func storedWithoutSecrets(t *testing.T, c *testbin.Collector, want int, homes ...string) {
	t.Helper()
	waitStored(t, c.URL(), want)
	for _, h := range homes {
		noSecretUnder(t, h)
	}
	c.Stop(t)
	for _, h := range homes {
		noSecretUnder(t, h)
	}
	if !hasFiles(t, filepath.Join(homes[0], "audit")) {
		t.Error("the collector wrote no audit trail: the scan cannot cover it")
	}
}

// auditIn has the collector started next keep its audit trail in home.
func auditIn(t *testing.T, home string) {
	t.Setenv("HOOKWATCH_AUDIT_DIR", filepath.Join(home, "audit"))
}

// noSecretUnder fails the test for every secret found under home.
func noSecretUnder(t *testing.T, home string) {
	t.Helper()
	for _, s := range secrettest.Samples() {
		if where := secretUnder(t, home, s.Secret); where != "" {
			t.Errorf("%s stored in clear: %s", s.Kind, where)
		}
	}
}

// secretUnder reads every file under home and returns where secret is
// found, raw or written any way secrettest.Literals writes it, or in the
// text of a JSON string decoded up to three times; "" if nowhere.
func secretUnder(t *testing.T, home, secret string) string {
	t.Helper()
	var forms [][]byte
	for _, l := range secrettest.Literals {
		q := l.Lit(secret)
		forms = append(forms, []byte(q[1:len(q)-1]))
	}
	var where []string
	err := filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil // directories, and the hook's socket
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(home, path)
		for _, f := range forms {
			if i := bytes.Index(b, f); i >= 0 {
				where = append(where, fmt.Sprintf("%s at byte %d: %q", rel, i, context(b, i, len(f))))
				return nil
			}
		}
		if secrettest.Leaks(b, secret) {
			where = append(where, rel+" (in a decoded JSON string)")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("cannot read %s: %v", home, err)
	}
	return strings.Join(where, "; ")
}

// context is the bytes around b[i:i+n], for a failure message.
func context(b []byte, i, n int) []byte {
	return b[max(0, i-60):min(len(b), i+n+20)]
}

// hasFiles reports whether dir holds a non-empty file.
func hasFiles(t *testing.T, dir string) bool {
	t.Helper()
	found := false
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil && fi.Size() > 0 {
				found = true
			}
		}
		return nil
	})
	return found
}

// plant returns the JSON lines of the file at path with text added, after
// a line break, to every string value that holds one of marks, in strings
// that hold JSON text too (a Codex call's arguments).
func plant(t *testing.T, path, text string, marks ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			if d := json.NewDecoder(strings.NewReader(v)); strings.HasPrefix(v, "{") {
				d.UseNumber()
				var inner any
				if d.Decode(&inner) == nil {
					q, _ := json.Marshal(walk(inner))
					return string(q)
				}
			}
			for _, m := range marks {
				if strings.Contains(v, m) {
					return v + "\n" + text
				}
			}
		case map[string]any:
			for k, x := range v {
				v[k] = walk(x)
			}
		case []any:
			for i, x := range v {
				v[i] = walk(x)
			}
		}
		return v
	}
	var lines [][]byte
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		d := json.NewDecoder(bytes.NewReader(l))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		q, _ := json.Marshal(walk(v))
		lines = append(lines, q)
	}
	return append(bytes.Join(lines, []byte("\n")), '\n')
}

// writeFile writes b to path, 0600, making its directories.
func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}
