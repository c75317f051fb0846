package event

import (
	"strconv"
	"time"

	"github.com/hookwatch/hookwatch/internal/jsonstr"
)

// AppendJSON appends the envelope's JSON encoding to b: the document
// json.Marshal produces (without its HTML escaping), without reflection. It
// is the one encoding of an envelope: the hook sends and spools it, and the
// store keeps it (store.FromEnvelope). The hook encodes one envelope per
// process, where encoding/json's first use of a type (building its encoder
// by reflection) costs more than the rest of the hook's work. Strings with
// invalid UTF-8 are written with U+FFFD in its place. e.Payload and
// e.Decision must be valid JSON (as json.Marshal requires); they are copied
// as they are.
func (e *Envelope) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.AppendQuoted(b, e.ID)
	b = append(b, `,"runtime":`...)
	b = jsonstr.AppendQuoted(b, e.Runtime)
	if e.Kind != "" {
		b = append(b, `,"kind":`...)
		b = jsonstr.AppendQuoted(b, e.Kind)
	}
	b = append(b, `,"received_at":"`...)
	b = e.ReceivedAt.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if e.Host != "" {
		b = append(b, `,"host":`...)
		b = jsonstr.AppendQuoted(b, e.Host)
	}
	if e.User != "" {
		b = append(b, `,"user":`...)
		b = jsonstr.AppendQuoted(b, e.User)
	}
	if e.HookwatchVersion != "" {
		b = append(b, `,"hookwatch_version":`...)
		b = jsonstr.AppendQuoted(b, e.HookwatchVersion)
	}
	if m := e.Subagent; m != nil {
		b = append(b, `,"subagent":{"agentType":`...)
		b = jsonstr.AppendQuoted(b, m.AgentType)
		if m.Description != "" {
			b = append(b, `,"description":`...)
			b = jsonstr.AppendQuoted(b, m.Description)
		}
		b = append(b, `,"toolUseId":`...)
		b = jsonstr.AppendQuoted(b, m.ToolUseID)
		b = append(b, `,"spawnDepth":`...)
		b = strconv.AppendInt(b, int64(m.SpawnDepth), 10)
		b = append(b, '}')
	}
	if e.ForkOf != "" {
		b = append(b, `,"fork_of":`...)
		b = jsonstr.AppendQuoted(b, e.ForkOf)
	}
	if e.ExitCode != nil {
		b = append(b, `,"exit_code":`...)
		b = strconv.AppendInt(b, int64(*e.ExitCode), 10)
	}
	if len(e.Decision) > 0 {
		b = append(b, `,"decision":`...)
		b = append(b, e.Decision...)
	}
	b = append(b, `,"payload":`...)
	if len(e.Payload) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, e.Payload...)
	}
	return append(b, '}')
}
