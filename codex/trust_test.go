package codex

import (
	"strings"
	"testing"
)

func TestHookKey(t *testing.T) {
	f := func(event, want string) {
		t.Helper()
		if got := HookKey("/h/.codex/hooks.json", event, 1, 0); got != want {
			t.Errorf("HookKey(%s) = %q, want %q", event, got, want)
		}
	}
	// The keys Codex 0.169's hooks/list reported.
	f("PreToolUse", "/h/.codex/hooks.json:pre_tool_use:1:0")
	f("SessionStart", "/h/.codex/hooks.json:session_start:1:0")
	f("PostCompact", "/h/.codex/hooks.json:post_compact:1:0")
	f("Stop", "/h/.codex/hooks.json:stop:1:0")
}

func TestTrustRoundTrip(t *testing.T) {
	const key, key2 = "/h/.codex/hooks.json:stop:1:0", "/h/.codex/hooks.json:pre_tool_use:1:0"
	f := func(config string) {
		t.Helper()
		b, ok := SetTrust([]byte(config), key, "sha256:aa")
		if !ok {
			t.Fatalf("SetTrust(%q) refused", config)
		}
		b, _ = SetTrust(b, key2, "sha256:bb")
		// Trusting again (a new hash) replaces the table.
		b, _ = SetTrust(b, key, "sha256:cc")
		want := config + "\n[hooks.state.\"" + key2 + "\"]\ntrusted_hash = \"sha256:bb\"\n" + "\n[hooks.state.\"" + key + "\"]\ntrusted_hash = \"sha256:cc\"\n"
		if string(b) != want {
			t.Errorf("SetTrust(%q)\n got %q\nwant %q", config, b, want)
		}
		b, ok1 := RemoveTrust(b, key)
		b, ok2 := RemoveTrust(b, key2)
		if !ok1 || !ok2 || string(b) != config {
			t.Errorf("RemoveTrust gave %q, want %q", b, config)
		}
	}
	f("")
	f("model = \"gpt-5.5\"\n")
	f("model = \"gpt-5.5\"") // no final newline
	f("[profiles.x]\nmodel = \"o3\"\n\n")

	// A table of the user's for the same key is left alone.
	user := "[hooks.state.\"" + key + "\"]\ntrusted_hash = \"sha256:zz\"\nnote = 1\n"
	if b, ok := SetTrust([]byte(user), key, "sha256:aa"); ok || string(b) != user {
		t.Errorf("SetTrust over the user's table: %q %v", b, ok)
	}
	if b, ok := RemoveTrust([]byte("x = 1\n"+user), key); ok || string(b) != "x = 1\n"+user {
		t.Errorf("RemoveTrust of the user's table: %q %v", b, ok)
	}
}

// TestProjectTrust: the project's trust is appended once, taken out byte
// for byte, and a table of the user's for the project is left alone.
func TestProjectTrust(t *testing.T) {
	const user = "model = \"o3\"\n\n[projects.\"/other\"]\ntrust_level = \"trusted\"\n"
	out, changed := SetProjectTrust([]byte(user), "/home/dev/proj")
	if !changed || !strings.Contains(string(out), "[projects.\"/home/dev/proj\"]\ntrust_level = \"trusted\"\n") {
		t.Fatalf("trusted:\n%s", out)
	}
	if again, changed := SetProjectTrust(out, "/home/dev/proj"); changed || string(again) != string(out) {
		t.Errorf("trusted twice:\n%s", again)
	}
	back, removed := RemoveProjectTrust(out, "/home/dev/proj")
	if !removed || string(back) != user {
		t.Errorf("removed %v:\n%q\nwant\n%q", removed, back, user)
	}
	if out, changed := SetProjectTrust([]byte(user), "/other"); changed || string(out) != user {
		t.Errorf("the user's table was changed:\n%s", out)
	}
	if out, removed := RemoveProjectTrust([]byte(user), "/other"); removed || string(out) != user {
		t.Errorf("the user's table was removed:\n%s", out)
	}
}
