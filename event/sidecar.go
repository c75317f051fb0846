package event

import (
	"strconv"

	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

// DecodeSubagentMeta reads the sidecar Claude Code writes beside a
// subagent's transcript into a SubagentMeta, as json.Unmarshal into one
// does for the keys as the client spells them: members are matched by
// exact key, the last of a repeated key wins, null leaves a field as it
// is, and ok is false when data is not one JSON object or a field has a
// value of another type (spawnDepth must be an integer). Without
// reflection: the hook reads a sidecar on every event of a subagent, and
// encoding/json's first use by reflection cost a run ~0.03-0.05 ms.
func DecodeSubagentMeta(data []byte) (m SubagentMeta, ok bool) {
	fieldsOK := true
	str := func(dst *string, val []byte) { fieldsOK = fieldsOK && intoString(dst, val) }
	_, ok = jsonscan.Members(data, func(key, val []byte) {
		switch string(key) {
		case `"agentType"`:
			str(&m.AgentType, val)
		case `"description"`:
			str(&m.Description, val)
		case `"toolUseId"`:
			str(&m.ToolUseID, val)
		case `"spawnDepth"`:
			if val[0] == 'n' {
				return
			}
			n, err := strconv.ParseInt(string(val), 10, 0)
			if err != nil {
				fieldsOK = false
				return
			}
			m.SpawnDepth = int(n)
		}
	})
	return m, ok && fieldsOK
}

// intoString sets *dst from the JSON value val as json.Unmarshal into a
// string field does: a string sets it, null leaves it as it is, and
// anything else fails.
func intoString(dst *string, val []byte) bool {
	switch val[0] {
	case 'n':
		return true
	case '"':
		s, ok := jsonscan.Unquote(val)
		if ok {
			*dst = s
		}
		return ok
	}
	return false
}
