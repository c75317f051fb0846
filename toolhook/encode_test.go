package toolhook

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// TestAppendValue holds the encoder of inputs and outputs to encoding/json's
// bytes (without its HTML escapes), and to its failures.
func TestAppendValue(t *testing.T) {
	f := func(v any) {
		t.Helper()
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		werr := enc.Encode(v)
		got, err := appendValue(nil, v)
		if (err != nil) != (werr != nil) {
			t.Fatalf("%#v: error %v, encoding/json's %v", v, err, werr)
		}
		if err == nil && string(got) != string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
			t.Fatalf("%#v:\n got %s\nwant %s", v, got, want.Bytes())
		}
	}
	f(nil)
	f("a <b> & \"c\"\n\x01\xff")
	f(map[string]any{"z": 1, "a": []any{true, nil, 1.5, "x"}, "m": map[string]any{"k": []string{"p", "q"}}, "é": int64(-3)})
	f(map[string]any(nil))
	f([]any(nil))
	f([]string(nil))
	for _, x := range []float64{0, 1, -1, 0.1, 1e-7, 1e-6, 123456789, 1e20, 1e21, 1.5e300, -2.5e-9, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		f(x)
		f(float32(x))
	}
	f(math.NaN())
	f(map[string]any{"x": math.Inf(1)})
	f(uint64(math.MaxUint64))
	f(int32(-7))
	f(struct {
		A string `json:"a"`
		B []int
	}{"<x>", []int{1, 2}})
	f(map[string]any{"raw": json.RawMessage(`{"b": 1}`), "n": json.Number("12")})
	f(map[string]any{"ch": make(chan int)})
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	f(cyclic)
}
