// Package jsontest fills values for the tests that hold a hand-written JSON
// encoder to encoding/json: every exported field of a struct, nested ones
// included, set to values that take an encoder's every path (escapes,
// invalid UTF-8, HTML, times json.Marshal refuses, raw documents that are
// not compact or not valid).
package jsontest

import (
	"encoding/json"
	"reflect"
	"time"
)

// Full sets every field v points to, nested ones included, to a value
// that is not its zero: a field an encoder leaves out shows.
func Full(v any) { fill(reflect.ValueOf(v).Elem(), &filler{full: true}) }

// Fill sets the fields v points to as data chooses: which are set, to
// what (fuzz input, or random bytes).
func Fill(v any, data []byte) { fill(reflect.ValueOf(v).Elem(), &filler{data: data}) }

// Fields counts the exported fields of struct type t, those of its
// embedded structs (or pointers to them) in their place: the members of a full value's JSON.
func Fields(t reflect.Type) int {
	n := 0
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case !f.IsExported():
		case f.Anonymous && f.Type.Kind() == reflect.Pointer:
			n += Fields(f.Type.Elem())
		case f.Anonymous:
			n += Fields(f.Type)
		default:
			n++
		}
	}
	return n
}

// filler reads the choices of fill from data (zeros past its end); full
// sets every value.
type filler struct {
	data []byte
	full bool
}

func (f *filler) byte() byte {
	if f.full {
		return 1
	}
	if len(f.data) == 0 {
		return 0
	}
	b := f.data[0]
	f.data = f.data[1:]
	return b
}

// Values that take the encoders' every path.
var (
	strs  = []string{"", "x", "Bash", "a<b>&c", "line\nbreak\t\"q\"\\", "ü\u2028\u2029…", "bad\xff\xfe", "\x00\x1f\x7f", "/proj/main.go"}
	raws  = []string{"null", `{"a":1}`, ` { "a" : [1, 2, "x y"] } `, `"<b>&\u2028"`, "\"\u2028\u2029\"", `{"k":"v\\"<"}`, "[1,\n2]", "", "{", `{"a":}`, "1e5", "true"}
	times = []time.Time{
		time.Date(2026, 11, 28, 17, 0, 0, 123456789, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 5*3600+30*60)),
		time.Date(2026, 1, 2, 3, 4, 5, 1000, time.FixedZone("", -8*3600)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 24*3600)),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", -25*3600)),
		{},
	}
)

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// fill sets v, as f chooses.
func fill(v reflect.Value, f *filler) {
	switch {
	case v.Type() == timeType:
		t := times[0]
		if !f.full {
			t = times[int(f.byte())%len(times)]
		}
		v.Set(reflect.ValueOf(t))
		return
	case v.Type() == rawType:
		b := f.byte()
		switch {
		case f.full:
			v.SetBytes([]byte(raws[2]))
		case b%8 == 0: // nil
		case b%8 == 1: // its own bytes
			n := min(int(f.byte()%32), len(f.data))
			v.SetBytes(append([]byte{}, f.data[:n]...))
			f.data = f.data[n:]
		default:
			v.SetBytes([]byte(raws[int(b)%len(raws)]))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		b := f.byte()
		switch {
		case f.full:
			v.SetString(strs[3])
		case b%4 == 0: // its own bytes
			n := min(int(f.byte()%24), len(f.data))
			v.SetString(string(f.data[:n]))
			f.data = f.data[n:]
		default:
			v.SetString(strs[int(b)%len(strs)])
		}
	case reflect.Bool:
		v.SetBool(f.byte()%2 == 1)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(int8(f.byte())) << (f.byte() % 40))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		v.SetUint(uint64(f.byte()))
	case reflect.Float64:
		v.SetFloat(float64(int8(f.byte())) / 7)
	case reflect.Pointer:
		if f.full || f.byte()%3 != 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem(), f)
		}
	case reflect.Slice:
		n := int(f.byte() % 4)
		if f.full {
			n = 2
		}
		if n == 3 && !f.full {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0)) // empty, not nil
			return
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(s.Index(i), f)
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), f)
			}
		}
	default:
		panic("jsontest: no values for " + v.Type().String())
	}
}
