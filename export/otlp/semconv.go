package otlp

// Attribute names and values of the OpenTelemetry semantic conventions for
// generative AI (semconv v1.41.0, gen-ai-agent-spans.md and the registry;
// the token counts as anthropic.md defines them), kept as constants rather
// than imported: the semconv Go module comes with the SDK, which this
// package does not link (see package doc).
const (
	attrOperationName    = "gen_ai.operation.name"
	attrProviderName     = "gen_ai.provider.name"
	attrAgentName        = "gen_ai.agent.name"
	attrAgentID          = "gen_ai.agent.id"
	attrAgentDescription = "gen_ai.agent.description"
	attrConversationID   = "gen_ai.conversation.id"
	attrRequestModel     = "gen_ai.request.model"
	attrResponseModel    = "gen_ai.response.model"
	// The usage attributes of the invoke_agent internal span.
	// gen_ai.usage.input_tokens counts every input token, the cached
	// ones too; the cache's reads and writes are also given apart. The
	// tokens written to the cache go under both the name of v1.41,
	// cache_creation, and the one the GenAI conventions renamed it to
	// after (semantic-conventions-genai #440), cache_write: the backends
	// and their dashboards read one or the other, and which depends on
	// their version.
	attrInputTokens         = "gen_ai.usage.input_tokens"
	attrOutputTokens        = "gen_ai.usage.output_tokens"
	attrCacheReadTokens     = "gen_ai.usage.cache_read.input_tokens"
	attrCacheCreationTokens = "gen_ai.usage.cache_creation.input_tokens"
	attrCacheWriteTokens    = "gen_ai.usage.cache_write.input_tokens"
	attrToolName            = "gen_ai.tool.name"
	attrToolCallID          = "gen_ai.tool.call.id"
	attrToolType            = "gen_ai.tool.type"
	attrErrorType           = "error.type"

	attrServiceName    = "service.name"
	attrServiceVersion = "service.version"

	opInvokeAgent = "invoke_agent"
	opExecuteTool = "execute_tool"

	// gen_ai.tool.type: a tool the client runs itself is a function; one
	// an MCP server runs is an extension.
	toolTypeFunction  = "function"
	toolTypeExtension = "extension"
)

// hookwatch's own attributes: what the model knows that the conventions have
// no name for.
const (
	attrAgentRole       = "hookwatch.agent.role"
	attrAgentType       = "hookwatch.agent.type"
	attrAgentDepth      = "hookwatch.agent.depth"
	attrAgentResolvedBy = "hookwatch.agent.resolved_by"
	attrAgentBackground = "hookwatch.agent.background"
	attrAgentOpen       = "hookwatch.agent.open"
	attrAgentToolCalls  = "hookwatch.agent.tool_calls"
	attrAgentFailures   = "hookwatch.agent.failures"
	attrAgentDenials    = "hookwatch.agent.denials"
	attrAgentRejected   = "hookwatch.agent.rejected"
	attrToolStatus      = "hookwatch.tool.status"
	attrToolFamily      = "hookwatch.tool.family"
	attrToolPromptID    = "hookwatch.tool.prompt_id"
	attrToolDenied      = "hookwatch.tool.denied"
	attrToolRejected    = "hookwatch.tool.rejected"
	attrDeniedReason    = "hookwatch.tool.denied_reason"
	attrSpawnedAgentID  = "hookwatch.tool.spawned_agent_id"
	attrCompactTrigger  = "hookwatch.compaction.trigger"
	attrRunSource       = "hookwatch.run.source"
	attrSessionProject  = "hookwatch.session.project"
	attrSessionLineage  = "hookwatch.session.lineage"
	attrSessionParent   = "hookwatch.session.parent_id"
	attrRuntime         = "hookwatch.runtime"
	attrLinkKind        = "hookwatch.link"
	attrUsageResponses  = "hookwatch.usage.responses"
	attrUsageCost       = "hookwatch.usage.cost_usd"
	attrUsageUnpriced   = "hookwatch.usage.unpriced"
	attrUsageModels     = "hookwatch.usage.models"
)
