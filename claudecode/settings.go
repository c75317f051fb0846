package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/hookwatch/hookwatch/internal/regfile"
)

// Settings is what one settings file says that concerns hookwatch.
type Settings struct {
	// Path is the settings file.
	Path string
	// Exists reports whether the file exists.
	Exists bool
	// Hooks are the file's hook handlers, events in name order, each
	// event's handlers in file order. A matcher group or handler Claude
	// Code would not read is left out.
	Hooks []Hook
	// StatusLine is the statusLine's command; "" when there is none.
	StatusLine string
	// EnabledPlugins are the keys of enabledPlugins set to true, sorted.
	EnabledPlugins []string
}

// Hook is one handler of a settings file.
type Hook struct {
	// Event is the key under "hooks" (PreToolUse …).
	Event string
	Handler
}

// MaxConfigBytes bounds a settings or configuration file ReadConfigFile
// reads: a real one is a few KiB.
const MaxConfigBytes = 16 << 20

// ReadConfigFile reads a client's settings or configuration file (Claude
// Code's settings, Codex's hooks file and config.toml). A missing file is
// not an error (exists false). A path a project names may be anything, so
// a file that is not regular (a FIFO, a device: reading it would block or
// never end) or is larger than MaxConfigBytes is an error, and nothing of
// it is read.
func ReadConfigFile(path string) (b []byte, exists bool, err error) {
	b, err = regfile.ReadHead(path, MaxConfigBytes+1)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("cannot read %s: %w", path, err)
	case len(b) > MaxConfigBytes:
		return nil, false, fmt.Errorf("cannot read %s: larger than %d MiB, no settings file", path, MaxConfigBytes>>20)
	}
	return b, true, nil
}

// ReadSettings reads the settings file path. A missing file is not an
// error (Exists is false), and a blank one reads as {}, as Claude Code reads
// it; a file that is not a JSON object is an error. Members of an
// unexpected type read as absent: judging them is the client's business,
// and install's when it edits the file.
func ReadSettings(path string) (*Settings, error) {
	s := &Settings{Path: path}
	b, exists, err := ReadConfigFile(path)
	if !exists || err != nil {
		return s, err
	}
	s.Exists = true
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	if len(bytes.TrimSpace(b)) == 0 {
		return s, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return s, fmt.Errorf("cannot parse %s: %w", path, err)
	}
	if top == nil {
		return s, fmt.Errorf("cannot parse %s: not a JSON object", path)
	}
	var hooks map[string]json.RawMessage
	_ = json.Unmarshal(top["hooks"], &hooks)
	events := make([]string, 0, len(hooks))
	for name := range hooks {
		events = append(events, name)
	}
	slices.Sort(events) // a map loses the file's order; keep a stable one
	for _, name := range events {
		var groups []json.RawMessage
		_ = json.Unmarshal(hooks[name], &groups)
		for _, g := range groups {
			var group struct {
				Hooks []json.RawMessage `json:"hooks"`
			}
			if json.Unmarshal(g, &group) != nil {
				continue
			}
			for _, raw := range group.Hooks {
				if h, ok := ParseHandler(raw); ok {
					s.Hooks = append(s.Hooks, Hook{Event: name, Handler: h})
				}
			}
		}
	}
	var sl struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(top["statusLine"], &sl) == nil {
		s.StatusLine = sl.Command
	}
	var plugins map[string]json.RawMessage
	_ = json.Unmarshal(top["enabledPlugins"], &plugins)
	for k, v := range plugins {
		if strings.TrimSpace(string(v)) == "true" {
			s.EnabledPlugins = append(s.EnabledPlugins, k)
		}
	}
	slices.Sort(s.EnabledPlugins)
	return s, nil
}
