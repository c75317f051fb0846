package policy

import (
	"encoding/json"
	"errors"
	"github.com/hookwatch/hookwatch/policy/policyfile"
	"reflect"
	"strconv"
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/checker"
	"github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/optimizer"
	"github.com/expr-lang/expr/types"
	"github.com/expr-lang/expr/vm"
)

// The variables a condition can use. Every documented payload field (spec
// §1.6) is declared with a fixed type so that Check catches typos and type
// errors; absent fields read as "", false, 0 or an empty map, never nil, so
// that conditions need no nil checks for documented fields. Fields not listed
// here are reachable through payload["name"].
var (
	stringFields = []string{
		"session_id", "transcript_path", "cwd", "hook_event_name", "permission_mode", "prompt_id",
		"agent_id", "agent_type", "tool_name", "tool_use_id", "prompt", "source", "model", "reason",
		"error", "message", "title", "notification_type", "last_assistant_message",
		"agent_transcript_path", "trigger", "custom_instructions", "compact_summary", "file_path",
		"memory_type", "load_reason", "command_name", "command_args", "expansion_type", "task_id",
		"task_subject", "task_description", "teammate_name", "team_name", "old_cwd", "new_cwd",
		"directory", "event", "name", "worktree_path", "mcp_server_name", "action", "mode", "url",
		"session_title", "elicitation_id", "scratchpad_dir",
	}
	boolFields   = []string{"stop_hook_active", "is_interrupt", "final"}
	numberFields = []string{"duration_ms", "index"}
	anyFields    = []string{
		"tool_response", "tool_calls", "effort", "permission_suggestions", "background_tasks",
		"session_crons", "content", "requested_schema", "globs", "error_details",
	}
)

// envTypes is the type environment conditions are compiled against:
// documented string fields are strings, flags booleans, the rest any. It is
// built on first use, never at init.
var envTypes = sync.OnceValue(func() types.Map {
	env := make(types.Map, len(stringFields)+len(boolFields)+len(numberFields)+len(anyFields)+7)
	for _, f := range stringFields {
		env[f] = types.String
	}
	for _, f := range boolFields {
		env[f] = types.Bool
	}
	for _, f := range numberFields {
		env[f] = types.Float64
	}
	for _, f := range anyFields {
		env[f] = types.Any
	}
	env["tool_input"] = types.TypeOf(map[string]any{})
	env["payload"] = types.TypeOf(map[string]any{})
	env["is_subagent"] = types.Bool
	env["command"] = commandType()
	env["subtype"] = types.String
	env["session"] = sessionType()
	env["agent"] = agentType()
	return env
})

// newEnv builds the variables of one evaluation from a decoded payload.
func newEnv(p map[string]any) map[string]any {
	env := make(map[string]any, len(stringFields)+len(boolFields)+len(numberFields)+len(anyFields)+7)
	for _, f := range stringFields {
		env[f] = asString(p[f])
	}
	for _, f := range boolFields {
		b, _ := p[f].(bool)
		env[f] = b
	}
	for _, f := range numberFields {
		env[f] = asNumber(p[f])
	}
	for _, f := range anyFields {
		env[f] = p[f]
	}
	ti, _ := p["tool_input"].(map[string]any)
	if ti == nil {
		ti = map[string]any{}
	}
	env["tool_input"] = ti
	env["payload"] = p
	env["is_subagent"] = asString(p["agent_id"]) != ""
	// command and subtype are set by evaluation.meaning, and session and
	// agent by evaluation.signals, before the first rule that reads them
	// runs: the others never pay for them.
	return env
}

// asString reads a payload field as a string: null and absent are "", other
// scalars their JSON text (a hostile payload may send numbers where strings
// belong), containers "".
func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return string(x)
	}
	return ""
}

func asNumber(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case json.Number:
		f, _ := x.Float64()
		return f
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	return 0
}

// exprCompiler compiles policy expressions against one shared expr
// configuration. expr.Compile builds its configuration (the builtin table and
// the type of the 60-variable environment) on every call, which costs more
// than compiling a typical condition; a fresh hook process compiles several
// rules, so it builds the configuration once, on first use.
type exprCompiler struct {
	mu  sync.Mutex
	cfg *conf.Config
}

// exprs is the process's compiler (replaced by benchmarks to measure a
// fresh process).
var exprs = &exprCompiler{}

// compile compiles src; asBool requires a boolean result (conditions).
// globBase is where relative glob patterns start from (see globPatcher).
func (x *exprCompiler) compile(src string, asBool bool, globBase string) (*vm.Program, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.cfg == nil {
		c := conf.CreateNew()
		for _, op := range exprOptions() {
			op(c)
		}
		c.Check()
		x.cfg = c
	}
	c := x.cfg
	// Per-call settings. A condition must be a boolean by its type, not
	// only at run time: expr.AsBool lets an expression of unknown type
	// through (tool_input.command), which then fails every evaluation —
	// and denies every call of a fail-closed rule. So unlike expr.AsBool,
	// an unknown type is refused too: `tool_input.force == true` says what
	// `tool_input.force` left open.
	c.Expect, c.ExpectAny = reflect.Invalid, false
	if asBool {
		c.Expect = reflect.Bool
	}
	globs := &globPatcher{base: globBase}
	shared := c.Visitors
	c.Visitors = append(shared[:len(shared):len(shared)], globs)
	tree, err := checker.ParseCheck(src, c)
	c.Visitors = shared
	if err != nil {
		return nil, withNameHint(src, err, c)
	}
	if globs.err != nil {
		return nil, globs.err
	}
	if c.Optimize {
		if err := optimizer.Optimize(&tree.Node, c); err != nil {
			var fe *file.Error
			if errors.As(err, &fe) {
				return nil, fe.Bind(tree.Source)
			}
			return nil, err
		}
	}
	return compiler.Compile(tree, c)
}

// exprOptions are the compile options of every policy expression.
func exprOptions(extra ...expr.Option) []expr.Option {
	opts := []expr.Option{
		expr.Env(envTypes()),
		// glob(pattern, path) is completed to glob(pattern, path, dir) when
		// a rule compiles (globPatcher): dir is where a relative pattern
		// starts from.
		expr.Function("glob", func(params ...any) (any, error) {
			var s [3]string
			for i, p := range params {
				v, ok := p.(string)
				if !ok || i >= len(s) {
					return false, errNotString
				}
				s[i] = v
			}
			return globMatch(s[0], s[1], s[2])
		}, new(func(pattern, path string) bool), new(func(pattern, path, dir string) bool)),
		expr.Function("under", func(params ...any) (any, error) {
			return under(params[0].(string), params[1].(string)), nil
		}, new(func(path, dir string) bool)),
		expr.Function("pii", func(params ...any) (any, error) {
			return defaultRedactor().Find(params[0]), nil
		}, new(func(v any) []string)),
	}
	return append(opts, extra...)
}

var defaultRedactor = sync.OnceValue(func() *Redactor {
	r, _ := NewRedactor(RedactOptions{})
	return r
})

// under reports whether p is dir or inside it, after cleaning both (so
// "/proj/../etc/passwd" is not under "/proj"). A relative p is never under
// an absolute dir: join it with cwd first.
func under(p, dir string) bool { return policyfile.Under(p, dir) }
