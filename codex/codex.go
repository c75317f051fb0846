// Package codex holds what hookwatch knows of the OpenAI Codex CLI's side:
// where its home and hooks files are, the events its hooks file registers,
// and how Codex itself reports and trusts the hooks it found (its
// app-server's hooks/list), which is what makes a hook run at all: Codex
// skips an untrusted hook silently.
package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// HomeEnv names the variable that moves Codex's home (default ~/.codex).
const HomeEnv = "CODEX_HOME"

// Home returns Codex's home directory: $CODEX_HOME, else ~/.codex.
func Home(getenv func(string) string) (string, error) {
	if h := getenv(HomeEnv); h != "" {
		return h, nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("cannot find the home directory: %w", err)
		}
	}
	return filepath.Join(home, ".codex"), nil
}

// SessionsDir returns where Codex keeps its rollout files (its sessions):
// <Home>/sessions, in YYYY/MM/DD directories below.
func SessionsDir(getenv func(string) string) (string, error) {
	home, err := Home(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "sessions"), nil
}

// Hooks files and the config file, relative to Codex's home (user scope)
// or to a project (project scope: <project>/.codex/hooks.json).
const (
	HooksFileName  = "hooks.json"
	ConfigFileName = "config.toml"
	ProjectDirName = ".codex"
)

// Matched reports whether Codex matches an event's hooks against a tool
// name, so that a hooks file gives its groups a "matcher".
func Matched(event string) bool {
	switch event {
	case "PreToolUse", "PermissionRequest", "PostToolUse":
		return true
	}
	return false
}

// Hook is one hook handler as Codex's app-server reports it (hooks/list).
type Hook struct {
	// Key names the handler in config.toml's [hooks.state."<key>"]:
	// <source path>:<event in snake case>:<group index>:<handler index>.
	Key       string `json:"key"`
	EventName string `json:"eventName"`
	Command   string `json:"command"`
	// SourcePath is the hooks file the handler is in; Source says whose it
	// is (user, project, …).
	SourcePath string `json:"sourcePath"`
	Source     string `json:"source"`
	// CurrentHash is the hash trust is recorded with (not a plain hash of
	// the handler: only Codex computes it).
	CurrentHash string `json:"currentHash"`
	// TrustStatus is "trusted" or "untrusted" (Codex skips it).
	TrustStatus string `json:"trustStatus"`
	IsManaged   bool   `json:"isManaged"`
	// Enabled is false for a hook the user turned off (Codex's /hooks
	// review, or enabled = false in its [hooks.state] table); nil when
	// Codex did not say.
	Enabled *bool `json:"enabled"`
}

// Trusted reports whether Codex trusts the hook, which it must to run it.
func (h Hook) Trusted() bool { return h.TrustStatus == "trusted" || h.IsManaged }

// Off reports whether the hook is turned off: Codex skips it, trusted or
// not.
func (h Hook) Off() bool { return h.Enabled != nil && !*h.Enabled }

// Event returns the hook's event as hooks files name it: Codex's
// hooks/list writes preToolUse for PreToolUse.
func (h Hook) Event() string {
	if h.EventName == "" {
		return ""
	}
	return strings.ToUpper(h.EventName[:1]) + h.EventName[1:]
}

// OffEvents returns the events of the hooks that are turned off, in the
// order given.
func OffEvents(hooks []Hook) []string {
	var out []string
	for _, h := range hooks {
		if h.Off() {
			out = append(out, h.Event())
		}
	}
	return out
}

// listTimeout bounds one hooks/list round trip: the app-server answers in
// well under a second.
const listTimeout = 20 * time.Second

// ErrHooksOff is what ListHooks returns when Codex's hooks feature is
// turned off in its configuration: Codex then lists and runs no hook at
// all, trusted or not, whatever its hooks files say.
var ErrHooksOff = errors.New("Codex's hooks feature is off ([features] hooks = false, or codex_hooks = false): Codex runs no hook at all")

// LoadError is what ListHooks returns when Codex lists no hook and says
// why: its configuration or a hooks file it could not load (Codex then
// runs on its defaults, and no hook of those files runs). Messages are
// Codex's own, each naming the file and line.
type LoadError struct{ Messages []string }

func (e *LoadError) Error() string {
	return "Codex cannot load its configuration: " + strings.Join(e.Messages, "; ")
}

// ListHooks asks the Codex binary bin (its app-server, over stdio
// JSON-RPC) which hook handlers apply in cwd and whether each is trusted.
// env is the environment Codex runs with (CODEX_HOME, HOME). When Codex
// lists none it also asks for its features, and returns ErrHooksOff if
// the hooks feature is off (a Codex that cannot say is taken at its list),
// or a *LoadError when Codex reported errors loading what it would list.
func ListHooks(ctx context.Context, bin, cwd string, env []string) ([]Hook, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "app-server")
	cmd.Dir, cmd.Env = cwd, env
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("cannot start codex app-server: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("cannot start codex app-server: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start codex app-server: %w", err)
	}
	defer func() {
		in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"hookwatch","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"initialized"}`,
	} {
		if _, err := io.WriteString(in, m+"\n"); err != nil {
			return nil, fmt.Errorf("cannot talk to codex app-server: %w", err)
		}
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	// call sends one request and returns its answer's result (nil with
	// rpcErr set when Codex answered with an error).
	call := func(id int, method string, params any) (result, rpcErr json.RawMessage, err error) {
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := in.Write(append(req, '\n')); err != nil {
			return nil, nil, fmt.Errorf("cannot talk to codex app-server: %w", err)
		}
		for sc.Scan() {
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil || *m.ID != id {
				continue
			}
			return m.Result, m.Error, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("codex app-server did not answer %s: %w", method, err)
		}
		return nil, nil, fmt.Errorf("codex app-server exited without answering %s", method)
	}
	res, rpcErr, err := call(2, "hooks/list", map[string]any{"cwds": []string{cwd}})
	if err != nil {
		return nil, err
	}
	if len(rpcErr) > 0 {
		return nil, fmt.Errorf("codex app-server hooks/list: %s", rpcErr)
	}
	var r struct {
		Data []struct {
			Hooks  []Hook `json:"hooks"`
			Errors []struct {
				Message string `json:"message"`
			} `json:"errors"`
		} `json:"data"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("cannot read codex app-server hooks/list: %w", err)
	}
	var hooks []Hook
	var load LoadError
	for _, d := range r.Data {
		hooks = append(hooks, d.Hooks...)
		for _, e := range d.Errors {
			load.Messages = append(load.Messages, e.Message)
		}
	}
	switch {
	case len(hooks) > 0:
	case len(load.Messages) > 0:
		return nil, &load
	case hooksOff(call):
		return nil, ErrHooksOff
	}
	return hooks, nil
}

// hooksOff asks Codex for its features (experimentalFeature/list, which
// reports each as the loaded configuration sets it) and reports whether
// the one named "hooks" is off. Any failure to tell is false: the caller
// then goes by the hooks Codex listed.
func hooksOff(call func(id int, method string, params any) (result, rpcErr json.RawMessage, err error)) bool {
	res, rpcErr, err := call(3, "experimentalFeature/list", map[string]any{"limit": 1000})
	if err != nil || len(rpcErr) > 0 {
		return false
	}
	var r struct {
		Data []struct {
			Name    string `json:"name"`
			Enabled *bool  `json:"enabled"`
		} `json:"data"`
	}
	if json.Unmarshal(res, &r) != nil {
		return false
	}
	for _, f := range r.Data {
		if f.Name == "hooks" && f.Enabled != nil {
			return !*f.Enabled
		}
	}
	return false
}

// TrustBlock returns the config.toml tables that record h as trusted, as
// Codex's own /hooks review writes them.
func TrustBlock(h Hook) string {
	return fmt.Sprintf("\n[hooks.state.%s]\ntrusted_hash = %s\n", tomlString(h.Key), tomlString(h.CurrentHash))
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
