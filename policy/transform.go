package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"
)

// Transform is a built-in rewrite of what the model sees of a tool's output
// (PostToolUse): it becomes updatedToolOutput (and updatedMCPToolOutput for
// MCP tools). Transforms keep the output's shape: only strings and numbers
// that they recognise change.
type Transform struct {
	// Kind is "timestamps" or "redact".
	Kind       string
	Timestamps TimestampOptions
	Redact     RedactOptions
}

// EpochMode says which numbers NormalizeTimestamps reads as Unix times.
type EpochMode uint8

const (
	// EpochKeys converts numbers (and digit strings) under a time-like key
	// (created_at, timestamp, updatedAt, ts, date, expires, …) or a key
	// listed in TimestampOptions.Keys. Array elements inherit their key.
	EpochKeys EpochMode = iota
	// EpochAll converts every number in the plausible range.
	EpochAll
	// EpochNone never converts numbers.
	EpochNone
)

// TimestampOptions configure NormalizeTimestamps.
type TimestampOptions struct {
	Epoch EpochMode
	// Keys are extra key names (case-insensitive) whose values are times.
	Keys []string
	// NoText leaves ISO 8601 timestamps embedded in longer text alone; by
	// default they are rewritten in place.
	NoText bool
}

// NormalizeTimestamps rewrites every timestamp in v to ISO 8601 UTC
// (RFC 3339, "2024-01-02T03:04:05Z", fractional seconds kept):
//
//   - ISO 8601 / RFC 3339 date-times with an offset (Z, ±hh, ±hhmm,
//     ±hh:mm; 'T', 't' or a space between date and time), as whole strings
//     and, unless NoText, inside text. Date-times without an offset are
//     left alone: their zone is unknown;
//   - Unix seconds (1e8 ≤ n < 1e11) and Unix milliseconds (1e11 ≤ n < 1e14),
//     as numbers or digit strings, per opt.Epoch;
//   - strings holding a JSON object or array (what MCP tools return as text)
//     are parsed, normalised and re-encoded.
//
// Maps and slices are walked recursively; v is never modified: changed
// containers are copied. It reports whether anything changed.
func NormalizeTimestamps(v any, opt TimestampOptions) (any, bool) {
	n := &tsNormalizer{opt: opt}
	return walkValue(v, "", n.value, 0)
}

// maxDepth bounds recursion into hostile, deeply nested output.
const maxDepth = 64

// walkValue rebuilds v with leaf rewritten by fn(key, leaf), copying only the
// containers on the path to a change.
func walkValue(v any, key string, fn func(key string, leaf any, depth int) (any, bool), depth int) (any, bool) {
	if depth > maxDepth {
		return v, false
	}
	switch x := v.(type) {
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			ne, ch := walkValue(e, k, fn, depth+1)
			if ch {
				if out == nil {
					out = make(map[string]any, len(x))
					for k2, e2 := range x {
						out[k2] = e2
					}
				}
				out[k] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range x {
			ne, ch := walkValue(e, key, fn, depth+1)
			if ch {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return fn(key, v, depth)
}

type tsNormalizer struct{ opt TimestampOptions }

func (n *tsNormalizer) value(key string, v any, depth int) (any, bool) {
	switch x := v.(type) {
	case string:
		return n.str(key, x, depth)
	case float64:
		if n.epochKey(key) {
			if s, ok := epochFloat(x); ok {
				return s, true
			}
		}
	case json.Number:
		if n.epochKey(key) {
			if s, ok := epochString(string(x)); ok {
				return s, true
			}
		}
	case int:
		if n.epochKey(key) {
			if s, ok := epochFloat(float64(x)); ok {
				return s, true
			}
		}
	case int64:
		if n.epochKey(key) {
			if s, ok := epochFloat(float64(x)); ok {
				return s, true
			}
		}
	}
	return v, false
}

func (n *tsNormalizer) epochKey(key string) bool {
	switch n.opt.Epoch {
	case EpochAll:
		return true
	case EpochNone:
		return false
	}
	return key != "" && (isTimeKey(key) || slices.ContainsFunc(n.opt.Keys, func(k string) bool { return strings.EqualFold(k, key) }))
}

func (n *tsNormalizer) str(key, s string, depth int) (any, bool) {
	if out, ok := rewriteJSONText(s, func(v any) (any, bool) { return walkValue(v, "", n.value, depth+1) }); ok {
		return out, true
	}
	if isDigits(s) && n.epochKey(key) {
		if out, ok := epochString(s); ok {
			return out, true
		}
	}
	out := replaceISO(s, n.opt.NoText)
	return out, out != s
}

// rewriteJSONText applies fn to the JSON document held in s, if s holds one
// (an object or array), and re-encodes it when fn changed something.
func rewriteJSONText(s string, fn func(any) (any, bool)) (string, bool) {
	t := strings.TrimSpace(s)
	if len(t) < 2 || (t[0] != '{' && t[0] != '[') || len(t) > maxFileSize*8 {
		return "", false
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber() // keep big integers (ids, epoch ms) exact
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return "", false
	}
	nv, changed := fn(v)
	if !changed {
		return "", false
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(nv); err != nil {
		return "", false
	}
	return strings.TrimSuffix(buf.String(), "\n"), true
}

func isDigits(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isTimeWord reports whether w (lower case) makes a key time-like when it
// appears in it as a word (snake_case, camelCase, kebab-case, dotted).
func isTimeWord(w string) bool {
	switch w {
	case "time", "timestamp", "ts", "date", "datetime", "at", "created", "updated", "modified",
		"deleted", "expires", "expiry", "expiration", "deadline", "since", "until", "epoch", "mtime",
		"ctime", "atime", "when", "seen", "started", "ended", "finished", "issued", "iat", "exp", "nbf":
		return true
	}
	return false
}

// isTimeKey reports whether key names a time: one of its words is a time
// word ("created_at", "updatedAt", "lastSeen", "ts").
func isTimeKey(key string) bool {
	start := 0
	prevLower := false
	check := func(end int) bool {
		if end <= start {
			return false
		}
		w := strings.ToLower(key[start:end])
		// Plurals name lists of times: "timestamps", "dates".
		return isTimeWord(w) || (len(w) > 3 && w[len(w)-1] == 's' && isTimeWord(w[:len(w)-1]))
	}
	for i, r := range key {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			if check(i) {
				return true
			}
			start = i + len(string(r))
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			if check(i) {
				return true
			}
			start = i
		}
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	return check(len(key))
}

// epochFloat converts Unix seconds or milliseconds to ISO 8601 UTC.
func epochFloat(f float64) (string, bool) {
	switch {
	case f >= 1e8 && f < 1e11:
		sec := int64(f)
		ns := int64((f - float64(sec)) * 1e9)
		// Round to microseconds: float seconds carry binary noise below that.
		ns = (ns + 500) / 1000 * 1000
		return time.Unix(sec, ns).UTC().Format(time.RFC3339Nano), true
	case f >= 1e11 && f < 1e14:
		return time.UnixMilli(int64(f)).UTC().Format(time.RFC3339Nano), true
	}
	return "", false
}

// epochString converts a decimal Unix time exactly when it is an integer.
func epochString(s string) (string, bool) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		switch {
		case i >= 1e8 && i < 1e11:
			return time.Unix(i, 0).UTC().Format(time.RFC3339Nano), true
		case i >= 1e11 && i < 1e14:
			return time.UnixMilli(i).UTC().Format(time.RFC3339Nano), true
		}
		return "", false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "", false
	}
	return epochFloat(f)
}

// replaceISO rewrites ISO 8601 date-times with an offset in s to UTC. With
// wholeOnly it rewrites s only when all of s is one date-time.
func replaceISO(s string, wholeOnly bool) string {
	if len(s) < 17 || strings.IndexByte(s, '-') < 0 {
		return s
	}
	if wholeOnly {
		if t, end, ok := parseISOAt(s, 0); ok && end == len(s) {
			return t.UTC().Format(time.RFC3339Nano)
		}
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i+16 <= len(s); i++ {
		if s[i] < '0' || s[i] > '9' || (i > 0 && isAlnum(s[i-1])) {
			continue
		}
		t, end, ok := parseISOAt(s, i)
		if !ok {
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(t.UTC().Format(time.RFC3339Nano))
		last = end
		i = end - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// parseISOAt parses "YYYY-MM-DD[Tt ]hh:mm[:ss[.f…]](Z|±hh[[:]mm])" at s[i:].
func parseISOAt(s string, i int) (time.Time, int, bool) {
	p := i
	num := func(n int) (int, bool) {
		if p+n > len(s) {
			return 0, false
		}
		v := 0
		for j := 0; j < n; j++ {
			c := s[p+j]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		p += n
		return v, true
	}
	lit := func(cs string) bool {
		if p < len(s) && strings.IndexByte(cs, s[p]) >= 0 {
			p++
			return true
		}
		return false
	}
	var ok bool
	var year, month, day, hour, min, sec, nsec int
	if year, ok = num(4); !ok || !lit("-") {
		return time.Time{}, 0, false
	}
	if month, ok = num(2); !ok || !lit("-") {
		return time.Time{}, 0, false
	}
	if day, ok = num(2); !ok || !lit("Tt ") {
		return time.Time{}, 0, false
	}
	if hour, ok = num(2); !ok || !lit(":") {
		return time.Time{}, 0, false
	}
	if min, ok = num(2); !ok {
		return time.Time{}, 0, false
	}
	if lit(":") {
		if sec, ok = num(2); !ok {
			return time.Time{}, 0, false
		}
		if p < len(s) && (s[p] == '.' || s[p] == ',') && p+1 < len(s) && s[p+1] >= '0' && s[p+1] <= '9' {
			p++
			digits := 0
			for p < len(s) && s[p] >= '0' && s[p] <= '9' {
				if digits < 9 {
					nsec = nsec*10 + int(s[p]-'0')
					digits++
				}
				p++
			}
			for ; digits < 9; digits++ {
				nsec *= 10
			}
		}
	}
	if p >= len(s) {
		return time.Time{}, 0, false
	}
	offset := 0
	switch s[p] {
	case 'Z', 'z':
		p++
	case '+', '-':
		sign := 1
		if s[p] == '-' {
			sign = -1
		}
		p++
		oh, ok := num(2)
		if !ok || oh > 23 {
			return time.Time{}, 0, false
		}
		om := 0
		save := p
		colon := lit(":")
		if m, ok := num(2); ok {
			om = m
		} else if colon {
			p = save
		}
		if om > 59 {
			return time.Time{}, 0, false
		}
		offset = sign * (oh*3600 + om*60)
	default:
		return time.Time{}, 0, false
	}
	if p < len(s) && (isAlnum(s[p]) || s[p] == ':') {
		return time.Time{}, 0, false
	}
	if month < 1 || month > 12 || day < 1 || hour > 23 || min > 59 || sec > 60 {
		return time.Time{}, 0, false
	}
	t := time.Date(year, time.Month(month), day, hour, min, sec, nsec, time.FixedZone("", offset))
	if t.Day() != day && sec != 60 { // 2023-02-30 rolls over: not a date
		return time.Time{}, 0, false
	}
	return t, p, true
}

// RedactOptions configure a Redactor.
type RedactOptions struct {
	// Kinds are the built-in detectors to run: "email", "card" (13–19 digit
	// card numbers, spaces or dashes allowed, Luhn-checked, first digit 2–6
	// so that Unix milliseconds are never taken for one), "ssn" (US
	// ddd-dd-dddd with valid area/group/serial). nil means all three.
	Kinds []string
	// Patterns are extra detectors: a name and a Go regular expression.
	Patterns []NamedPattern
	// Replacement replaces each finding; "{kind}" is replaced by the
	// detector's name. Default "[REDACTED:{kind}]".
	Replacement string
}

// NamedPattern is a custom redaction detector.
type NamedPattern struct {
	Name   string
	Regexp string
}

// Redactor finds and replaces personal data in strings. It is safe for
// concurrent use.
type Redactor struct {
	repl   string
	kinds  []string
	custom []*regexp.Regexp
	names  []string
}

// redactor is the name the rule compiler uses.
type redactor = Redactor

// The built-in detectors compile on first use, never at init: the hook
// process must not pay for regular expressions it does not need.
var (
	emailRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}`)
	})
	cardRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b[2-6](?:[ \-]?\d){12,18}\b`) })
	ssnRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`) })
)

// NewRedactor compiles opt. It fails for an unknown kind or a custom
// pattern that does not compile.
func NewRedactor(opt RedactOptions) (*Redactor, error) {
	r := &Redactor{repl: opt.Replacement, kinds: opt.Kinds}
	if r.repl == "" {
		r.repl = "[REDACTED:{kind}]"
	}
	if r.kinds == nil {
		r.kinds = []string{"email", "card", "ssn"}
	}
	for _, k := range r.kinds {
		switch k {
		case "email", "card", "ssn":
		default:
			return nil, fmt.Errorf("unknown redaction kind %q (want email, card, ssn)", k)
		}
	}
	for _, p := range opt.Patterns {
		re, err := regexp.Compile(p.Regexp)
		if err != nil {
			return nil, fmt.Errorf("cannot compile redaction pattern %q: %w", p.Name, err)
		}
		r.custom = append(r.custom, re)
		r.names = append(r.names, p.Name)
	}
	return r, nil
}

// Redact returns v with every finding in its strings replaced, walking maps
// and slices; v is not modified. It reports whether anything changed.
func (r *Redactor) Redact(v any) (any, bool) {
	return walkValue(v, "", func(_ string, leaf any, _ int) (any, bool) {
		s, ok := leaf.(string)
		if !ok {
			return leaf, false
		}
		out := r.String(s)
		return out, out != s
	}, 0)
}

// String redacts one string.
func (r *Redactor) String(s string) string {
	for _, k := range r.kinds {
		s = r.replaceKind(k, s)
	}
	for i, re := range r.custom {
		s = re.ReplaceAllLiteralString(s, r.replacement(r.names[i]))
	}
	return s
}

func (r *Redactor) replacement(kind string) string { return strings.ReplaceAll(r.repl, "{kind}", kind) }

func (r *Redactor) replaceKind(kind, s string) string {
	switch kind {
	case "email":
		if strings.IndexByte(s, '@') < 0 {
			return s
		}
		return emailRE().ReplaceAllLiteralString(s, r.replacement(kind))
	case "card":
		if !hasDigitRun(s, 13) {
			return s
		}
		return cardRE().ReplaceAllStringFunc(s, func(m string) string {
			if luhn(m) {
				return r.replacement(kind)
			}
			return m
		})
	case "ssn":
		if strings.IndexByte(s, '-') < 0 {
			return s
		}
		return ssnRE().ReplaceAllStringFunc(s, func(m string) string {
			if validSSN(m) {
				return r.replacement(kind)
			}
			return m
		})
	}
	return s
}

// Find returns the kinds (built-in and custom names) found anywhere in v,
// sorted and without duplicates.
func (r *Redactor) Find(v any) []string {
	found := map[string]bool{}
	walkValue(v, "", func(_ string, leaf any, _ int) (any, bool) {
		if s, ok := leaf.(string); ok {
			for _, k := range r.kinds {
				if !found[k] && r.replaceKind(k, s) != s {
					found[k] = true
				}
			}
			for i, re := range r.custom {
				if re.MatchString(s) {
					found[r.names[i]] = true
				}
			}
		}
		return leaf, false
	}, 0)
	out := make([]string, 0, len(found))
	for k := range found {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// hasDigitRun is a cheap pre-check: at least n digits in s.
func hasDigitRun(s string, n int) bool {
	c := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			if c++; c >= n {
				return true
			}
		}
	}
	return false
}

func luhn(m string) bool {
	var digits []int
	for i := 0; i < len(m); i++ {
		if m[i] >= '0' && m[i] <= '9' {
			digits = append(digits, int(m[i]-'0'))
		}
	}
	if len(digits) < 13 || len(digits) > 19 {
		return false
	}
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := digits[i]
		if (len(digits)-1-i)%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

func validSSN(m string) bool {
	area, group, serial := m[0:3], m[4:6], m[7:11]
	return area != "000" && area != "666" && area[0] != '9' && group != "00" && serial != "0000"
}

// transformOptions returns the key and (resolved) value pairs of a
// transform's options: none when they are absent or null, ok false —
// reported with bad — when they are not a mapping.
func transformOptions(opts *yaml.Node, kind string, bad func(*yaml.Node, string, ...any)) (pairs [][2]*yaml.Node, ok bool) {
	if opts == nil || (opts.Kind == yaml.ScalarNode && opts.Tag == "!!null") {
		return nil, true
	}
	if opts.Kind != yaml.MappingNode {
		bad(opts, "%s options must be a mapping", kind)
		return nil, false
	}
	for i := 0; i+1 < len(opts.Content); i += 2 {
		pairs = append(pairs, [2]*yaml.Node{opts.Content[i], resolve(opts.Content[i+1])})
	}
	return pairs, true
}

// parseTransforms reads a rule's transform list:
//
//	transform: [timestamps, redact]
//	transform:
//	  - timestamps: {epoch: keys, keys: [when_ms], text: true}
//	  - redact: {kinds: [email, card], patterns: {api_key: 'sk-[A-Za-z0-9]{20,}'}, replacement: "***"}
func parseTransforms(n *yaml.Node) ([]Transform, []ruleErr) {
	var errs []ruleErr
	bad := func(at *yaml.Node, format string, args ...any) {
		errs = append(errs, ruleErr{at.Line, fmt.Sprintf(format, args...)})
	}
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	var out []Transform
	for _, it := range items {
		it = resolve(it)
		var kind string
		var opts *yaml.Node
		switch it.Kind {
		case yaml.ScalarNode:
			kind = it.Value
		case yaml.MappingNode:
			if len(it.Content) != 2 {
				bad(it, "a transform is a name or a one-key mapping of name to options")
				continue
			}
			kind, opts = it.Content[0].Value, resolve(it.Content[1])
		default:
			bad(it, "a transform is a name or a one-key mapping of name to options")
			continue
		}
		t := Transform{Kind: kind}
		switch kind {
		case "timestamps":
			options, ok := transformOptions(opts, kind, bad)
			if !ok {
				continue
			}
			for _, kv := range options {
				k, v := kv[0], kv[1]
				switch k.Value {
				case "epoch":
					switch v.Value {
					case "keys":
						t.Timestamps.Epoch = EpochKeys
					case "all":
						t.Timestamps.Epoch = EpochAll
					case "none":
						t.Timestamps.Epoch = EpochNone
					default:
						bad(v, "timestamps.epoch must be keys, all or none")
					}
				case "keys":
					if err := v.Decode(&t.Timestamps.Keys); err != nil {
						bad(v, "timestamps.keys must be a list of key names")
					}
				case "text":
					var b bool
					if err := v.Decode(&b); err != nil {
						bad(v, "timestamps.text must be true or false")
					}
					t.Timestamps.NoText = !b
				default:
					bad(k, "timestamps: unknown option %q (want epoch, keys, text)", k.Value)
				}
			}
		case "redact":
			options, ok := transformOptions(opts, kind, bad)
			if !ok {
				continue
			}
			for _, kv := range options {
				k, v := kv[0], kv[1]
				switch k.Value {
				case "kinds":
					t.Redact.Kinds = []string{}
					if err := v.Decode(&t.Redact.Kinds); err != nil {
						bad(v, "redact.kinds must be a list of email, card, ssn")
					}
				case "patterns":
					if v.Kind != yaml.MappingNode {
						bad(v, "redact.patterns must map names to regular expressions")
						continue
					}
					for j := 0; j+1 < len(v.Content); j += 2 {
						t.Redact.Patterns = append(t.Redact.Patterns, NamedPattern{Name: v.Content[j].Value, Regexp: resolve(v.Content[j+1]).Value})
					}
				case "replacement":
					t.Redact.Replacement = v.Value
				default:
					bad(k, "redact: unknown option %q (want kinds, patterns, replacement)", k.Value)
				}
			}
			// Validate kinds now; custom patterns compile with the rule.
			for _, k := range t.Redact.Kinds {
				if k != "email" && k != "card" && k != "ssn" {
					bad(it, "redact: unknown kind %q (want email, card, ssn)", k)
				}
			}
		default:
			bad(it, "unknown transform %q (want timestamps or redact)", kind)
			continue
		}
		out = append(out, t)
	}
	return out, errs
}
