// Package attribution derives, from stored hook events, which agent did
// what: the sessions with their lineage (resume, fork, clear, continue,
// compaction), the tree of agents in each session (main agent, subagents at
// any depth, the compaction agent), and every tool call with the agent that
// made it, the call that spawned that agent, its timing, status and policy
// decision.
//
// It is pure logic. Build is a function of a set of envelopes; Builder
// accumulates envelopes over time and decodes each payload once. The result
// is the same whatever the order of the input and whatever duplicates it
// holds: envelopes are deduplicated by id and sorted by (received_at, id)
// before anything is derived, and nothing depends on arrival order.
//
// Lineage needs the events of neighbouring sessions (a fork shows up as the
// old session's SessionStart followed by the new session's events), so
// give Build every session of the same project over the period of interest,
// not only the session being shown.
//
// # Agents
//
// An event belongs to the subagent named by its agent_id, or to the main
// agent ("") when it has none; session_id is the parent session's even
// inside subagents. The spawning call of a subagent is found, most precise
// first, by:
//
//  1. the envelope's Subagent meta (the client's agent-<id>.meta.json,
//     which the hook reads on every event of the subagent: the client writes
//     it only after synchronous SubagentStart hooks return). Its toolUseId is
//     the spawning PreToolUse(Agent), whose agent_id is the parent;
//  2. a PostToolUse of a delegation call (Agent, Task, Codex spawn_agent)
//     whose tool_response names the agent: agentId (Codex: agent_id) of the
//     object, of JSON text, or of a privacy preview
//     {"hookwatch_capture":"preview",…}: its agentId member if the hook kept
//     one, else found by scanning the preview's head and tail text (an id
//     cut by the head's end is refused). The Agent response puts the whole
//     prompt before agentId, so a preview of a long prompt loses it: the
//     hook should copy agentId into the preview object;
//  3. the oldest delegation call of the session, made before the agent's
//     first event and not claimed by another agent, whose subagent_type
//     equals the agent's type (a call without subagent_type asks for
//     general-purpose; Codex's spawn_agent for default). The compaction
//     agent (type "") and agents without a type never match.
//
// A call spawns at most one agent. With none of these, the parent is taken
// to be the main agent and Agent.ResolvedBy is "none". Depth is the parent's
// plus one; a cycle (only hostile input can make one) is cut by re-parenting
// to the main agent.
//
// # Tool calls
//
// A call is keyed by tool_use_id within its session. Its status comes from
// the evidence, strongest first: PermissionDenied, or an enforced policy
// deny (decision.Audit with action deny in the envelope's decision field)
// on its PreToolUse or PermissionRequest, makes it denied;
// PostToolUseFailure makes it error (interrupted with is_interrupt);
// PostToolUse ok; a Codex Interrupt of its turn interrupted; a PostToolBatch
// entry alone is rejected when it is a <tool_use_error> with no PreToolUse
// (the client refused the call before any hook), error when it is one after
// a PreToolUse, else ok; with nothing else, pending. duration_ms is the
// payload's own when present, else end minus the PreToolUse time. A
// PermissionRequest, which has no tool_use_id, belongs to the latest open
// call of the same agent and tool whose input it equals or extends (Codex
// adds a description), else to the latest open call of that tool.
//
// A Codex rollout's call (event.KindRollout) joins the hooks' call of the
// same tool_use_id (its call_id); when the hooks sent none, it joins the
// oldest id-less hook call of the same agent, turn, tool name and input
// (canonical JSON), so that a call both report is counted once either way;
// Session.MatchedCalls keeps such pairs, so that a view of the events ties
// the hook's id-less events and the rollout's records to the call
// (Session.CallOf), as a shared id does.
// Codex fires PostToolUse whatever the outcome, so a failure its rollout
// records (a PostToolUseFailure) stands beside the hook's PostToolUse, as
// the rollout's exit code does.
//
// A Claude Code transcript's record (event.KindTranscript: hookwatch
// import, serve --watch-transcripts) is read the same way: the hook event
// the client fired for it joins the hooks' call of the same tool_use_id,
// the prompt of the same prompt id, the subagent of the same agent id, and
// gives way to the hook's own event (its start, its outcome, its stop).
// Like a rollout's, it is evidence, not an event of the session: it counts
// in no Counts.Events and starts no run, and a prompt counts once per
// prompt id, so that a session counts the same whether its transcripts are
// read before, after or while its hooks report, or never. A Codex
// rollout's records (its prompts, with the turn's model) are read the same
// way; a subagent's prompt, which has no prompt id (event.PromptOf), pairs
// with the hook's UserPromptSubmit of the same agent and turn. A session
// known only from its files (no hook reported it) therefore has no run:
// its model is the one its latest prompt names (Codex's), a hook's
// winning; transcripts record no end, so its status stays running,
// and its LastEventAt (the time of its latest record) says how long ago it
// moved — but a Codex rollout records the end of a `codex exec` run
// (SessionEnd), after which it is ended until its next prompt.
//
// # Background subagents
//
// Clients from 2.1.332 run Agent calls made in parallel in the
// background: the call returns at once (its response says
// async_launched) and the subagent runs on, so the call ends before its
// agent. Such an agent is marked Background (also when a background_tasks
// list or a task notification names it). The main agent's Stop lists the
// subagents still running in background_tasks: until they stop, the
// session's status is SessionBackground, not running. When one ends, the
// client submits a prompt of its own, a <task-notification> naming the
// agent and its spawning call: it is no prompt of the user (no title, not
// in Counts.Prompts but in Counts.TaskNotifications), and it marks the
// agent and the call (NotifiedAt, NotificationStatus).
//
// # Lineage
//
// Sessions link only within a group: the same envelope host and user and
// the same project (the transcript's directory name, else claudecode.Slug(cwd)), so
// that sessions of other machines, users or repositories never link.
// "Before" and "after" are the canonical order.
//
// A session whose earliest event is not a SessionStart started in another
// session's process:
//
//   - Continue (-c). If all its events are pre-start events
//     (InstructionsLoaded, Setup, ConfigChange) and the next event of the
//     group after its last one is a SessionStart of another session, it is
//     the throwaway id the client used before switching to the continued
//     session. Its events are folded into that session (Result.Aliases,
//     Run.AliasSessionID) and no session is made for it. The same holds
//     when the event of the group right before its first one is such a
//     SessionStart that is not an orphan (see Fork): the client's hooks run
//     side by side, and the throwaway's InstructionsLoaded may be read just
//     after the continued session's SessionStart.
//   - Fork (--resume X --fork-session). The 2.1.197 client sends
//     SessionStart(resume) under X, then every later event of the run under
//     the new id Y; Y has no SessionStart of its own and X gets nothing else
//     from that run. A SessionStart(resume or fork) of X is an orphan when no
//     event of X other than pre-start events follows it before X's next
//     SessionStart. Y is the fork of the latest unclaimed orphan of its group
//     before Y's first event that is not a pre-start event (the client runs
//     a run's first hooks side by side, so Y's InstructionsLoaded may be
//     stamped before X's SessionStart), provided X began before Y; each
//     orphan claims one session. Y's
//     transcript_path names Y's own file in X's project directory, so both
//     share a group.
//   - Otherwise a pre-start-only session is folded into the first later
//     SessionStart of another session of the group, or kept and marked
//     Phantom when there is none. Any other session stays a root: its first
//     events were not captured.
//
// A session whose earliest event is a SessionStart links by its source:
// clear to the latest unclaimed SessionEnd(reason clear) of another session
// of the group before it; fork (the source clients from 2.1.214 report) to
// the parent the hook proved from the fork's transcript, the ForkOf of its
// earliest SessionStart or SessionEnd that has one (clients from 2.1.332
// send SessionStart(fork) under the new id only, no event names the parent,
// and the transcript is written only after the first answer; a Codex
// fork's rollout and a Claude Code fork's transcript are read as the
// SessionStart(fork) its hook sends, with the same ForkOf, so that a fork
// no hook saw links too), provided
// that parent, if it has events, is of the same group and began before the
// fork;
// else to the latest unclaimed orphan, else to an unknown parent; compact under a
// new id to the latest unclaimed PreCompact of another session that its own
// session did not follow with SessionStart(compact). startup and resume
// start or keep an id and link nothing: a resume is a new Run of the same
// session.
//
// A SessionStart read from a client's file (a Codex fork's rollout, a
// Claude Code fork's transcript) is the thread's own: it starts its
// session by the rules above, but is no orphan and nothing folds into it.
// A fork it starts whose client reported that start under the parent's
// id (2.1.197: an orphan SessionStart(resume) of the parent) claims the
// parent's latest unclaimed orphan before the fork's first hook event that
// is not a pre-start event, as a fork no file reported does.
//
// A parent always begins before its child, so lineage has no cycles. The rules can mislink only when, in one group, a
// session whose SessionStart was not captured begins after a resume that
// died before sending any event.
package attribution
