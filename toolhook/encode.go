package toolhook

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/hookwatch/hookwatch/internal/jsonstr"
)

// appendValue appends v as JSON, as encoding/json writes it (map keys
// sorted, the same numbers), but for what it does not escape: '<', '>' and
// '&' stay as they are (nothing here is embedded in HTML; package jsonstr).
// The values tools take and return — maps, slices, strings, numbers, bools
// — are written without reflection, on every call's path; any other type
// is handed to encoding/json. It fails where encoding/json fails (NaN, a
// channel, a cycle).
func appendValue(b []byte, v any) ([]byte, error) {
	return appendDepth(b, v, 0)
}

// maxDepth is how deep appendValue nests before it hands a value to
// encoding/json, which detects cycles.
const maxDepth = 64

func appendDepth(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return appendMarshal(b, v)
	}
	var err error
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return jsonstr.AppendQuoted(b, v), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case float64:
		return jsonstr.AppendFloat(b, v, 64)
	case float32:
		return jsonstr.AppendFloat(b, float64(v), 32)
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(v), 10), nil
	case uint64:
		return strconv.AppendUint(b, v, 10), nil
	case map[string]any:
		if v == nil {
			return append(b, "null"...), nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.AppendQuoted(b, k)
			b = append(b, ':')
			if b, err = appendDepth(b, v[k], depth+1); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case []any:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendDepth(b, e, depth+1); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case []string:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.AppendQuoted(b, e)
		}
		return append(b, ']'), nil
	}
	return appendMarshal(b, v)
}

// appendMarshal hands v to encoding/json, without its HTML escapes.
func appendMarshal(b []byte, v any) ([]byte, error) {
	w := bytes.NewBuffer(b)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return bytes.TrimSuffix(w.Bytes(), []byte("\n")), nil
}
