package event

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// RecordedPayload extracts the hook payload from a recorded line: the
// object itself when it has a "hook_event_name" string (a raw payload),
// else its "payload" object (an envelope, an audit or export event line, a
// corpus line). kind is the wrapper's "kind" (KindHook for a raw payload or
// a wrapper that names none): only a KindHook payload is one a hook was
// sent. at is the wrapper's time, "received_at" (an envelope) or "time"
// (an audit or export event line), zero when it has none. It is the one
// reader of recorded lines: `hookwatch policy test` and cmdhook.Replay
// both read with it.
func RecordedPayload(line []byte) (payload json.RawMessage, kind string, at time.Time, err error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return nil, "", time.Time{}, fmt.Errorf("not a JSON object: %v", err)
	}
	if obj == nil {
		return nil, "", time.Time{}, errors.New("not a JSON object: null")
	}
	if n := obj["hook_event_name"]; len(n) > 0 && n[0] == '"' {
		return json.RawMessage(line), KindHook, time.Time{}, nil
	}
	p := obj["payload"]
	var probe map[string]json.RawMessage
	if p == nil || json.Unmarshal(p, &probe) != nil || probe == nil {
		return nil, "", time.Time{}, errors.New(`not a hook payload: no "hook_event_name" and no "payload" object`)
	}
	if err := json.Unmarshal(obj["kind"], &kind); err != nil || kind == "" {
		kind = KindHook
	}
	for _, k := range []string{"received_at", "time"} {
		var s string
		if json.Unmarshal(obj[k], &s) == nil {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				at = t
				break
			}
		}
	}
	return p, kind, at, nil
}
