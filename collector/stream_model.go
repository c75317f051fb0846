package collector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/hookwatch/hookwatch/store"
)

// The live stream carries model changes next to events: after the events,
// each pass sends one "model" message per session whose model changed since
// the stream's model position (a call started or ended, an agent started
// or stopped, a status or count changed):
//
//	event: model
//	id: <event seq>:<model seq>
//	data: {"session_id":…,"model_seq":…,"session":{SessionView},"agents":[…],"tool_calls":[…]}
//
// With session_id the message holds the session's agents and calls that
// changed (those rows whole, as the listings show them; a session with more
// changes than a page sends several messages); without, only the session,
// for a list of sessions. Every message's id carries both positions, and a
// stream resumed with Last-Event-ID "E:M" replays the events after seq E
// and the model changes after M; a plain "E" (or none) starts the model at
// its current position. With events=exclude only the model messages (and
// stall notices) are sent, each id's E the last event stored when it was.

// streamPos is a stream's position: the last event seq and the last model
// change (store.SessionModel.UpdatedSeq) it sent.
type streamPos struct{ event, model int64 }

// parseStreamPos reads Last-Event-ID: "E" or "E:M".
func parseStreamPos(v string) (streamPos, bool, error) {
	e, m, hasModel := strings.Cut(v, ":")
	seq, err := strconv.ParseInt(e, 10, 64)
	if err != nil || seq < 0 {
		return streamPos{}, false, errors.New("Last-Event-ID must be \"<event seq>\" or \"<event seq>:<model seq>\"")
	}
	p := streamPos{event: seq}
	if hasModel {
		if p.model, err = strconv.ParseInt(m, 10, 64); err != nil || p.model < 0 {
			return streamPos{}, false, errors.New("Last-Event-ID must be \"<event seq>\" or \"<event seq>:<model seq>\"")
		}
	}
	return p, hasModel, nil
}

func (p streamPos) String() string {
	return strconv.FormatInt(p.event, 10) + ":" + strconv.FormatInt(p.model, 10)
}

// ModelMessage is the data of a "model" message of GET /v1/stream.
type ModelMessage struct {
	SessionID string            `json:"session_id"`
	ModelSeq  int64             `json:"model_seq"`
	Session   *SessionView      `json:"session,omitempty"`
	Agents    []json.RawMessage `json:"agents"`
	ToolCalls []json.RawMessage `json:"tool_calls"`
}

// streamModel sends, through send, the model messages for what changed
// after pos.model: for one session with its agents and calls, a page of each
// per message, or for every session (summaries only). It advances pos.model
// past each session sent whole, so a message's id resumes at the latest
// session the client has all of (a resume may repeat a session's rows,
// never miss one).
func (s *Server) streamModel(ctx context.Context, sessionID string, users []string, pos *streamPos, send func([]byte) error) error {
	var buf bytes.Buffer
	emit := func(msg *ModelMessage) error {
		b, err := json.Marshal(msg)
		if err != nil {
			return err
		}
		buf.Reset()
		buf.WriteString("event: model\nid: ")
		buf.WriteString(pos.String())
		buf.WriteString("\ndata: ")
		buf.Write(b) // encoding/json escapes newlines in strings
		buf.WriteString("\n\n")
		return send(buf.Bytes())
	}
	if sessionID == "" {
		// Sessions come by (UpdatedSeq, id): a change is complete once a
		// later one shows up, and only then does the position pass it.
		f := store.SessionModelFilter{UpdatedAfter: pos.model, Users: users, Limit: streamPage}
		last := pos.model
		for {
			page, err := s.store.ChangedSessionModels(ctx, f)
			if err != nil {
				return err
			}
			for _, m := range page.Sessions {
				if m.UpdatedSeq > last {
					pos.model, last = last, m.UpdatedSeq
				}
				msg, err := s.modelMessage(ctx, m)
				if err != nil {
					return err
				}
				if err := emit(msg); err != nil {
					return err
				}
			}
			if page.Next == "" || len(page.Sessions) == 0 {
				pos.model = last
				return nil
			}
			f.Cursor = page.Next
		}
	}
	ms, err := s.store.SessionModels(ctx, []string{sessionID})
	if err != nil {
		return err
	}
	m, ok := ms[sessionID]
	if !ok || m.UpdatedSeq <= pos.model {
		return nil
	}
	msg, err := s.modelMessage(ctx, m)
	if err != nil {
		return err
	}
	af := store.AgentFilter{SessionID: sessionID, UpdatedAfter: pos.model, Order: store.ByChange, Limit: streamPage}
	cf := store.ToolCallFilter{SessionID: sessionID, UpdatedAfter: pos.model, Order: store.ByChange, Limit: streamPage}
	for first := true; ; first = false {
		var ap store.AgentPage
		var cp store.ToolCallPage
		if first || af.Cursor != "" {
			if ap, err = s.store.Agents(ctx, af); err != nil {
				return err
			}
		}
		if first || cf.Cursor != "" {
			if cp, err = s.store.ToolCalls(ctx, cf); err != nil {
				return err
			}
		}
		for _, a := range ap.Agents {
			msg.Agents = append(msg.Agents, a.Doc)
		}
		for _, c := range cp.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, c.Doc)
		}
		af.Cursor, cf.Cursor = ap.Next, cp.Next
		if af.Cursor == "" && cf.Cursor == "" {
			pos.model = max(pos.model, m.UpdatedSeq)
			return emit(msg)
		}
		if err := emit(msg); err != nil {
			return err
		}
		msg = emptyModelMessage(m)
	}
}

// emptyModelMessage is a session's model message without its view, agents
// or calls: the continuation of a change too big for one message.
func emptyModelMessage(m store.SessionModel) *ModelMessage {
	return &ModelMessage{SessionID: m.SessionID, ModelSeq: m.UpdatedSeq, Agents: []json.RawMessage{}, ToolCalls: []json.RawMessage{}}
}

// modelMessage starts the model message of a session: its view, without
// agents and calls.
func (s *Server) modelMessage(ctx context.Context, m store.SessionModel) (*ModelMessage, error) {
	msg := emptyModelMessage(m)
	if m.AliasOf != "" {
		return msg, nil
	}
	sess, err := s.store.Session(ctx, m.SessionID)
	switch {
	case err == nil:
		v := view(sess, m, store.SessionModel{})
		msg.Session = &v
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	return msg, nil
}
