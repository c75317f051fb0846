// Package label bounds the names hookwatch takes from payloads for its
// telemetry: the label values of /metrics (docs/metrics.md) and the names
// of the OTLP spans (docs/otlp.md). A payload is hostile input: a session,
// or an MCP server whose tool names are free-form, could otherwise create
// any number of series or span names, which Prometheus, Jaeger and Tempo
// index one by one.
//
// It has two bounds over one vocabulary. Tool and Agent are fixed: a name
// Claude Code or Codex gives one of its own tools or subagent types
// (package classify knows them) is kept, any other is named by what it is
// (an MCP tool, a delegation tool, other), never by itself — the same
// value gives the same name in every process, as span names must: the
// live push and `hookwatch export` of a session name its spans alike.
// Set keeps, besides, the first values one process sees, up to its bound:
// metric labels, whose series live with the process anyway.
package label

import (
	"slices"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/classify"
)

// Names that stand for many values.
const (
	// Other is a value the vocabulary does not keep, or one beyond a
	// Set's bound.
	Other = "other"
	// Unknown is an empty value (an agent whose type no event gave).
	Unknown = "unknown"
)

// The bounds of the metric labels (Set). The fixed vocabulary fits
// within them (TestVocabularyFits): Tool gives at most MaxTools names and
// Agent at most MaxAgentTypes.
const (
	MaxAgentTypes = 32
	MaxTools      = 64
	// MaxMCPTools bounds the MCP tools (mcp__server__tool) among a Set's
	// tools, so that a server with many tools does not take every place.
	MaxMCPTools = 16
	// MaxBytes cuts a value.
	MaxBytes = 64
)

// Tool returns the bounded name of a tool: its own for a tool Claude Code
// or Codex ships (classify.KnownTool); else its family when classify
// tells it by the name's form (classify.FamilyMCPCall for mcp__…,
// classify.FamilyDelegation for Codex's prefixed agent tools); else Other.
func Tool(name string) string {
	if classify.KnownTool(name) {
		return name
	}
	switch f := classify.Family(name); f {
	case classify.FamilyMCPCall, classify.FamilyDelegation:
		return f
	}
	return Other
}

// Agent returns the bounded name of an agent, given as
// attribution.TypeName names it or as a subagent type: its own for the
// main agent, a compaction agent, a subagent whose type no event gave
// (attribution.RoleSubagent, Unknown) and the types Claude Code and Codex
// ship (classify.KnownAgentType); else Other — a user's own agent types,
// a Codex nickname.
func Agent(name string) string {
	switch name {
	case attribution.RoleMain, attribution.RoleCompaction, attribution.RoleSubagent, Unknown:
		return name
	}
	if classify.KnownAgentType(name) {
		return name
	}
	return Other
}

// Set bounds the values of one metric label: it keeps every value its
// fixed vocabulary keeps, and the first max others it sees; a value after
// those takes the vocabulary's name for it (Other for most). Its zero
// value is not usable: NewSet.
type Set struct {
	max   int
	fixed func(string) string
	seen  map[string]struct{}
}

// NewSet returns a Set of max places over the vocabulary fixed (Tool,
// Agent, or the caller's: fixed(v) == v keeps v without a place).
func NewSet(max int, fixed func(string) string) Set {
	return Set{max: max, fixed: fixed, seen: map[string]struct{}{}}
}

// Has reports whether v (cleaned) took a place.
func (s Set) Has(v string) bool { _, ok := s.seen[Value(v)]; return ok }

// Bound returns v as a label value: cleaned (Value), kept when the
// vocabulary keeps it or it has a place, else the vocabulary's name for it.
func (s Set) Bound(v string) string {
	v = Value(v)
	if s.fixed(v) == v {
		return v
	}
	if _, ok := s.seen[v]; ok {
		return v
	}
	if len(s.seen) >= s.max {
		return Value(s.fixed(v))
	}
	s.seen[v] = struct{}{}
	return v
}

// Tools bounds tool names as metric labels: a Set over Tool whose MCP
// tools take at most MaxMCPTools of its MaxTools places.
type Tools struct{ all, mcp Set }

// NewTools returns an empty Tools.
func NewTools() Tools {
	return Tools{all: NewSet(MaxTools, Tool), mcp: NewSet(MaxMCPTools, Tool)}
}

// Bound returns name as a label value (Set.Bound); an MCP tool beyond
// its own places is classify.FamilyMCPCall.
func (t Tools) Bound(name string) string {
	if classify.Family(name) == classify.FamilyMCPCall && !t.all.Has(name) && Tool(name) != name {
		if v := t.mcp.Bound(name); v != Value(name) {
			return v
		}
	}
	return t.all.Bound(name)
}

// Value cleans a value taken from a payload: at most MaxBytes of letters,
// digits and _ - . : @ /, anything else as _, so that it needs no escaping
// in any exposition format; "" is Unknown.
func Value(v string) string {
	if v == "" {
		return Unknown
	}
	ok := len(v) <= MaxBytes
	for i := 0; ok && i < len(v); i++ {
		ok = valueByte(v[i])
	}
	if ok {
		return v
	}
	b := make([]byte, 0, min(len(v), MaxBytes))
	for i := 0; i < len(v) && len(b) < MaxBytes; i++ {
		c := v[i]
		if !valueByte(c) {
			c = '_'
		}
		b = append(b, c)
	}
	return string(b)
}

func valueByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == ':' || c == '@' || c == '/'
}

// Vocabulary returns every name Tool and Agent can give, sorted.
func Vocabulary() (tools, agents []string) {
	tools = append(classify.ToolNames(), classify.FamilyMCPCall, classify.FamilyDelegation, Other)
	agents = append(classify.AgentTypes(), attribution.RoleMain, attribution.RoleCompaction, attribution.RoleSubagent, Unknown, Other)
	slices.Sort(tools)
	slices.Sort(agents)
	return slices.Compact(tools), slices.Compact(agents)
}
