package hook

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusal: what a client shows of a refusal is the collector's
// {"error": …} only, one printable line within maxRefusal characters, never
// the token sent nor a secret, whatever a hostile server answers.
func TestRefusal(t *testing.T) {
	const sent = "hwt_sent-token-0123456789abcdef"
	long := strings.Repeat("x", 2*maxRefusal)
	for _, tc := range []struct {
		body, want string
	}{
		{`{"error":"unknown bearer token: a wrong or mistyped one"}`, "unknown bearer token: a wrong or mistyped one"},
		{`{"error":"your token ` + sent + ` is revoked"}`, "your token [REDACTED:token] is revoked"},
		{`{"error":"line one\nline two\u001b[31m\u0007 red"}`, "line one line two [31m red"},
		{`{"error":"` + long + `"}`, long[:maxRefusal-1] + "…"},
		{`<html><body>401 Unauthorized</body></html>`, ""},
		{`{"error":""}`, ""},
		{``, ""},
	} {
		if got := Refusal([]byte(tc.body), sent); got != tc.want {
			t.Errorf("Refusal(%.60q) = %q, want %q", tc.body, got, tc.want)
		}
	}
	got := Refusal([]byte(`{"error":"try AKIAIOSFODNN7EXAMPLE with password=hunter2hunter2"}`), sent)
	if strings.Contains(got, "AKIAIOSFODNN7EXAMPLE") || !strings.Contains(got, "[REDACTED") {
		t.Errorf("a secret in the answer is quoted as is: %q", got)
	}
}

// TestRejectRotates: rejected.jsonl past maxLogBytes is rotated to
// rejected.jsonl.1 before the next refused envelope is kept, as hook.log is,
// so a collector that refuses every event cannot fill the disk.
func TestRejectRotates(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "rejected.jsonl")
	old := []byte(strings.Repeat("x", maxLogBytes) + "\n")
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	rec := []byte(`{"id":"refused"}`)
	if err := Reject(home, [][]byte{rec}, errors.New("refused")); errors.Is(err, ErrNotKept) {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != string(rec)+"\n" {
		t.Fatalf("rejected.jsonl = %.40q (%v), want only the new envelope", b, err)
	}
	if fi, err := os.Stat(path + ".1"); err != nil || fi.Size() != int64(len(old)) {
		t.Fatalf("rejected.jsonl.1: %v %v, want the old file", fi, err)
	}
}
