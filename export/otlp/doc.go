// Package otlp turns the session model (package attribution, as the store
// keeps it) into OpenTelemetry traces with the generative-AI semantic
// conventions, and sends them over OTLP/HTTP in protobuf.
//
// One session is one trace, its id derived from the session id, so that a
// session exported twice, or exported live and then again, lands in the same
// trace. Every span id is derived the same way from what it stands for,
// which lets a span name its parent before the parent is sent:
//
//	invoke_agent main                      the main agent (root)
//	├── execute_tool Bash                  one span per tool call
//	├── execute_tool Agent                 the call that spawned …
//	│   └── invoke_agent Explore           … this subagent, any depth
//	│       └── execute_tool Read
//	└── compaction                         a compaction, with …
//	    └── invoke_agent compaction        … the agents that ran it
//
// Span names are a bounded set (package label, docs/otlp.md): a tool's or
// an agent's own name only when Claude Code or Codex ships it, the full
// name always in gen_ai.tool.name and gen_ai.agent.name.
//
// Nothing here derives the model: agents, their parents and depth, calls and
// their status and times are the model's (attribution.Agent,
// attribution.ToolCall), already redacted when stored. Tool inputs and
// outputs are not exported.
//
// It uses the generated protobuf types (go.opentelemetry.io/proto/otlp) and
// posts them itself rather than through the OpenTelemetry SDK's exporter,
// which links gRPC, and whose spans are made as things happen: these are
// made afterwards, from stored times.
package otlp
