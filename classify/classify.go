// Package classify gives a tool call its meaning: what it is for (its
// subtype: read_file, modify_file, run_test, install_dependency,
// git_commit, web_fetch, delegation, mcp_call …), what it does (operation,
// effect), on what (entity, files) and how much it matters (importance).
// Shell calls — Claude Code's Bash and PowerShell, Codex's shell tools — are
// classified from their command's analysis (package shell).
//
// The session model (package attribution) calls Call once per call input
// and keeps the result on the call; nothing else classifies a call.
package classify

import (
	"encoding/json"
	"path"
	"slices"
	"strings"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/shell"
)

// Subtypes (Meta.Subtype): the shell's (shell.Subtype*) and the tools'.
const (
	SubtypeReadFile          = shell.SubtypeReadFile
	SubtypeListFiles         = shell.SubtypeListFiles
	SubtypeSearch            = shell.SubtypeSearch
	SubtypeModifyFile        = shell.SubtypeModifyFile
	SubtypeDeleteFile        = shell.SubtypeDeleteFile
	SubtypeRunTest           = shell.SubtypeRunTest
	SubtypeRunBuild          = shell.SubtypeRunBuild
	SubtypeRunLint           = shell.SubtypeRunLint
	SubtypeFormatCode        = shell.SubtypeFormatCode
	SubtypeInstallDependency = shell.SubtypeInstallDependency
	SubtypeGitCommit         = shell.SubtypeGitCommit
	SubtypeGitPush           = shell.SubtypeGitPush
	SubtypeGitOperation      = shell.SubtypeGitOperation
	SubtypeWebFetch          = shell.SubtypeWebFetch
	SubtypeRunCommand        = shell.SubtypeRunCommand
	SubtypeUnknown           = shell.SubtypeUnknown
	SubtypeWebSearch         = "web_search"
	SubtypeDelegation        = "delegation"
	SubtypeMCPCall           = "mcp_call"
	SubtypePlan              = "plan" // todo lists, tasks, plan mode
	SubtypeOther             = "other"
)

// subtypes are every Meta.Subtype.
var subtypes = [...]string{
	SubtypeReadFile, SubtypeListFiles, SubtypeSearch, SubtypeModifyFile, SubtypeDeleteFile,
	SubtypeRunTest, SubtypeRunBuild, SubtypeRunLint, SubtypeFormatCode, SubtypeInstallDependency,
	SubtypeGitCommit, SubtypeGitPush, SubtypeGitOperation, SubtypeWebFetch, SubtypeRunCommand, SubtypeUnknown,
	SubtypeWebSearch, SubtypeDelegation, SubtypeMCPCall, SubtypePlan, SubtypeOther,
}

// Subtypes returns every Meta.Subtype: what a filter or a rule may name.
// The slice is the caller's.
func Subtypes() []string { return slices.Clone(subtypes[:]) }

// Groups (Meta.Group) gather subtypes for colours and filters.
const (
	GroupFile       = "file"       // read, list, search, modify, delete
	GroupVerify     = "verify"     // tests, builds, linters, formatters
	GroupDependency = "dependency" // installing packages
	GroupVCS        = "vcs"        // git
	GroupWeb        = "web"        // fetches and searches
	GroupAgent      = "agent"      // delegation to subagents
	GroupPlan       = "plan"
	GroupMCP        = "mcp"
	GroupShell      = "shell" // other commands, and what could not be analysed
	GroupOther      = "other"
)

// Importance levels (Meta.Importance), from the effect.
const (
	ImportanceLow      = "low"      // reads
	ImportanceNormal   = "normal"   // checks, network, delegation
	ImportanceHigh     = "high"     // writes
	ImportanceCritical = "critical" // destructive
)

// Meta is the meaning of one tool call (the hook spec's semantic
// metadata: subtypeKey, subtypeGroup, toolFamily — attribution keeps that
// one as ToolCall.Family —, operation, entityType, entityName, importance).
type Meta struct {
	Subtype string `json:"subtype"`
	Group   string `json:"subtype_group"`
	// Operation is read, write, delete, execute, search, fetch, delegate,
	// call, plan or other.
	Operation string `json:"operation"`
	// EntityType and EntityName say what the call acts on: a file and its
	// path, a command and its text (cut), a url, a query, an agent type,
	// an mcp_tool "server/tool".
	EntityType string `json:"entity_type,omitempty"`
	EntityName string `json:"entity_name,omitempty"`
	Importance string `json:"importance"`
	// Effect is what the call can do (shell.Effect order); "" when not
	// known (an MCP tool).
	Effect shell.Effect `json:"effect,omitempty"`
	// FilesRead and FilesWritten are the paths the call touched: a Read's
	// file_path, an Edit's, the files a shell command reads and writes.
	FilesRead    []string `json:"files_read,omitempty"`
	FilesWritten []string `json:"files_written,omitempty"`
	// Command is the analysis of a shell call's command.
	Command *shell.Analysis `json:"command,omitempty"`
	// MCPServer and MCPTool split mcp__<server>__<tool>.
	MCPServer string `json:"mcp_server,omitempty"`
	MCPTool   string `json:"mcp_tool,omitempty"`
}

// maxEntity bounds EntityName.
const maxEntity = 200

// Call classifies a tool call from its tool name and input; cwd is the
// working directory the call ran in (relative paths are resolved against
// it), "" when unknown. It never fails: an input it cannot read is
// classified from the tool name alone.
func Call(toolName string, input json.RawMessage, cwd string) Meta {
	var in map[string]any
	if len(input) > 0 && input[0] == '{' {
		in = decodeInput(input)
	}
	return Input(toolName, in, cwd)
}

// decodeInput is json.Unmarshal of a call's input into a map as far as
// Input reads it (nil when the input is not one valid JSON object): the
// members named in inputKeys, strings, and arrays (commandOf) with their
// strings; every other value is nil. The session model classifies every
// call it sees, and the reflection of encoding/json, with a value made for
// every member and every nested one (an Edit's old and new text, a Write's
// whole content), was most of the cost.
func decodeInput(input []byte) map[string]any {
	in := make(map[string]any, 4)
	_, ok := jsonscan.Members(input, func(key, val []byte) {
		if name := jsonscan.Name(key); inputKeys[string(name)] {
			in[string(name)] = inputValue(val)
		}
	})
	if !ok {
		return nil
	}
	return in
}

// inputKeys are the members of a call's input that Input reads (str and
// commandOf): a key Input reads must be added here.
var inputKeys = map[string]bool{
	"command": true, "cmd": true, "input": true, "file_path": true, "notebook_path": true, "path": true,
	"pattern": true, "query": true, "url": true, "subagent_type": true, "agent_type": true,
	"description": true, "to": true, "subject": true, "taskId": true, "task_id": true,
}

// inputValue is a member of decodeInput.
func inputValue(val []byte) any {
	switch val[0] {
	case '"':
		s, _ := jsonscan.Unquote(val)
		return s
	case '[':
		out := []any{}
		jsonscan.Elements(val, func(e []byte) {
			var v any
			if e[0] == '"' {
				v, _ = jsonscan.Unquote(e)
			}
			out = append(out, v)
		})
		return out
	}
	return nil
}

// Input is Call for an input already decoded (the policy engine's
// payload); in may be nil.
func Input(toolName string, in map[string]any, cwd string) Meta {
	str := func(k string) string { s, _ := in[k].(string); return s }
	m := Meta{Subtype: SubtypeOther, Operation: "other"}
	switch fam := Family(toolName); {
	case fam == FamilyRunCommand:
		if cmd, ok := commandOf(toolName, in); ok {
			a := shell.Analyze(cmd, shell.Options{Dir: cwd})
			m.Command = &a
			m.Subtype, m.Effect = a.Subtype, a.Effect
			m.EntityType, m.EntityName = "command", cut(cmd)
			// shell.Anywhere in the analysis's writes is what a command
			// whose target cannot be known may write, for the rules: not a
			// file the call wrote (the thrash signal, the stale-context
			// guard and the comparison read these).
			m.FilesRead, m.FilesWritten = a.Reads, filesNamed(a.Writes)
			m.Operation = "execute"
			switch a.Subtype {
			case SubtypeReadFile, SubtypeListFiles:
				m.Operation = "read"
			case SubtypeSearch:
				m.Operation = "search"
			case SubtypeModifyFile:
				m.Operation = "write"
			case SubtypeDeleteFile:
				m.Operation = "delete"
			case SubtypeWebFetch:
				m.Operation = "fetch"
			}
		} else {
			// BashOutput, KillShell, write_stdin: about a running command.
			m.Subtype, m.Operation, m.Effect = SubtypeRunCommand, "execute", shell.ExecuteCheck
		}
	case toolName == event.ApplyPatch:
		m.Subtype, m.Operation, m.Effect, m.EntityType = SubtypeModifyFile, "write", shell.Write, "file"
		files := event.PatchFiles(patchText(in))
		deletes := len(files) > 0
		for _, f := range files {
			m.FilesWritten = appendPath(m.FilesWritten, abs(f.Path, cwd))
			if f.MoveTo != "" {
				m.FilesWritten = appendPath(m.FilesWritten, abs(f.MoveTo, cwd))
			}
			deletes = deletes && f.Op == event.PatchDelete
		}
		if deletes {
			m.Subtype, m.Operation, m.Effect = SubtypeDeleteFile, "delete", shell.Destructive
		}
		if len(m.FilesWritten) > 0 {
			m.EntityName = m.FilesWritten[0]
		}
	case fam == FamilyReadFile:
		m.Subtype, m.Operation, m.Effect, m.EntityType = SubtypeReadFile, "read", shell.ReadOnly, "file"
		p := firstOf(str("file_path"), str("notebook_path"), str("path"))
		if toolName == "LS" {
			m.Subtype = SubtypeListFiles
		}
		if p != "" {
			m.EntityName = abs(p, cwd)
			m.FilesRead = []string{m.EntityName}
		}
	case fam == FamilyModifyFile:
		m.Subtype, m.Operation, m.Effect, m.EntityType = SubtypeModifyFile, "write", shell.Write, "file"
		if p := firstOf(str("file_path"), str("notebook_path")); p != "" {
			m.EntityName = abs(p, cwd)
			m.FilesWritten = []string{m.EntityName}
		}
	case fam == FamilySearch:
		m.Subtype, m.Operation, m.Effect, m.EntityType = SubtypeSearch, "search", shell.ReadOnly, "pattern"
		m.EntityName = cut(firstOf(str("pattern"), str("query")))
		if p := str("path"); p != "" {
			m.FilesRead = []string{abs(p, cwd)}
		}
	case fam == FamilyWebFetch:
		m.Operation, m.Effect = "fetch", shell.Network
		if u := str("url"); u != "" {
			m.Subtype, m.EntityType, m.EntityName = SubtypeWebFetch, "url", cut(u)
		} else {
			m.Subtype, m.EntityType, m.EntityName = SubtypeWebSearch, "query", cut(str("query"))
		}
	case fam == FamilyDelegation:
		m.Subtype, m.Operation, m.Effect, m.EntityType = SubtypeDelegation, "delegate", shell.ExecuteCheck, "agent"
		m.EntityName = cut(firstOf(str("subagent_type"), str("agent_type"), str("description"), str("to")))
	case fam == FamilyTask:
		m.Subtype, m.Operation, m.Effect, m.EntityType = SubtypePlan, "plan", shell.ReadOnly, "task"
		m.EntityName = cut(firstOf(str("subject"), str("taskId"), str("task_id")))
	case fam == FamilyMCPCall:
		m.Subtype, m.Operation, m.EntityType = SubtypeMCPCall, "call", "mcp_tool"
		if rest, ok := strings.CutPrefix(toolName, "mcp__"); ok {
			m.MCPServer, m.MCPTool, _ = strings.Cut(rest, "__")
			m.EntityName = m.MCPServer + "/" + m.MCPTool
		} else {
			m.EntityName = toolName
		}
	case toolName == "ExitPlanMode" || toolName == "EnterPlanMode":
		m.Subtype, m.Operation, m.Effect = SubtypePlan, "plan", shell.ReadOnly
	}
	m.Group = GroupOf(m.Subtype)
	m.Importance = importance(m.Effect)
	return m
}

// commandOf returns the command of a shell call: Claude Code's Bash and
// PowerShell (command), Codex's exec_command (cmd) and shell/local_shell
// (command as an argv array, quoted back into a command line).
func commandOf(toolName string, in map[string]any) (string, bool) {
	for _, k := range []string{"command", "cmd"} {
		switch v := in[k].(type) {
		case string:
			return v, true
		case []any:
			parts := make([]string, 0, len(v))
			for _, a := range v {
				s, _ := a.(string)
				parts = append(parts, claudecode.ShellQuote(s))
			}
			return strings.Join(parts, " "), len(parts) > 0
		}
	}
	return "", false
}

// appendPath appends p unless it is there, within 100 paths.
func appendPath(list []string, p string) []string {
	if len(list) >= 100 || slices.Contains(list, p) {
		return list
	}
	return append(list, p)
}

// GroupOf returns the group of a subtype.
func GroupOf(subtype string) string {
	switch subtype {
	case SubtypeReadFile, SubtypeListFiles, SubtypeSearch, SubtypeModifyFile, SubtypeDeleteFile:
		return GroupFile
	case SubtypeRunTest, SubtypeRunBuild, SubtypeRunLint, SubtypeFormatCode:
		return GroupVerify
	case SubtypeInstallDependency:
		return GroupDependency
	case SubtypeGitCommit, SubtypeGitPush, SubtypeGitOperation:
		return GroupVCS
	case SubtypeWebFetch, SubtypeWebSearch:
		return GroupWeb
	case SubtypeDelegation:
		return GroupAgent
	case SubtypePlan:
		return GroupPlan
	case SubtypeMCPCall:
		return GroupMCP
	case SubtypeRunCommand, SubtypeUnknown:
		return GroupShell
	}
	return GroupOther
}

func importance(e shell.Effect) string {
	switch e {
	case shell.ReadOnly:
		return ImportanceLow
	case shell.Write:
		return ImportanceHigh
	case shell.Destructive:
		return ImportanceCritical
	}
	return ImportanceNormal
}

func abs(p, cwd string) string {
	if cwd == "" || path.IsAbs(p) || strings.HasPrefix(p, "~") {
		return p
	}
	return path.Join(cwd, p)
}

// PatchFiles returns the files an apply_patch call touches, as its patch
// names them (paths relative to the call's directory), from its input:
// what FilesWritten holds resolved, with each file's operation.
func PatchFiles(input json.RawMessage) []event.PatchFile {
	if len(input) == 0 || input[0] != '{' {
		return nil
	}
	return event.PatchFiles(patchText(decodeInput(input)))
}

// patchText is an apply_patch input's patch: its "command" member (as
// Codex's hooks send it), else its "input".
func patchText(in map[string]any) string {
	for _, k := range [...]string{"command", "input"} {
		if s, _ := in[k].(string); s != "" {
			return s
		}
	}
	return ""
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func cut(s string) string {
	if len(s) <= maxEntity {
		return s
	}
	i := maxEntity
	for i > 0 && s[i]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		i--
	}
	return s[:i] + "…"
}

// filesNamed returns writes without shell.Anywhere.
func filesNamed(writes []string) []string {
	if !slices.Contains(writes, shell.Anywhere) {
		return writes
	}
	return slices.DeleteFunc(slices.Clone(writes), func(w string) bool { return w == shell.Anywhere })
}
