package store

import (
	"encoding/json"
	"time"
)

// Derived is what the collector derived (with package attribution) from the
// stored events of one session and of the sessions lineage can link it to:
// its summary, its agents and its tool calls. It is kept beside the events
// so that the query API answers without deriving, and it is rebuilt from the
// stored events whenever they change, so it never depends on the order in
// which they arrived.
//
// The store keeps the JSON documents as given and never looks inside them.
type Derived struct {
	SessionID string
	// GroupKey names the sessions lineage can link: the same host, user and
	// project. DerivedGroup selects on it.
	GroupKey string
	// Seq is the largest Seq of the session's events the derivation saw.
	// The state is stale while Seq is below the session's LastSeq.
	Seq int64
	// FirstEventAt and LastEventAt bound the session's events as the
	// derivation saw them. DerivedGroup selects on them.
	FirstEventAt time.Time
	LastEventAt  time.Time
	// AliasOf is set for a throwaway session id whose events were folded
	// into that session (a continue, claude -c): the state to show is that
	// session's, and Summary, Agents and ToolCalls may be empty.
	AliasOf string
	// Summary is a JSON object; Agents and ToolCalls are JSON arrays. Nil
	// when empty.
	Summary   json.RawMessage
	Agents    json.RawMessage
	ToolCalls json.RawMessage
	// AgentIDs are the session's subagents, so that a subagent addressed
	// on its own (the virtual session sub--<agent_id>) finds its session.
	AgentIDs []string
}
