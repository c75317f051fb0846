package install

import (
	"strings"
	"testing"
)

func TestClientSupport(t *testing.T) {
	f := func(version string, want Support, says string) {
		t.Helper()
		v, _ := ParseVersion(version)
		got := ClientSupport(v)
		if got != want || !strings.Contains(got.Explain(v), says) {
			t.Errorf("ClientSupport(%q) = %s: %q; want %s saying %q", version, got, got.Explain(v), want, says)
		}
	}
	f("", SupportUnknown, "supports tested 2.1.197 to 2.1.332")
	f("no digits", SupportUnknown, "the version is unknown")
	f("1.0.62", Unsupported, "1.0.62 is older than the oldest supported version")
	f("2.1.196 (Claude Code)", Unsupported, "older")
	f("2.1.197 (Claude Code)", Supported, "2.1.197 is supported (tested 2.1.197 to 2.1.332)")
	f("2.1.268", Supported, "supported")
	f("2.1.332 (Claude Code)", Supported, "supported")
	f("2.1.333", Untested, "2.1.333 is newer than the newest tested version")
	f("3.0", Untested, "expected to work, untested")
	f("2.1", Unsupported, "older") // 2.1.0
}

// TestPluginMinIsOldestTested keeps the plugin's event list that of the
// oldest supported client: a plugin's hooks file loads only if the client
// knows every event it names.
func TestPluginMinIsOldestTested(t *testing.T) {
	if v, _ := ParseVersion(PluginMinClaudeVersion); v.Compare(OldestTestedClient) != 0 {
		t.Fatalf("PluginMinClaudeVersion %s, the oldest tested client %s", PluginMinClaudeVersion, OldestTestedClient)
	}
}
