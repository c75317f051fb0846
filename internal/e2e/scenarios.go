package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/hookwatch/hookwatch/internal/fakeclaude"
)

// Scenario is a scripted model behaviour and the prompt that starts it.
// Every prompt and subagent prompt carries a marker like "[e2e:name]" that
// no other conversation contains, so scenarios never match each other.
type Scenario struct {
	// Name names the scenario.
	Name string
	// Prompt starts the main conversation.
	Prompt string
	// Script is the model's behaviour.
	Script fakeclaude.Script
}

type input = map[string]any

// agentTool returns the name of the subagent tool the request offers:
// "Agent", or "Task" in older clients.
func agentTool(r *fakeclaude.Request) string {
	if !r.Offers("Agent") && r.Offers("Task") {
		return "Task"
	}
	return "Agent"
}

// spawn returns a tool call of the subagent tool.
func spawn(r *fakeclaude.Request, agentType, description, prompt string) fakeclaude.Block {
	return fakeclaude.ToolUse(agentTool(r), input{
		"description": description, "prompt": prompt, "subagent_type": agentType,
	})
}

// ToolKinds calls every kind of tool the client offers in -p mode: Bash,
// Read, Write, Edit, and TaskCreate/TaskUpdate, WebFetch and WebSearch when
// offered (decided from the request's tools). WebFetch asks for webURL;
// give it the fake model's URL to keep it on loopback. project is the
// absolute project directory.
//
// Turn 0: Bash, Read main.go, Write notes.md, TaskCreate, WebFetch,
// WebSearch, in parallel. Turn 1: Edit main.go, TaskUpdate of the created
// task to completed. Turn 2: the final text.
func ToolKinds(project, webURL string) Scenario {
	mainGo := filepath.Join(project, "main.go")
	return Scenario{
		Name:   "ToolKinds",
		Prompt: "[e2e:tool-kinds] exercise every kind of tool",
		Script: fakeclaude.Script{"[e2e:tool-kinds]": {
			func(r *fakeclaude.Request) []fakeclaude.Block {
				blocks := []fakeclaude.Block{
					fakeclaude.Text("Let me look around."),
					fakeclaude.ToolUse("Bash", input{"command": "ls", "description": "List the project"}),
					fakeclaude.ToolUse("Read", input{"file_path": mainGo}),
					fakeclaude.ToolUse("Write", input{"file_path": filepath.Join(project, "notes.md"), "content": "# notes\n"}),
				}
				if r.Offers("TaskCreate") {
					blocks = append(blocks, fakeclaude.ToolUse("TaskCreate", input{
						"subject": "Tidy main.go", "description": "Make main.go tidy", "activeForm": "Tidying main.go",
					}))
				}
				if r.Offers("WebFetch") {
					blocks = append(blocks, fakeclaude.ToolUse("WebFetch", input{
						"url": webURL + "/e2e/page", "prompt": "Summarise the page",
					}))
				}
				if r.Offers("WebSearch") {
					blocks = append(blocks, fakeclaude.ToolUse("WebSearch", input{"query": "go vet tutorial"}))
				}
				return blocks
			},
			func(r *fakeclaude.Request) []fakeclaude.Block {
				blocks := []fakeclaude.Block{fakeclaude.ToolUse("Edit", input{
					"file_path": mainGo, "old_string": "greeting()", "new_string": "greeting() + \"!\"",
				})}
				if id := createdTask(r); id != "" && r.Offers("TaskUpdate") {
					blocks = append(blocks, fakeclaude.ToolUse("TaskUpdate", input{"taskId": id, "status": "completed"}))
				}
				return blocks
			},
			fakeclaude.Reply(fakeclaude.Text("Every tool ran.")),
		}},
	}
}

// taskIDPattern finds the id in TaskCreate's result ("Task #1 created …").
var taskIDPattern = regexp.MustCompile(`#(\w+)`)

// createdTask returns the id of the task TaskCreate created in the
// conversation, or "".
func createdTask(r *fakeclaude.Request) string {
	for _, u := range r.ToolUses() {
		if u.Name != "TaskCreate" {
			continue
		}
		res, ok := r.ToolResult(u.ID)
		if !ok || res.IsError {
			return ""
		}
		if m := taskIDPattern.FindStringSubmatch(res.ResultText()); m != nil {
			return m[1]
		}
	}
	return ""
}

// FailingBashCommand is the command FailingBash runs: it exits with 3.
const FailingBashCommand = "echo failing >&2; exit 3"

// FailingBash runs a Bash command that exits with status 3, which gives a
// PostToolUseFailure instead of a PostToolUse.
func FailingBash() Scenario {
	return Scenario{
		Name:   "FailingBash",
		Prompt: "[e2e:failing-bash] run the failing command",
		Script: fakeclaude.Script{"[e2e:failing-bash]": {
			fakeclaude.Reply(fakeclaude.ToolUse("Bash", input{"command": FailingBashCommand, "description": "Fail on purpose"})),
			fakeclaude.Reply(fakeclaude.Text("The command failed as expected.")),
		}},
	}
}

// PermissionDenials calls Read on a file and Bash on a command that the
// project's permission rules deny (DenyingSettings): the client refuses
// both, the Read before any hook, the Bash after its PreToolUse.
func PermissionDenials(project string) Scenario {
	return Scenario{
		Name:   "PermissionDenials",
		Prompt: "[e2e:permission-denials] read the secret and fetch the page",
		Script: fakeclaude.Script{"[e2e:permission-denials]": {
			fakeclaude.Reply(fakeclaude.ToolUse("Read", input{"file_path": filepath.Join(project, "secret.txt")})),
			fakeclaude.Reply(fakeclaude.ToolUse("Bash", input{"command": "curl http://127.0.0.1:1/", "description": "Fetch the page"})),
			fakeclaude.Reply(fakeclaude.Text("Both were denied.")),
		}},
	}
}

// DenyingSettings are the project settings PermissionDenials runs under.
const DenyingSettings = `{"permissions": {"deny": ["Read(./secret.txt)", "Bash(curl:*)"]}}`

// RejectedCall calls Glob, which the client does not offer in -p mode: the
// call fails validation before any PreToolUse and shows up only in
// PostToolBatch, with a <tool_use_error> response.
func RejectedCall() Scenario {
	return Scenario{
		Name:   "RejectedCall",
		Prompt: "[e2e:rejected-call] find the Go files",
		Script: fakeclaude.Script{"[e2e:rejected-call]": {
			fakeclaude.Reply(fakeclaude.ToolUse("Glob", input{"pattern": "**/*.go"})),
			fakeclaude.Reply(fakeclaude.Text("Glob is not available.")),
		}},
	}
}

// ParallelSubagents spawns three subagents in one turn, two of them
// general-purpose and one Explore; each calls Bash and Read in parallel,
// then answers.
func ParallelSubagents(project string) Scenario {
	mainGo := filepath.Join(project, "main.go")
	sub := func(name string) []fakeclaude.Turn {
		return []fakeclaude.Turn{
			fakeclaude.Reply(
				fakeclaude.ToolUse("Bash", input{"command": "echo " + name, "description": "Say " + name}),
				fakeclaude.ToolUse("Read", input{"file_path": mainGo}),
			),
			fakeclaude.Reply(fakeclaude.Text("subagent " + name + " finished")),
		}
	}
	return Scenario{
		Name:   "ParallelSubagents",
		Prompt: "[e2e:parallel] split the review in three",
		Script: fakeclaude.Script{
			"[e2e:parallel]": {
				func(r *fakeclaude.Request) []fakeclaude.Block {
					return []fakeclaude.Block{
						fakeclaude.Text("Three agents at once."),
						spawn(r, "general-purpose", "review part A", "[e2e:parallel-a] review part A"),
						spawn(r, "general-purpose", "review part B", "[e2e:parallel-b] review part B"),
						spawn(r, "Explore", "explore part C", "[e2e:parallel-c] explore part C"),
					}
				},
				fakeclaude.Reply(fakeclaude.Text("All three reviews are in.")),
			},
			"[e2e:parallel-a]": sub("alpha"),
			"[e2e:parallel-b]": sub("beta"),
			"[e2e:parallel-c]": sub("gamma"),
		},
	}
}

// NestedDepth is how many subagents deep NestedSubagents goes.
const NestedDepth = 3

// NestedSubagents spawns a general-purpose subagent that spawns another
// that spawns a third, which runs Bash. A level whose request offers no
// subagent tool answers "cannot nest" instead, so a test sees why the chain
// stopped.
func NestedSubagents() Scenario {
	script := fakeclaude.Script{}
	key := func(level int) string { return "[e2e:nested-" + string(rune('0'+level)) + "]" }
	for level := 0; level < NestedDepth; level++ {
		next := key(level + 1)
		script[key(level)] = []fakeclaude.Turn{
			func(r *fakeclaude.Request) []fakeclaude.Block {
				if !r.Offers("Agent") && !r.Offers("Task") {
					return []fakeclaude.Block{fakeclaude.Text("cannot nest: no subagent tool offered")}
				}
				return []fakeclaude.Block{spawn(r, "general-purpose", "go one level deeper", next+" go one level deeper")}
			},
			fakeclaude.Reply(fakeclaude.Text("level " + key(level) + " done")),
		}
	}
	script[key(NestedDepth)] = []fakeclaude.Turn{
		fakeclaude.Reply(fakeclaude.ToolUse("Bash", input{"command": "echo deepest", "description": "Report from the bottom"})),
		fakeclaude.Reply(fakeclaude.Text("deepest level done")),
	}
	return Scenario{Name: "NestedSubagents", Prompt: key(0) + " delegate all the way down", Script: script}
}

// Lifecycle is a session that runs a tool and then lives on: resumed,
// forked, compacted and continued (see Env.PlayLifecycle). The follow-up
// runs reuse the first conversation, whose first user message stays the
// original prompt, so their turns continue the same script: turn 2 answers
// the resume, turn 3 the fork. After the compaction the conversation is
// keyed by fakeclaude.CompactedKey; the client keeps the last assistant
// message and adds a synthetic one ("No response requested."), so its
// numbering does not restart at 0 and every turn answers the same.
func Lifecycle() Scenario {
	afterCompaction := fakeclaude.Reply(fakeclaude.Text(ContinuedText))
	return Scenario{
		Name:   "Lifecycle",
		Prompt: "[e2e:lifecycle] check the build",
		Script: fakeclaude.Script{
			"[e2e:lifecycle]": {
				fakeclaude.Reply(fakeclaude.ToolUse("Bash", input{"command": "echo built", "description": "Build"})),
				fakeclaude.Reply(fakeclaude.Text(StartedText)),
				fakeclaude.Reply(fakeclaude.Text(ResumedText)),
				fakeclaude.Reply(fakeclaude.Text(ForkedText)),
			},
			fakeclaude.CompactedKey: {afterCompaction, afterCompaction, afterCompaction, afterCompaction, afterCompaction},
		},
	}
}

// The final answers of the runs of Lifecycle.
const (
	StartedText   = "The build is fine."
	ResumedText   = "Resumed: still fine."
	ForkedText    = "Forked: trying another way."
	ContinuedText = "Continued after the compaction."
)

// LifecycleRuns are the results of Env.PlayLifecycle.
type LifecycleRuns struct {
	// Start created the session; Resume, Compact and Continue ran in it.
	Start, Resume, Fork, Compact, Continue Result
}

// The prompts of the follow-up runs of PlayLifecycle.
const (
	ResumePrompt       = "[e2e:resume] anything new?"
	ForkPrompt         = "[e2e:fork] try another way"
	CompactInstruction = "keep only the build result"
	ContinuePrompt     = "[e2e:continue] and now?"
)

// PlayLifecycle plays sc (normally Lifecycle()) and then runs, in this
// order: a resume of the session, a fork of it, a compaction of it, and a
// continue of the project's most recent session (which is it again).
func (e *Env) PlayLifecycle(sc Scenario) LifecycleRuns {
	e.tb.Helper()
	var runs LifecycleRuns
	runs.Start = e.Play(sc)
	id := runs.Start.SessionID
	runs.Resume = e.Resume(id, ResumePrompt)
	runs.Fork = e.Fork(id, ForkPrompt)
	runs.Compact = e.Compact(id, CompactInstruction)
	runs.Continue = e.Continue(ContinuePrompt)
	return runs
}

// Session is what ToolSession plays: how many tool calls, in how many
// parallel batches, its final answer.
const (
	// SessionToolCalls is the number of tool calls of ToolSession,
	// counting the two Agent calls that spawn its subagents.
	SessionToolCalls = 3*6 + 2 + 2*2*5
	// SessionText is ToolSession's final answer.
	SessionText = "The session is over."
)

// ToolSession is a working session of SessionToolCalls tool calls: the
// main agent runs three turns of six parallel calls (two Bash, two Read,
// two Write), then spawns two general-purpose subagents at once, each of
// which runs two turns of five parallel calls (Bash, Read, Write), then
// answers SessionText. Every run of it is a new session with the same
// calls, so runs can be compared.
func ToolSession(project string) Scenario {
	mainGo, greetGo := filepath.Join(project, "main.go"), filepath.Join(project, "greet.go")
	batch := func(who string, turn, bash, read, write int) []fakeclaude.Block {
		var blocks []fakeclaude.Block
		for i := range bash {
			blocks = append(blocks, fakeclaude.ToolUse("Bash", input{
				"command": fmt.Sprintf("echo %s-%d-%d", who, turn, i), "description": "Report progress",
			}))
		}
		for i := range read {
			blocks = append(blocks, fakeclaude.ToolUse("Read", input{"file_path": []string{mainGo, greetGo}[i%2]}))
		}
		for i := range write {
			blocks = append(blocks, fakeclaude.ToolUse("Write", input{
				"file_path": filepath.Join(project, "notes", fmt.Sprintf("%s-%d-%d.md", who, turn, i)),
				"content":   fmt.Sprintf("# %s, turn %d\n", who, turn),
			}))
		}
		return blocks
	}
	sub := func(who string) []fakeclaude.Turn {
		return []fakeclaude.Turn{
			fakeclaude.Reply(batch(who, 0, 2, 2, 1)...),
			fakeclaude.Reply(batch(who, 1, 2, 1, 2)...),
			fakeclaude.Reply(fakeclaude.Text(who + " is done")),
		}
	}
	return Scenario{
		Name:   "ToolSession",
		Prompt: "[e2e:session] work through the project",
		Script: fakeclaude.Script{
			"[e2e:session]": {
				fakeclaude.Reply(batch("main", 0, 2, 2, 2)...),
				fakeclaude.Reply(batch("main", 1, 2, 2, 2)...),
				fakeclaude.Reply(batch("main", 2, 2, 2, 2)...),
				func(r *fakeclaude.Request) []fakeclaude.Block {
					return []fakeclaude.Block{
						spawn(r, "general-purpose", "first half", "[e2e:session-a] review the first half"),
						spawn(r, "general-purpose", "second half", "[e2e:session-b] review the second half"),
					}
				},
				fakeclaude.Reply(fakeclaude.Text(SessionText)),
			},
			"[e2e:session-a]": sub("a"),
			"[e2e:session-b]": sub("b"),
		},
	}
}

// TracesDenied is the command Traces runs that a deny policy refuses.
const TracesDenied = "rm -rf build-cache"

// Traces is one session with every shape a trace of it shows. Turn 0: a
// failing Bash (FailingBashCommand) and TracesDenied, in parallel. Turn 1:
// three subagents at once: a general-purpose and an Explore one that each
// run Bash and Read, and the head of a chain of NestedDepth general-purpose
// subagents whose deepest runs Bash. Turn 2: the final text.
func Traces(project string) Scenario {
	mainGo := filepath.Join(project, "main.go")
	leaf := func(name string) []fakeclaude.Turn {
		return []fakeclaude.Turn{
			fakeclaude.Reply(
				fakeclaude.ToolUse("Bash", input{"command": "echo " + name, "description": "Say " + name}),
				fakeclaude.ToolUse("Read", input{"file_path": mainGo}),
			),
			fakeclaude.Reply(fakeclaude.Text(name + " finished")),
		}
	}
	chain := func(level int) string { return "[e2e:traces-chain-" + string(rune('0'+level)) + "]" }
	script := fakeclaude.Script{
		"[e2e:traces]": {
			fakeclaude.Reply(
				fakeclaude.ToolUse("Bash", input{"command": FailingBashCommand, "description": "Fail on purpose"}),
				fakeclaude.ToolUse("Bash", input{"command": TracesDenied, "description": "Clean up"}),
			),
			func(r *fakeclaude.Request) []fakeclaude.Block {
				return []fakeclaude.Block{
					spawn(r, "general-purpose", "review", "[e2e:traces-a] review"),
					spawn(r, "Explore", "explore", "[e2e:traces-b] explore"),
					spawn(r, "general-purpose", "delegate down", chain(1)+" delegate down"),
				}
			},
			fakeclaude.Reply(fakeclaude.Text("Traced.")),
		},
		"[e2e:traces-a]": leaf("alpha"),
		"[e2e:traces-b]": leaf("beta"),
	}
	for level := 1; level < NestedDepth; level++ {
		next := chain(level + 1)
		script[chain(level)] = []fakeclaude.Turn{
			func(r *fakeclaude.Request) []fakeclaude.Block {
				return []fakeclaude.Block{spawn(r, "general-purpose", "go one level deeper", next+" go one level deeper")}
			},
			fakeclaude.Reply(fakeclaude.Text("level done")),
		}
	}
	script[chain(NestedDepth)] = []fakeclaude.Turn{
		fakeclaude.Reply(fakeclaude.ToolUse("Bash", input{"command": "echo deepest", "description": "Report from the bottom"})),
		fakeclaude.Reply(fakeclaude.Text("deepest level done")),
	}
	return Scenario{Name: "Traces", Prompt: "[e2e:traces] trace everything", Script: script}
}

// The messages of the API errors APIErrors answers.
const (
	SubagentAPIError = "scripted failure of the subagent"
	MainAPIError     = "scripted failure of the main agent"
)

// ResumedAfterErrorText is the main agent's answer to the prompt "go on"
// after APIErrors failed.
const ResumedAfterErrorText = "Resumed after the error."

// APIErrors spawns a subagent that runs Bash and whose next request fails
// with an API error (400 invalid_request_error: the client gives up at
// once), then runs Bash in the main agent, whose next request fails the
// same way. A later prompt containing "go on" (a resume) is answered
// ResumedAfterErrorText. The client writes each error to the transcript as an
// assistant record of its own (claudecode.SyntheticModel) and fires
// StopFailure for the agent.
func APIErrors() Scenario {
	fail := func(msg string) fakeclaude.Block {
		return fakeclaude.APIError(400, "invalid_request_error", msg)
	}
	// Whether the resume's request holds the client's own records differs
	// between clients (2.1.332 sends none back): it holds two or three
	// assistant messages.
	afterBash := func(r *fakeclaude.Request) []fakeclaude.Block {
		if strings.Contains(r.LastUserText(), "go on") {
			return []fakeclaude.Block{fakeclaude.Text(ResumedAfterErrorText)}
		}
		return []fakeclaude.Block{fail(MainAPIError)}
	}
	return Scenario{
		Name:   "APIErrors",
		Prompt: "[e2e:api-error] delegate, then fail",
		Script: fakeclaude.Script{
			"[e2e:api-error]": {
				func(r *fakeclaude.Request) []fakeclaude.Block {
					return []fakeclaude.Block{
						fakeclaude.Text("Delegating."),
						spawn(r, "general-purpose", "fail inside", "[e2e:api-error-sub] fail inside"),
					}
				},
				fakeclaude.Reply(fakeclaude.ToolUse("Bash", input{"command": "echo main", "description": "Say main"})),
				afterBash, afterBash,
			},
			"[e2e:api-error-sub]": {
				fakeclaude.Reply(fakeclaude.ToolUse("Bash", input{"command": "echo sub", "description": "Say sub"})),
				fakeclaude.Reply(fail(SubagentAPIError)),
			},
		},
	}
}
