package attribution

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hookwatch/hookwatch/event"
)

// sess moves an event to session id.
func (e ev) sess(id string) ev { return e.with("session_id", id) }

func TestLineage(t *testing.T) {
	// f builds evs and checks "session:parent:kind" for each session, in
	// start order, and the aliases.
	f := func(name string, evs []ev, want []string, aliases map[string]string) {
		t.Helper()
		r := Build(stream(t, evs...))
		var got []string
		for _, s := range r.Sessions {
			got = append(got, s.SessionID+":"+s.ParentSessionID+":"+s.Lineage)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: sessions %q, want %q", name, got, want)
		}
		if len(r.Aliases) != len(aliases) {
			t.Fatalf("%s: aliases %v, want %v", name, r.Aliases, aliases)
		}
		for k, v := range aliases {
			if r.Aliases[k] != v {
				t.Fatalf("%s: aliases %v, want %v", name, r.Aliases, aliases)
			}
		}
	}
	il := ev{"hook_event_name": "InstructionsLoaded", "file_path": "/w/p/CLAUDE.md", "memory_type": "Project", "load_reason": "session_start"}
	stop := ev{"hook_event_name": "Stop"}

	f("resume keeps the id", []ev{
		sessionStart("startup").sess("X"), prompt("a").sess("X"), sessionEnd("other").sess("X"),
		sessionStart("resume").sess("X"), prompt("b").sess("X"), sessionEnd("other").sess("X"),
	}, []string{"X::"}, nil)

	f("fork: SessionStart under the old id, the rest under the new", []ev{
		sessionStart("startup").sess("X"), prompt("a").sess("X"), sessionEnd("other").sess("X"),
		sessionStart("resume").sess("X"),
		il.sess("Y"), prompt("b").sess("Y"), stop.sess("Y"), sessionEnd("other").sess("Y"),
	}, []string{"X::", "Y:X:fork"}, nil)

	f("two forks of one session claim one orphan each", []ev{
		sessionStart("startup").sess("X"), sessionEnd("other").sess("X"),
		sessionStart("resume").sess("X"), prompt("b").sess("Y1"), sessionEnd("other").sess("Y1"),
		sessionStart("resume").sess("X"), prompt("c").sess("Y2"), sessionEnd("other").sess("Y2"),
	}, []string{"X::", "Y1:X:fork", "Y2:X:fork"}, nil)

	f("a session of another project is not a fork", []ev{
		sessionStart("startup").sess("X"), sessionEnd("other").sess("X"),
		sessionStart("resume").sess("X"),
		prompt("b").sess("Z").with("cwd", "/w/other", "transcript_path", "/h/.claude/projects/-w-other/Z.jsonl"),
	}, []string{"X::", "Z::"}, nil)

	f("a session of another host is not a fork", []ev{
		sessionStart("startup").sess("X"), sessionEnd("other").sess("X"),
		sessionStart("resume").sess("X"),
		prompt("b").sess("Z").with("_host", "laptop-2"),
	}, []string{"X::", "Z::"}, nil)

	f("a resume followed by its own events is no orphan", []ev{
		sessionStart("startup").sess("X"), sessionEnd("other").sess("X"),
		sessionStart("resume").sess("X"), il.sess("X"), prompt("b").sess("X"),
		prompt("c").sess("Z"),
	}, []string{"X::", "Z::"}, nil)

	f("fork reported with source fork under the new id", []ev{
		sessionStart("startup").sess("X"), sessionEnd("other").sess("X"),
		sessionStart("resume").sess("X"),
		sessionStart("fork").sess("Y"), prompt("b").sess("Y"),
		sessionStart("fork").sess("W"), // nothing to link it to
	}, []string{"X::", "Y:X:fork", "W::fork"}, nil)

	f("clear", []ev{
		sessionStart("startup").sess("X"), prompt("a").sess("X"), sessionEnd("clear").sess("X"),
		sessionStart("clear").sess("Y"), prompt("b").sess("Y"),
		sessionStart("clear").sess("Z"), // its SessionEnd was already claimed
	}, []string{"X::", "Y:X:clear", "Z::"}, nil)

	f("compaction under a new id", []ev{
		sessionStart("startup").sess("X"), ev{"hook_event_name": "PreCompact", "trigger": "auto"}.sess("X"),
		sessionStart("compact").sess("Y"),
	}, []string{"X::", "Y:X:compact"}, nil)

	f("continue: the throwaway id is folded in", []ev{
		sessionStart("startup").sess("X"), prompt("a").sess("X"), sessionEnd("other").sess("X"),
		il.sess("T"),
		sessionStart("resume").sess("X"), prompt("b").sess("X"), sessionEnd("other").sess("X"),
	}, []string{"X::"}, map[string]string{"T": "X"})

	f("fork whose InstructionsLoaded still came under the old id", []ev{
		sessionStart("startup").sess("X"), sessionEnd("other").sess("X"),
		sessionStart("resume").sess("X"), il.sess("X"),
		prompt("b").sess("Y"), sessionEnd("other").sess("Y"),
	}, []string{"X::", "Y:X:fork"}, nil)

	f("continue right after a resume that died: the adjacent SessionStart wins", []ev{
		sessionStart("startup").sess("X"), sessionEnd("other").sess("X"),
		sessionStart("resume").sess("X"), // orphan: the process died
		il.sess("T"),
		sessionStart("resume").sess("X"), prompt("b").sess("X"),
	}, []string{"X::"}, map[string]string{"T": "X"})

	f("continue: the throwaway's InstructionsLoaded read after the SessionStart", []ev{
		sessionStart("startup").sess("X"), prompt("a").sess("X"), sessionEnd("other").sess("X"),
		sessionStart("resume").sess("X"), il.sess("T"), prompt("b").sess("X"), sessionEnd("other").sess("X"),
	}, []string{"X::"}, map[string]string{"T": "X"})

	f("a fork that died after its InstructionsLoaded is still a fork", []ev{
		sessionStart("startup").sess("X"), prompt("a").sess("X"), sessionEnd("other").sess("X"),
		sessionStart("resume").sess("X"), il.sess("Y"),
	}, []string{"X::", "Y:X:fork"}, nil)

	f("fork whose InstructionsLoaded was stamped before the old id's SessionStart", []ev{
		sessionStart("startup").sess("X"), prompt("a").sess("X"), sessionEnd("other").sess("X"),
		il.sess("Y"), sessionStart("resume").sess("X"),
		prompt("b").sess("Y"), stop.sess("Y"), sessionEnd("other").sess("Y"),
	}, []string{"X::", "Y:X:fork"}, nil)

	f("an orphan of a session begun after the fork's first event is not its parent", []ev{
		il.sess("Y"), sessionStart("resume").sess("X"), prompt("b").sess("Y"),
	}, []string{"Y::", "X::"}, nil)

	f("a pre-start-only id with nothing after it is kept", []ev{
		il.sess("T"),
	}, []string{"T::"}, nil)
}

func TestContinueAndForkDetails(t *testing.T) {
	il := ev{"hook_event_name": "InstructionsLoaded", "file_path": "/w/p/CLAUDE.md"}
	r := Build(stream(t,
		sessionStart("startup").sess("X").with("model", "m1"), prompt("a").sess("X"), sessionEnd("other").sess("X"),
		sessionStart("resume").sess("X").with("model", "m2"),
		prompt("b").sess("Y"), sessionEnd("other").sess("Y"),
		il.sess("T"),
		sessionStart("resume").sess("X"), prompt("c").sess("X"),
		il.sess("P"),
	))
	x, y := r.Session("X"), r.Session("Y")
	if r.Session("T") != x {
		t.Fatal("the throwaway id does not lead to its session")
	}
	if !slices.Equal(x.AliasSessionIDs, []string{"T"}) || !slices.Equal(x.ChildSessionIDs, []string{"Y"}) {
		t.Fatalf("aliases %v children %v", x.AliasSessionIDs, x.ChildSessionIDs)
	}
	if len(x.Runs) != 3 || x.Runs[1].ForkedTo != "Y" || x.Runs[2].AliasSessionID != "T" || x.Runs[2].EndedAt != nil {
		t.Fatalf("runs %+v", x.Runs)
	}
	if x.EndedAt != nil || x.Counts.Events != 7 {
		t.Fatalf("X ended %v with %d events; its last run is still going", x.EndedAt, x.Counts.Events)
	}
	if y.Model != "m2" || y.Title != "b" || len(y.Runs) != 1 || y.Runs[0].Source != LineageFork || y.EndedAt == nil {
		t.Fatalf("Y %+v", y.Summary())
	}
	if p := r.Session("P"); p == nil || !p.Phantom {
		t.Fatalf("phantom %+v", p)
	}
	links := r.Lineage("Y")
	if len(links) != 1 || links[0] != (Link{"Y", "X", LineageFork}) {
		t.Fatalf("lineage %+v", links)
	}
	if r.Lineage("nope") != nil || len(r.Lineage("P")) != 0 {
		t.Fatal("lineage of an unknown or unlinked session")
	}
}

func TestSessionFields(t *testing.T) {
	envs := stream(t,
		sessionStart("startup").with("session_title", "Tidy up", "model", "claude-opus-4-8"),
		ev{"hook_event_name": "Notification", "message": "m"}.with("permission_mode", "default"),
		prompt("").with("permission_mode", "plan"),
		prompt("second").in("a1", "worker"), // a subagent's prompt (Codex) is not the title
		stopEv("all done"),
		sessionEnd("other"),
		// A statusLine refresh after the end starts no run.
		ev{"version": "2.1.197", "model": map[string]any{"id": "claude-sonnet-5", "display_name": "Sonnet"},
			"cost": map[string]any{"total_cost_usd": 0.1}},
	)
	bad := env(100, "not json")
	noSession := env(101, `{"hook_event_name":"Stop"}`)
	r := Build(append(envs, bad, noSession))
	s := only(t, r)
	if r.Skipped != 2 {
		t.Fatalf("skipped %d, want 2", r.Skipped)
	}
	if s.Title != "Tidy up" || s.Model != "claude-sonnet-5" || s.ClientVersion != "2.1.197" || s.PermissionMode != "plan" {
		t.Fatalf("title %q model %q version %q mode %q", s.Title, s.Model, s.ClientVersion, s.PermissionMode)
	}
	if s.Project != "-w-p" || s.CWD != "/w/p" || s.TranscriptPath != "/h/.claude/projects/-w-p/s1.jsonl" || s.Runtime != "claude-code" {
		t.Fatalf("project %q cwd %q transcript %q runtime %q", s.Project, s.CWD, s.TranscriptPath, s.Runtime)
	}
	if len(s.Runs) != 1 || s.EndedAt == nil || !s.EndedAt.Equal(at(5)) || s.EndReason != "other" || !s.LastEventAt.Equal(at(6)) {
		t.Fatalf("runs %+v ended %v (%s), last event %v", s.Runs, s.EndedAt, s.EndReason, s.LastEventAt)
	}
	if s.Counts.Events != 7 || s.Counts.Prompts != 1 {
		t.Fatalf("counts %+v", s.Counts)
	}
	if m := s.Agents[0]; m.LastMessage != "all done" || m.StoppedAt != s.EndedAt {
		t.Fatalf("main agent %+v", m)
	}
	if sum := s.Summary(); sum.Agents != nil || sum.ToolCalls != nil || s.Agents == nil {
		t.Fatal("Summary must drop agents and tool calls from the copy only")
	}
}

func stopEv(msg string) ev {
	return ev{"hook_event_name": "Stop", "last_assistant_message": msg}
}

// TestSessionStatus: a session is ended by the SessionEnd of its latest run
// and runs again when resumed; a turn that ended in StopFailure fails it
// until the next prompt. It depends on the events, not on their arrival.
func TestSessionStatus(t *testing.T) {
	f := func(name string, evs []ev, status, reason string) {
		t.Helper()
		envs := stream(t, evs...)
		for _, order := range [][]event.Envelope{envs, reversed(envs)} {
			s := only(t, Build(order))
			if s.Status != status || s.EndReason != reason || (s.EndedAt != nil) != (status == SessionEnded) {
				t.Errorf("%s: status %q, end %v %q; want %q %q", name, s.Status, s.EndedAt, s.EndReason, status, reason)
			}
		}
	}
	f("running", []ev{sessionStart("startup"), prompt("a")}, SessionRunning, "")
	f("ended", []ev{sessionStart("startup"), prompt("a"), sessionEnd("logout")}, SessionEnded, "logout")
	f("resumed", []ev{sessionStart("startup"), sessionEnd("other"), sessionStart("resume"), prompt("b")}, SessionRunning, "")
	f("ended again", []ev{sessionStart("startup"), sessionEnd("other"), sessionStart("resume"), sessionEnd("prompt_input_exit")}, SessionEnded, "prompt_input_exit")
	f("failed", []ev{sessionStart("startup"), prompt("a"), {"hook_event_name": "StopFailure", "error": "rate_limit"}}, SessionFailed, "")
	f("prompt after a failure", []ev{sessionStart("startup"), prompt("a"), {"hook_event_name": "StopFailure"}, prompt("b")}, SessionRunning, "")
}

func reversed(envs []event.Envelope) []event.Envelope {
	out := slices.Clone(envs)
	slices.Reverse(out)
	return out
}

// TestForkStampedBeforeItsOrphan: the 2.1.197 capture's fork, with its
// InstructionsLoaded stamped before the SessionStart(resume) of the session
// it forked, as happens when the client's side-by-side hooks are scheduled
// the other way round: the fork is still linked, by Build and by a Group
// fed one envelope at a time.
func TestForkStampedBeforeItsOrphan(t *testing.T) {
	envs := loadCorpus(t, "claude-code-2.1.197.jsonl", event.RuntimeClaudeCode)
	var parent, fork string
	for i := 1; i < len(envs); i++ {
		a, errA := event.Decode(envs[i-1].Payload)
		b, errB := event.Decode(envs[i].Payload)
		if errA != nil || errB != nil {
			continue
		}
		if s, ok := a.Event.(*event.SessionStartInput); ok && s.Source == "resume" &&
			b.HookEventName == event.InstructionsLoaded && b.SessionID != a.SessionID {
			envs[i-1].ReceivedAt, envs[i].ReceivedAt = envs[i].ReceivedAt, envs[i-1].ReceivedAt
			parent, fork = a.SessionID, b.SessionID
			break
		}
	}
	if fork == "" {
		t.Fatal("the capture has no fork whose InstructionsLoaded follows the orphan")
	}
	if s := Build(envs).Session(fork); s == nil || s.ParentSessionID != parent || s.Lineage != LineageFork {
		t.Fatalf("Build: the fork %s is not linked to %s: %+v", fork, parent, s)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	g := checkGroup(t, "one at a time", envs, batches(rng, envs, 1))
	if s := g.Result().Session(fork); s == nil || s.ParentSessionID != parent {
		t.Fatalf("Group: the fork %s is not linked to %s", fork, parent)
	}
}

// TestRunStartedBeforeItsSessionStart: the client runs a run's first hooks
// side by side, so a run's InstructionsLoaded may be stamped before its
// SessionStart; the run is still the SessionStart's, one run, not a run
// without a source followed by the SessionStart's.
func TestRunStartedBeforeItsSessionStart(t *testing.T) {
	il := ev{"hook_event_name": "InstructionsLoaded", "file_path": "/w/p/CLAUDE.md"}
	r := Build(stream(t,
		il.sess("X"), sessionStart("startup").sess("X"), prompt("a").sess("X"), sessionEnd("other").sess("X"),
		il.sess("X"), sessionStart("resume").sess("X"), prompt("b").sess("X"),
		prompt("c").sess("Z"), il.sess("Z"), // no SessionStart: a run of its own
	))
	x := r.Session("X")
	if len(x.Runs) != 2 || x.Runs[0].Source != "startup" || x.Runs[1].Source != "resume" ||
		!x.Runs[0].StartedAt.Equal(at(0)) || !x.Runs[1].StartedAt.Equal(at(4)) || x.Runs[0].EndedAt == nil || x.Runs[1].EndedAt != nil {
		t.Fatalf("runs %+v", x.Runs)
	}
	if z := r.Session("Z"); len(z.Runs) != 1 || z.Runs[0].Source != "" {
		t.Fatalf("Z's runs %+v", z.Runs)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	envs := stream(t,
		il.sess("X"), sessionStart("startup").sess("X"), prompt("a").sess("X"), sessionEnd("other").sess("X"),
		il.sess("X"), sessionStart("resume").sess("X"), prompt("b").sess("X"))
	checkGroup(t, "one at a time", envs, batches(rng, envs, 1))
}
