package attribution

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/privacy"
)

// Background subagents (clients from 2.1.332). Agent calls made in parallel
// return at once: their PostToolUse comes right after SubagentStart with a
// tool_response {"isAsync":true,"status":"async_launched",…}, and the
// subagent runs on. The main agent's Stop lists the subagents still running
// in background_tasks; when one finishes, the client submits a prompt of its
// own, a <task-notification> block naming the subagent (task-id) and its
// spawning call (tool-use-id), to wake the main agent.

// backgroundTask is one entry of a Stop's or SubagentStop's
// background_tasks.
type backgroundTask struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status"`
}

// runningSubagents returns the ids of the subagents a background_tasks
// value lists as running, nil when there is none or it is not a list.
func runningSubagents(raw json.RawMessage) []string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil
	}
	var tasks []backgroundTask
	if json.Unmarshal(raw, &tasks) != nil {
		// One malformed entry: read the entries one by one.
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		tasks = tasks[:0]
		for _, it := range items {
			var t backgroundTask
			if json.Unmarshal(it, &t) == nil {
				tasks = append(tasks, t)
			}
		}
	}
	var ids []string
	for _, t := range tasks {
		if t.ID != "" && (t.Type == "" || t.Type == "subagent") && (t.Status == "" || t.Status == "running") {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// taskNotification is what a <task-notification> prompt says.
type taskNotification struct {
	TaskID, ToolUseID, Status, Summary string
}

// maxTag bounds the text read from one tag of a notification: ids, a
// status and a one-line summary.
const maxTag = 1024

// IsTaskNotification reports whether prompt is one the client submitted
// itself to report a background task's end (see the package doc): no
// prompt of the user's, counted in Counts.TaskNotifications. It is the
// model's rule for the views that show prompts (the collector marks such
// events for them), so that none decides it again.
func IsTaskNotification(prompt string) bool {
	_, ok := parseTaskNotification(prompt)
	return ok
}

// parseTaskNotification reads a prompt that the client submitted to report
// a background task's end, and reports whether prompt is one: it starts
// with <task-notification> (leading whitespace aside) and names a task-id.
func parseTaskNotification(prompt string) (taskNotification, bool) {
	body, ok := strings.CutPrefix(strings.TrimSpace(prompt), "<task-notification>")
	if !ok {
		return taskNotification{}, false
	}
	if end := strings.Index(body, "</task-notification>"); end >= 0 {
		body = body[:end]
	}
	tag := func(name string) string {
		_, rest, ok := strings.Cut(body, "<"+name+">")
		if !ok {
			return ""
		}
		v, _, ok := strings.Cut(rest, "</"+name+">")
		if !ok || len(v) > maxTag {
			return ""
		}
		return strings.TrimSpace(v)
	}
	n := taskNotification{TaskID: tag("task-id"), ToolUseID: tag("tool-use-id"), Status: tag("status"), Summary: tag("summary")}
	return n, n.TaskID != ""
}

// notice is a task notification as the model keeps it: the latest one for
// an agent or a call.
type notice struct {
	at     time.Time
	status string
}

// launchedAsync reports whether a delegation call's tool_response says it
// returned while its subagent runs on: {"isAsync":true} or
// {"status":"async_launched"}, also as JSON text or in a privacy preview's
// head.
func launchedAsync(resp json.RawMessage) bool {
	resp = bytes.TrimSpace(resp)
	if len(resp) == 0 {
		return false
	}
	switch resp[0] {
	case '{':
		if c, ok := privacy.ReadCapture(resp); ok {
			// The head is the start of the output's JSON text.
			return strings.Contains(c.Head, `"async_launched"`) || strings.Contains(c.Head, `"isAsync":true`)
		}
		async := false
		_, ok := jsonscan.Members(resp, func(key, val []byte) {
			switch string(jsonscan.Name(key)) {
			case "isAsync":
				async = async || string(val) == "true"
			case "status":
				async = async || jsonString(val) == "async_launched"
			}
		})
		return ok && async
	case '"':
		if t := strings.TrimSpace(jsonString(resp)); strings.HasPrefix(t, "{") {
			return launchedAsync(json.RawMessage(t))
		}
	}
	return false
}
