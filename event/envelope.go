package event

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"time"
)

// Envelope wraps one payload on its way from the hook to the collector. It is
// the unit of delivery, spooling and storage; its ID makes delivery
// idempotent.
type Envelope struct {
	// ID is a UUIDv7 made by the hook: unique, and sortable by creation time.
	ID string `json:"id"`
	// Runtime is the agent runtime that fired the hook (RuntimeClaudeCode, RuntimeCodex).
	Runtime string `json:"runtime"`
	// Kind is "hook" for hook events, "statusline" for statusLine
	// snapshots, "rollout" for tool events imported from a Codex rollout
	// and "transcript" for records imported from Claude Code transcripts.
	Kind string `json:"kind,omitempty"`
	// ReceivedAt is when the hook read the payload.
	ReceivedAt time.Time `json:"received_at"`
	Host       string    `json:"host,omitempty"`
	User       string    `json:"user,omitempty"`
	// HookwatchVersion is the version of the hook that made the envelope.
	HookwatchVersion string `json:"hookwatch_version,omitempty"`
	// Subagent is what the hook read from the subagent's sidecar file, which
	// names the tool call that spawned it; the collector may run elsewhere and
	// cannot read it.
	Subagent *SubagentMeta `json:"subagent,omitempty"`
	// ForkOf is, on a SessionStart with source "fork" or a SessionEnd, the
	// session the hook found the transcript copied from (clients from
	// 2.1.332 name a fork's parent in no event), or a Codex fork's rollout
	// names in its first record (codex.ForkParent for the hook, the
	// rollout's reader for the SessionStart it reads there); the importer
	// reads a Claude Code fork's transcript as its SessionStart(fork) with
	// the same parent (claudecode.ReadFork); "" when not found. Like
	// Subagent, it is read from the agent's files, which the collector may
	// not see. Lineage reads it only for sessions that began with
	// SessionStart(fork).
	ForkOf string `json:"fork_of,omitempty"`
	// ExitCode is, on a Codex PostToolUse, the exit code of the command as
	// Codex's rollout recorded it (codex.ExitCode): the payload carries
	// only the command's output, so a failing command would look like a
	// success. nil when unknown. Like Subagent, it is read from the
	// agent's files, which the collector may not see.
	ExitCode *int `json:"exit_code,omitempty"`
	// Files is, on a PostToolUse of a tool that reads or writes one file
	// (Read, Write, Edit, MultiEdit, NotebookEdit), the state of that file
	// just after the call, taken by the hook where the file is: what the
	// agent saw or left. At a resume the stale-context guard compares it
	// with the file as it is then (package stale). Like Subagent, it is
	// read from the agent's machine, which the collector may not be.
	Files []FileState `json:"files,omitempty"`
	// Traceparent is the W3C trace context the agent ran the hook in (the
	// TRACEPARENT variable Claude Code sets when its own telemetry is on),
	// "" when none or not well formed: spans of the event can link to the
	// agent's trace.
	Traceparent string `json:"traceparent,omitempty"`
	// Decision is the policy decision the hook answered with, if any.
	Decision json.RawMessage `json:"decision,omitempty"`
	// Payload is the hook payload after redaction.
	Payload json.RawMessage `json:"payload"`
}

// ValidTraceparent reports whether s is a W3C traceparent header value of a
// version this reader knows the layout of: "vv-<32 hex>-<16 hex>-<2 hex>",
// version not ff, trace and span ids not all zero (lowercase hex, as the
// specification requires).
func ValidTraceparent(s string) bool {
	if len(s) != 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' || s[:2] == "ff" {
		return false
	}
	zeroTrace, zeroSpan := true, true
	for i := 0; i < len(s); i++ {
		if i == 2 || i == 35 || i == 52 {
			continue
		}
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
		if c != '0' && 3 <= i && i < 35 {
			zeroTrace = false
		}
		if c != '0' && 36 <= i && i < 52 {
			zeroSpan = false
		}
	}
	return !zeroTrace && !zeroSpan
}

// FileState is what a hook recorded of one file an agent read or wrote: its
// path (absolute, as the session model names it) and, at that moment, its
// modification time, size and, for files up to the hook's cap, a hash of
// its content. Hash is "fnv1a64:" and 16 hex digits (FNV-1a), "" when not
// taken (the file was over the cap): a checksum, not a digest, since it only tells a
// change apart from a touch, next to the size and mtime.
type FileState struct {
	Path    string `json:"path"`
	MtimeNS int64  `json:"mtime_ns"`
	Size    int64  `json:"size"`
	Hash    string `json:"hash,omitempty"`
}

// Kinds of envelope.
const (
	KindHook       = "hook"
	KindStatusLine = "statusline"
	// KindRollout is a tool event read from a Codex rollout file (package
	// codex/rollout), not sent by a hook: evidence of a call that the
	// session model merges with the hook events by tool_use_id.
	KindRollout = "rollout"
	// KindTranscript marks an envelope made from a transcript record
	// (hookwatch import) rather than by a hook.
	KindTranscript = "transcript"
)

// IsEvidence reports whether an envelope of this kind was read from a
// client's own file (a Codex rollout, a Claude Code transcript) rather than
// sent by a hook: it gives way to the hook's event of the same call, prompt
// or agent, and counts in no event total.
func IsEvidence(kind string) bool { return kind == KindRollout || kind == KindTranscript }

// SubagentMeta is the content of
// <transcript dir>/<session>/subagents/agent-<id>.meta.json.
type SubagentMeta struct {
	AgentType   string `json:"agentType"`
	Description string `json:"description,omitempty"`
	ToolUseID   string `json:"toolUseId"`
	SpawnDepth  int    `json:"spawnDepth"`
}

// NewID returns a new UUIDv7 (RFC 9562) string for the given time.
//
// The 74 random bits come from math/rand/v2's runtime-seeded ChaCha8
// generator, not crypto/rand: an id needs uniqueness, not secrecy, and
// crypto/rand would link the FIPS module whose init every hook run pays.
func NewID(t time.Time) string {
	return UUIDString(newUUID(t))
}

// AppendNewID appends NewID(t) to dst: for a producer that writes ids into
// a buffer it reuses, without a string of each.
func AppendNewID(dst []byte, t time.Time) []byte {
	return appendUUID(dst, newUUID(t))
}

func newUUID(t time.Time) [16]byte {
	var u [16]byte
	binary.LittleEndian.PutUint64(u[6:14], rand.Uint64())
	binary.LittleEndian.PutUint16(u[14:16], uint16(rand.Uint32()))
	ms := uint64(t.UnixMilli())
	binary.BigEndian.PutUint64(u[0:8], ms<<16|uint64(binary.BigEndian.Uint16(u[6:8])))
	u[6] = 0x70 | u[6]&0x0f // version 7
	u[8] = 0x80 | u[8]&0x3f // variant 10
	return u
}

// UUIDString formats a UUID in its canonical 8-4-4-4-12 hex form.
func UUIDString(u [16]byte) string {
	var s [36]byte
	return string(appendUUID(s[:0], u))
}

func appendUUID(dst []byte, u [16]byte) []byte {
	dst = hex.AppendEncode(dst, u[0:4])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, u[4:6])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, u[6:8])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, u[8:10])
	dst = append(dst, '-')
	return hex.AppendEncode(dst, u[10:])
}

// ProbeSessionPrefix starts the session id of the events hookwatch sends
// itself to check a setup end to end (hookwatch doctor's round trip). Such a
// session is stored like any other, so that the check can find it, but is
// left out of the session list. No agent makes such an id: Claude Code's
// and Codex's session ids are UUIDs.
const ProbeSessionPrefix = "hookwatch-probe-"

// IsProbe reports whether sessionID names a probe session.
func IsProbe(sessionID string) bool { return strings.HasPrefix(sessionID, ProbeSessionPrefix) }
