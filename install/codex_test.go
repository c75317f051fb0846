package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/event"
)

// TestCodexRoundTrip: Codex's hooks.json gets a group per Codex event
// beside the user's, the trust Codex reports is recorded for hookwatch's
// handlers only, and uninstall gives both files back byte for byte.
func TestCodexRoundTrip(t *testing.T) {
	home := t.TempDir()
	hooksFile, config := filepath.Join(home, "hooks.json"), filepath.Join(home, "config.toml")
	userHooks := "{\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}]\n  }\n}\n"
	userConfig := "model = \"gpt-5.5\"\n\n[hooks.state.\"" + hooksFile + ":stop:0:0\"]\ntrusted_hash = \"sha256:user\"\n"
	if err := os.WriteFile(hooksFile, []byte(userHooks), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte(userConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{Runtime: event.RuntimeCodex, ConfigDir: home, Binary: "/opt/hw/hookwatch-hook"}
	r, err := Install(o)
	if err != nil || !r.Changed {
		t.Fatalf("Install: %+v %v", r, err)
	}
	b, _ := os.ReadFile(hooksFile)
	for _, want := range []string{`"notify-send done"`, `"command": "/opt/hw/hookwatch-hook hook"`, `"matcher": "*"`, `"Interrupt"`, `"timeout": 3`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("hooks.json lacks %s:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "StopFailure") || strings.Contains(string(b), `"args"`) {
		t.Errorf("hooks.json has what Codex does not know:\n%s", b)
	}
	keys, err := CodexKeys(o)
	if err != nil || len(keys) != len(event.CodexEvents) || !strings.Contains(strings.Join(keys, " "), hooksFile+":stop:1:0") {
		t.Fatalf("keys %v %v", keys, err)
	}
	// What hooks/list would say: the user's hook trusted, ours not.
	hooks := []codex.Hook{{Key: hooksFile + ":stop:0:0", CurrentHash: "sha256:user", TrustStatus: "trusted"}}
	for _, k := range keys {
		hooks = append(hooks, codex.Hook{Key: k, CurrentHash: "sha256:" + k[len(hooksFile):], TrustStatus: "untrusted"})
	}
	if r, err := TrustCodex(Options{Runtime: event.RuntimeCodex, ConfigDir: home, Binary: o.Binary, DryRun: true}, hooks); err != nil || !r.Changed {
		t.Fatalf("TrustCodex dry: %+v %v", r, err)
	}
	if b, _ := os.ReadFile(config); string(b) != userConfig {
		t.Fatal("the dry run wrote config.toml")
	}
	if r, err := TrustCodex(o, hooks); err != nil || !r.Changed || len(r.Notes) > 0 {
		t.Fatalf("TrustCodex: %+v %v", r, err)
	}
	b, _ = os.ReadFile(config)
	if n := strings.Count(string(b), "[hooks.state."); n != 1+len(keys) {
		t.Errorf("%d trust tables:\n%s", n, b)
	}
	if _, err := UntrustCodex(o); err != nil {
		t.Fatal(err)
	}
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(hooksFile); string(b) != userHooks {
		t.Errorf("hooks.json after uninstall:\n%s", b)
	}
	if b, _ := os.ReadFile(config); string(b) != userConfig {
		t.Errorf("config.toml after uninstall:\n%s", b)
	}
	// Codex has no local scope and no http hooks.
	if _, err := Install(Options{Runtime: event.RuntimeCodex, Scope: "local", ConfigDir: home, Binary: o.Binary}); err == nil {
		t.Error("local scope accepted")
	}
	if _, err := Install(Options{Runtime: event.RuntimeCodex, Mode: ModeHTTP, ConfigDir: home, Binary: o.Binary}); err == nil {
		t.Error("http mode accepted")
	}
}

// TestCodexUninstallLeavesNothing: on a Codex home that held neither
// file, install and trust then uninstall leave it as it was: empty, and
// there. Neither file stays behind empty, and the directory, which the
// user (or Codex) made, is not removed with them.
func TestCodexUninstallLeavesNothing(t *testing.T) {
	home := t.TempDir()
	o := Options{Runtime: event.RuntimeCodex, ConfigDir: home, Binary: "/opt/hw/hookwatch-hook"}
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	keys, err := CodexKeys(o)
	if err != nil {
		t.Fatal(err)
	}
	var hooks []codex.Hook
	for _, k := range keys {
		hooks = append(hooks, codex.Hook{Key: k, CurrentHash: "sha256:x", TrustStatus: "untrusted"})
	}
	if r, err := TrustCodex(o, hooks); err != nil || !r.Created {
		t.Fatalf("TrustCodex: %+v %v", r, err)
	}
	if r, err := UntrustCodex(Options{Runtime: event.RuntimeCodex, ConfigDir: home, Binary: o.Binary, DryRun: true}); err != nil || !r.Removed {
		t.Fatalf("UntrustCodex dry: %+v %v", r, err)
	}
	if r, err := UntrustCodex(o); err != nil || !r.Removed {
		t.Fatalf("UntrustCodex: %+v %v", r, err)
	}
	if r, err := Uninstall(o); err != nil || !r.Removed {
		t.Fatalf("Uninstall: %+v %v", r, err)
	}
	ents, err := os.ReadDir(home)
	if err != nil || len(ents) != 0 {
		t.Fatalf("the Codex home after uninstall: %v %v, want it there and empty", ents, err)
	}
}
