package collector

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/internal/jsonstr"
)

// The list copies parts of a stored summary into its answer as they are
// stored (appendListed), where view decodes the summary into an
// attribution.Session and encodes it again. The two agree only on a
// summary json.Marshal wrote; a row is not vouched for (anyone who can
// write to the database writes it), and encoding/json reads more than it
// writes: keys matched without regard to case or escapes, the last of
// duplicate keys (objects merged), unknown members dropped, blanks,
// numbers and times in any form, a value of the wrong type failing the
// whole summary. summaryCanon tells the summaries whose copy is what
// encoding/json writes of them from those left to encoding/json.

// canonFunc reports whether val, one JSON value jsonscan validated (no
// blanks around it), decodes into its type with json.Unmarshal and, when
// strict, is byte for byte what an Encoder that does not escape HTML
// writes of what it decodes to. Not strict, a string may be in any form
// (its text is decoded and written again, or not shown at all). empty
// tells a value that decodes to what omitempty leaves out.
type canonFunc func(val []byte, strict bool) (ok, empty bool)

// canonField is a member of a struct as json.Marshal writes it.
type canonField struct {
	key       string // quoted, as Marshal writes it
	omitEmpty bool
	check     *canonFunc
}

// summaryCanon reports whether sum is a summary whose members appendListed
// reads and copies are what view would write: an object whose members
// are those json.Marshal writes of an attribution.Session, in its order,
// each decoding into its field; the members listed in copied (which the
// list copies unchanged) also as encoding/json writes them again.
func summaryCanon(sum []byte, copied map[string]bool) bool {
	fields, ok := sessionFields()
	if !ok {
		return false
	}
	return canonStruct(sum, fields, false, func(key string) bool { return copied[key] })
}

// listCopied are the members of a summary the list copies unchanged.
var listCopied = map[string]bool{
	`"ended_at"`: true, `"resume"`: true, `"child_session_ids"`: true, `"alias_session_ids"`: true,
	`"runs"`: true, `"compactions"`: true, `"counts"`: true, `"usage"`: true, `"turns"`: true,
	`"shape"`: true, `"tools"`: true,
}

// sessionFields are the members of an attribution.Session; ok is false
// for a type canonFor cannot follow (then every summary is left to
// encoding/json: TestSessionListBytes fails).
var sessionFields = sync.OnceValues(func() ([]canonField, bool) {
	b := canonBuilder{funcs: map[reflect.Type]*canonFunc{}}
	fields, ok := b.fields(reflect.TypeFor[attribution.Session]())
	return fields, ok && b.ok
})

// canonStruct checks an object of fields: each key exactly one of fields,
// in their order (no duplicate, no other), none missing that Marshal
// always writes, none present that it leaves out when empty; strict(key)
// tells whether the member's value is held to its form, compact whether
// the object is (no blank between its tokens).
func canonStruct(val []byte, fields []canonField, compact bool, strict func(key string) bool) bool {
	if len(val) == 0 || val[0] != '{' {
		return false
	}
	next, good, size := 0, true, 1
	_, ok := jsonscan.Members(val, func(key, v []byte) {
		size += len(key) + 1 + len(v) + 1
		if !good {
			return
		}
		for next < len(fields) && fields[next].key != string(key) {
			if !fields[next].omitEmpty {
				good = false // missing: decoded zero, written again
				return
			}
			next++
		}
		if next == len(fields) {
			good = false // unknown, duplicate or out of order
			return
		}
		f := fields[next]
		next++
		s := strict(f.key)
		if ok, empty := (*f.check)(v, s); !ok || f.omitEmpty && empty {
			good = false
		}
	})
	if !ok || !good || compact && max(size, 2) != len(val) {
		return false
	}
	for ; next < len(fields); next++ {
		if !fields[next].omitEmpty {
			return false
		}
	}
	return true
}

// emptyValue reports whether omitempty leaves v out (encoding/json's
// isEmptyValue).
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

var (
	marshalerType   = reflect.TypeFor[json.Marshaler]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// canonBuilder makes the canonFuncs of types; ok turns false on a type it
// cannot follow.
type canonBuilder struct {
	funcs map[reflect.Type]*canonFunc
	ok    bool
}

func (b *canonBuilder) fields(t reflect.Type) ([]canonField, bool) {
	b.ok = true
	var out []canonField
	seen := map[string]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := bytes.Cut([]byte(tag), []byte(","))
			if f.Anonymous && len(name) == 0 {
				switch {
				case f.Type.Kind() == reflect.Struct:
					walk(f.Type)
				case f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct:
					// Its fields in its place, as Marshal writes them when
					// it is not nil; an object without them (Marshal's of
					// a nil one) misses those it always writes, and is
					// left to encoding/json.
					walk(f.Type.Elem())
				default:
					b.ok = false
				}
				continue
			}
			if !f.IsExported() {
				continue
			}
			key := string(name)
			if key == "" {
				key = f.Name
			}
			omitEmpty := false
			for o := range bytes.SplitSeq(opts, []byte(",")) {
				switch string(o) {
				case "omitempty":
					omitEmpty = true
				case "":
				default:
					b.ok = false // string, omitzero: not followed
				}
			}
			quoted := strconv.Quote(key)
			if seen[quoted] || quoted != `"`+key+`"` {
				b.ok = false // a conflict Marshal resolves, an escaped key
			}
			seen[quoted] = true
			out = append(out, canonField{key: quoted, omitEmpty: omitEmpty, check: b.canonFor(f.Type)})
		}
	}
	walk(t)
	return out, b.ok
}

// canonFor returns the canonFunc of t, made once (a type may hold itself).
func (b *canonBuilder) canonFor(t reflect.Type) *canonFunc {
	if fn, ok := b.funcs[t]; ok {
		return fn
	}
	fn := new(canonFunc)
	b.funcs[t] = fn
	*fn = b.make(t)
	return fn
}

func (b *canonBuilder) make(t reflect.Type) canonFunc {
	if t.Kind() == reflect.Pointer {
		// A nil pointer is null both ways; a pointer's methods are its
		// element's.
		elem := b.canonFor(t.Elem())
		return func(val []byte, strict bool) (bool, bool) {
			if string(val) == "null" {
				return true, true
			}
			ok, _ := (*elem)(val, strict)
			return ok, false
		}
	}
	if t == reflect.TypeFor[time.Time]() {
		// Its own methods, without reflection: most of a summary's
		// values are times.
		return func(val []byte, strict bool) (bool, bool) {
			var t time.Time
			if t.UnmarshalJSON(val) != nil {
				return false, false
			}
			if !strict {
				return true, false
			}
			var a [48]byte
			out, err := t.AppendText(append(a[:0], '"'))
			return err == nil && string(append(out, '"')) == string(val), false
		}
	}
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		if !t.Implements(marshalerType) || !reflect.PointerTo(t).Implements(unmarshalerType) {
			b.ok = false
			return refuse
		}
		return func(val []byte, strict bool) (bool, bool) {
			p := reflect.New(t)
			if p.Interface().(json.Unmarshaler).UnmarshalJSON(val) != nil {
				return false, false
			}
			empty := emptyValue(p.Elem())
			if !strict {
				return true, empty
			}
			// json.Marshal escapes HTML where the list's Encoder does not:
			// a text they would write differently is refused.
			out, err := json.Marshal(p.Elem().Interface())
			return err == nil && bytes.Equal(out, val) && !bytes.Contains(val, []byte(`\u`)), empty
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		fields, ok := (&canonBuilder{funcs: b.funcs}).fields(t)
		if !ok {
			b.ok = false
			return refuse
		}
		return func(val []byte, strict bool) (bool, bool) {
			return canonStruct(val, fields, strict, func(string) bool { return strict }), false
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			b.ok = false // base64
			return refuse
		}
		elem := b.canonFor(t.Elem())
		return func(val []byte, strict bool) (bool, bool) {
			if string(val) == "null" {
				return true, true
			}
			if val[0] != '[' {
				return false, false
			}
			good, n, size := true, 0, 1
			_, ok := jsonscan.Elements(val, func(e []byte) {
				n++
				size += len(e) + 1
				if good {
					good, _ = (*elem)(e, strict)
				}
			})
			// Strict, no blank between its tokens.
			return ok && good && (!strict || max(size, 2) == len(val)), n == 0
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key().Implements(reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()) {
			b.ok = false
			return refuse
		}
		elem := b.canonFor(t.Elem())
		return func(val []byte, strict bool) (bool, bool) {
			if string(val) == "null" {
				return true, true
			}
			if val[0] != '{' {
				return false, false
			}
			// Marshal writes the keys in order: one out of order or twice
			// is not what it wrote (and the last of two wins).
			var last string
			good, first, size := true, true, 1
			_, ok := jsonscan.Members(val, func(key, v []byte) {
				size += len(key) + 1 + len(v) + 1
				if !good {
					return
				}
				k, kok := jsonscan.Unquote(key)
				good = kok && (first || k > last) && canonString(key, strict)
				if good {
					good, _ = (*elem)(v, strict)
				}
				last, first = k, false
			})
			return ok && good && (!strict || max(size, 2) == len(val)), first
		}
	case reflect.String:
		return func(val []byte, strict bool) (bool, bool) {
			// A string of any text decodes to something not empty.
			return canonNull(val, strict) || canonString(val, strict), string(val) == "null" || string(val) == `""`
		}
	case reflect.Bool:
		return func(val []byte, strict bool) (bool, bool) {
			return canonNull(val, strict) || string(val) == "true" || string(val) == "false", string(val) != "true"
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return func(val []byte, strict bool) (bool, bool) {
			if string(val) == "null" {
				return !strict, true
			}
			n, err := strconv.ParseInt(string(val), 10, bits)
			var a [24]byte
			return err == nil && string(strconv.AppendInt(a[:0], n, 10)) == string(val), n == 0
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		bits := t.Bits()
		return func(val []byte, strict bool) (bool, bool) {
			if string(val) == "null" {
				return !strict, true
			}
			n, err := strconv.ParseUint(string(val), 10, bits)
			var a [24]byte
			return err == nil && string(strconv.AppendUint(a[:0], n, 10)) == string(val), n == 0
		}
	case reflect.Float32, reflect.Float64:
		bits := t.Bits()
		return func(val []byte, strict bool) (bool, bool) {
			if string(val) == "null" {
				return !strict, true
			}
			f, err := strconv.ParseFloat(string(val), bits)
			var a [32]byte
			w, werr := jsonstr.AppendFloat(a[:0], f, bits)
			return err == nil && werr == nil && bytes.Equal(w, val), f == 0
		}
	}
	b.ok = false // interfaces, arrays, channels …: not in a summary
	return refuse
}

func refuse([]byte, bool) (bool, bool) { return false, false }

// canonNull reports whether val is a null a scalar decodes from, leaving
// it zero: not what Marshal writes of the zero.
func canonNull(val []byte, strict bool) bool { return !strict && string(val) == "null" }

// canonString reports whether val is a JSON string and, when strict,
// written as an Encoder that does not escape HTML writes its text: no
// \u escape (that Encoder's only one is of a control character, U+2028
// and U+2029, and of invalid UTF-8's U+FFFD, all refused), no escaped
// '/', valid UTF-8, no raw U+2028 or U+2029.
func canonString(val []byte, strict bool) bool {
	if len(val) < 2 || val[0] != '"' {
		return false
	}
	if !strict {
		return true // jsonscan validated it
	}
	ascii := true
	for i := 1; i < len(val)-1; i++ {
		switch c := val[i]; {
		case c == '\\':
			switch val[i+1] {
			case '"', '\\', 'n', 'r', 't', 'b', 'f':
			default:
				return false
			}
			i++
		case c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return ascii || utf8.Valid(val) && !bytes.Contains(val, []byte("\u2028")) && !bytes.Contains(val, []byte("\u2029"))
}
