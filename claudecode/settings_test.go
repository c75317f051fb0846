package claudecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadSettings(t *testing.T) {
	dir := t.TempDir()
	f := func(content string, want ...string) {
		t.Helper()
		path := filepath.Join(dir, "settings.json")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadSettings(path)
		if err != nil || !s.Exists {
			t.Fatalf("ReadSettings(%s): %+v, %v", content, s, err)
		}
		var got []string
		for _, h := range s.Hooks {
			got = append(got, h.Event+" "+h.Type+" "+h.Command+h.URL+" "+strings.Join(h.Args, ","))
		}
		if s.StatusLine != "" {
			got = append(got, "statusLine "+s.StatusLine)
		}
		for _, p := range s.EnabledPlugins {
			got = append(got, "plugin "+p)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("ReadSettings(%s):\n%s\nwant:\n%s", content, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	f(``)
	f("  \n")
	f(`{}`)
	f("\ufeff{\"hooks\": {}}")
	// Events in name order, handlers in file order, groups Claude Code
	// would not read skipped one by one.
	f(`{"hooks": {
		"Stop": [{"hooks": [{"type": "command", "command": "/opt/hookwatch", "args": ["hook"]}]}],
		"PreToolUse": [
			{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/guard.sh"}, "not an object", 42,
				{"type": "http", "url": "http://127.0.0.1:7421/v1/hooks/claude"}]},
			"not a group",
			{"hooks": "not an array"},
			{"matcher": "*", "hooks": [{"type": "prompt", "prompt": "check"}]}
		],
		"Notification": "not an array"
	}}`,
		"PreToolUse command ~/guard.sh ",
		"PreToolUse http http://127.0.0.1:7421/v1/hooks/claude ",
		"PreToolUse prompt  ",
		"Stop command /opt/hookwatch hook")
	f(`{"hooks": [], "statusLine": {"type": "command", "command": "'/x/hookwatch' statusline"}, "enabledPlugins": {"hookwatch@hookwatch": true, "hookwatch@old": false, "other@x": true, "odd@x": "true"}}`,
		"statusLine '/x/hookwatch' statusline", "plugin hookwatch@hookwatch", "plugin other@x")
	f(`{"statusLine": "oops", "enabledPlugins": []}`)

	bad := func(content, msg string) {
		t.Helper()
		path := filepath.Join(dir, "bad.json")
		os.WriteFile(path, []byte(content), 0o644)
		if _, err := ReadSettings(path); err == nil || !strings.Contains(err.Error(), msg) {
			t.Fatalf("ReadSettings(%s): %v; want %q", content, err, msg)
		}
	}
	bad(`{"hooks": `, "cannot parse "+filepath.Join(dir, "bad.json"))
	bad(`null`, "not a JSON object")
	bad(`[]`, "cannot parse")

	s, err := ReadSettings(filepath.Join(dir, "missing.json"))
	if err != nil || s.Exists {
		t.Fatalf("ReadSettings of a missing file: %+v, %v", s, err)
	}
}
