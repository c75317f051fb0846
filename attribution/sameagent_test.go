package attribution

import (
	"reflect"
	"testing"
	"time"
)

// TestSameAgentEveryField: sameAgent, which decides whether an agent's
// change goes out on the live stream and into the store, tells apart two
// agents that differ in any one field, and sameUsage two usages: a field
// added to Agent or Usage and left out of them would fail here, not go
// unsent.
func TestSameAgentEveryField(t *testing.T) {
	base := func() *Agent {
		typ, parent := "Explore", "main"
		stopped, notified := time.Unix(20, 0), time.Unix(30, 0)
		return &Agent{AgentID: "a", AgentType: &typ, ParentAgentID: &parent, StoppedAt: &stopped, NotifiedAt: &notified,
			StartedAt: time.Unix(10, 0), LastEventAt: time.Unix(40, 0), Usage: &Usage{Models: []string{"m"}}}
	}
	x := base()
	if !sameAgent(x, base()) {
		t.Fatal("two equal agents differ")
	}
	forEachField(t, reflect.ValueOf(base()).Elem(), "Agent", func(name string, change func(reflect.Value)) {
		y := base()
		change(reflect.ValueOf(y).Elem())
		if sameAgent(x, y) {
			t.Errorf("sameAgent does not tell apart agents differing in %s", name)
		}
	})
	u := x.Usage
	forEachField(t, reflect.ValueOf(base().Usage).Elem(), "Usage", func(name string, change func(reflect.Value)) {
		v := base().Usage
		change(reflect.ValueOf(v).Elem())
		if sameUsage(u, v) {
			t.Errorf("sameUsage does not tell apart usages differing in %s", name)
		}
	})
}

// forEachField calls f for each field of the struct v (embedded ones
// field by field) with a function that changes that field of a struct of
// v's type.
func forEachField(t *testing.T, v reflect.Value, path string, f func(name string, change func(reflect.Value))) {
	t.Helper()
	typ := v.Type()
	for i := range typ.NumField() {
		sf := typ.Field(i)
		name := path + "." + sf.Name
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			forEachField(t, v.Field(i), name, func(n string, change func(reflect.Value)) {
				f(n, func(s reflect.Value) { change(s.Field(i)) })
			})
			continue
		}
		f(name, func(s reflect.Value) { changeValue(t, name, s.Field(i)) })
	}
}

// changeValue sets fv to a value other than the one it holds.
func changeValue(t *testing.T, name string, fv reflect.Value) {
	t.Helper()
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(fv.String() + "x")
	case reflect.Bool:
		fv.SetBool(!fv.Bool())
	case reflect.Int, reflect.Int64, reflect.Uint8:
		if fv.CanInt() {
			fv.SetInt(fv.Int() + 1)
		} else {
			fv.SetUint(fv.Uint() + 1)
		}
	case reflect.Float64:
		fv.SetFloat(fv.Float() + 1)
	case reflect.Slice:
		fv.Set(reflect.Append(fv, reflect.Zero(fv.Type().Elem())))
	case reflect.Pointer:
		if fv.IsNil() {
			fv.Set(reflect.New(fv.Type().Elem()))
			return
		}
		if fv.Type().Elem().Kind() == reflect.Struct && fv.Type().Elem() != reflect.TypeFor[time.Time]() {
			// A struct held by pointer (Usage): another value of it.
			fv.Set(reflect.Zero(fv.Type()))
			return
		}
		changeValue(t, name, fv.Elem())
	case reflect.Struct:
		if tm, ok := fv.Addr().Interface().(*time.Time); ok {
			*tm = tm.Add(time.Second)
			return
		}
		t.Fatalf("%s: a struct field this test cannot change (%s)", name, fv.Type())
	default:
		t.Fatalf("%s: a field of kind %s this test cannot change", name, fv.Kind())
	}
}
