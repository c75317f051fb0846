package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
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
