// Package matcher implements Claude Code's hook matcher semantics (spec §1.4):
// the string in a hook's "matcher" field, tested against an event's matcher
// field (tool_name for tool events, source for SessionStart, agent_type for
// SubagentStart/SubagentStop, …).
//
// A pattern is one of three kinds:
//
//   - "*" or "" matches everything;
//   - a pattern made only of letters, digits, '_', '-', space, ',' and '|' is
//     an exact name or a list of exact names separated by '|' or ',', with
//     whitespace around the names ignored ("Bash|Edit", "Write, Edit");
//   - anything else is a JavaScript regular expression tested unanchored
//     (RegExp.test): "Edit.*" also matches "NotebookEdit", "^Edit$" does not.
//
// FileChanged and StopFailure use a narrower exact set, [A-Za-z0-9_|], where
// only '|' separates names; select it with the Narrow option (or ForEvent).
//
// Regular expressions run on Go's RE2 engine, not JavaScript's. Differences a
// pattern author may meet:
//
//   - lookaround ((?=…), (?!…), (?<=…), (?<!…)) and backreferences (\1) are not
//     supported: Compile reports an error where JavaScript would match;
//   - \uXXXX and \u{X…} escapes are accepted and translated to Go's \x{X…};
//   - [^] (JavaScript's "any character including newline") is translated to
//     (?s:.);
//   - \s matches only ASCII whitespace in Go, Unicode whitespace in JavaScript;
//   - Go accepts inline flags such as (?i) that older JavaScript rejects; a
//     pattern using them works here and fails in Claude Code.
//
// Claude Code treats an invalid regular expression as "matches nothing";
// Compile instead returns an error so that policy validation can report it.
// Callers that want Claude Code's exact behaviour can use the Never matcher.
package matcher

import (
	"fmt"
	"regexp"
	"strings"
)

// Kind says how a Matcher tests a value.
type Kind uint8

// The kinds of matcher, as decided by the pattern's characters.
const (
	// All matches every value ("*", "" or no matcher).
	All Kind = iota
	// Exact matches a value equal to one of a list of names.
	Exact
	// Regexp matches a value an unanchored regular expression finds a match in.
	Regexp
	// None matches nothing (see Never).
	None
)

// String returns the kind's lower-case name.
func (k Kind) String() string {
	switch k {
	case All:
		return "all"
	case Exact:
		return "exact"
	case Regexp:
		return "regexp"
	case None:
		return "none"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Matcher is a compiled matcher pattern. The zero value matches everything.
// A Matcher is immutable and safe for concurrent use.
type Matcher struct {
	kind    Kind
	pattern string
	names   []string
	re      *regexp.Regexp
}

// Never returns a matcher that matches nothing: what Claude Code does with a
// matcher whose regular expression does not compile.
func Never(pattern string) Matcher { return Matcher{kind: None, pattern: pattern} }

// Option changes how Compile classifies a pattern.
type Option func(*options)

type options struct{ narrow bool }

// Narrow selects the exact-name character set of FileChanged and StopFailure
// ([A-Za-z0-9_|], names separated by '|' only): a pattern with a space, '-' or
// ',' in it is a regular expression there.
func Narrow() Option { return func(o *options) { o.narrow = true } }

// ForEvent selects the character set Claude Code uses for the matcher of the
// named hook event: Narrow for FileChanged and StopFailure, the default set for
// every other event.
func ForEvent(event string) Option {
	return func(o *options) {
		if UsesNarrowSet(event) {
			o.narrow = true
		}
	}
}

// UsesNarrowSet reports whether Claude Code matches the named event's matcher
// with the narrower exact-name set (FileChanged, StopFailure).
func UsesNarrowSet(event string) bool { return event == "FileChanged" || event == "StopFailure" }

// Compile classifies pattern as Claude Code does and compiles it. It returns an
// error only for a regular expression that Go cannot compile.
func Compile(pattern string, opts ...Option) (Matcher, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if pattern == "" || pattern == "*" {
		return Matcher{kind: All, pattern: pattern}, nil
	}
	if isExact(pattern, o.narrow) {
		return Matcher{kind: Exact, pattern: pattern, names: splitNames(pattern, o.narrow)}, nil
	}
	re, err := regexp.Compile(translateJS(pattern))
	if err != nil {
		return Matcher{}, fmt.Errorf("cannot compile matcher %q as a regular expression: %w", pattern, err)
	}
	return Matcher{kind: Regexp, pattern: pattern, re: re}, nil
}

// MustCompile is Compile for patterns known to be valid; it panics on error.
func MustCompile(pattern string, opts ...Option) Matcher {
	m, err := Compile(pattern, opts...)
	if err != nil {
		panic(err)
	}
	return m
}

// Match reports whether value matches. Matching is case-sensitive.
func (m Matcher) Match(value string) bool {
	switch m.kind {
	case All:
		return true
	case Exact:
		for _, n := range m.names {
			if n == value {
				return true
			}
		}
		return false
	case Regexp:
		return m.re.MatchString(value)
	}
	return false
}

// Kind returns how the matcher tests values.
func (m Matcher) Kind() Kind { return m.kind }

// Names returns the exact names of an Exact matcher (nil for other kinds).
// The caller must not modify the slice.
func (m Matcher) Names() []string { return m.names }

// String returns the pattern the matcher was compiled from.
func (m Matcher) String() string { return m.pattern }

// isExact reports whether every byte of p is in the exact-name set.
func isExact(p string, narrow bool) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '|':
		case !narrow && (c == '-' || c == ' ' || c == ','):
		default:
			return false
		}
	}
	return true
}

// splitNames splits an exact pattern into names. Whitespace around names is
// dropped; an empty name (as in "Bash|") stays in the list and matches only an
// empty value, as it does in Claude Code.
func splitNames(p string, narrow bool) []string {
	sep := func(r rune) bool { return r == '|' || (!narrow && r == ',') }
	if !strings.ContainsFunc(p, sep) {
		return []string{strings.TrimSpace(p)}
	}
	parts := strings.FieldsFunc(p, sep)
	// FieldsFunc drops empty fields; count separators to keep them, so that
	// "Bash||Edit" behaves like Claude Code's split (an extra empty name).
	n := strings.Count(p, "|")
	if !narrow {
		n += strings.Count(p, ",")
	}
	names := make([]string, 0, n+1)
	for _, s := range parts {
		names = append(names, strings.TrimSpace(s))
	}
	if len(parts) < n+1 {
		names = append(names, "")
	}
	return names
}

// translateJS rewrites the JavaScript-only escapes Go's syntax lacks: \uXXXX,
// \u{X…} and the [^] class. Everything else is passed through unchanged, so
// RE2's own errors surface for unsupported constructs.
func translateJS(p string) string {
	if !strings.Contains(p, `\u`) && !strings.Contains(p, "[^]") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' && i+1 < len(p) {
			if p[i+1] == 'u' {
				if i+6 <= len(p) && isHex(p[i+2:i+6]) {
					b.WriteString(`\x{` + p[i+2:i+6] + `}`)
					i += 5
					continue
				}
				if i+2 < len(p) && p[i+2] == '{' {
					if end := strings.IndexByte(p[i+3:], '}'); end > 0 && isHex(p[i+3:i+3+end]) {
						b.WriteString(`\x{` + p[i+3:i+3+end] + `}`)
						i += 3 + end
						continue
					}
				}
			}
			b.WriteByte(c)
			b.WriteByte(p[i+1])
			i++
			continue
		}
		if c == '[' && strings.HasPrefix(p[i:], "[^]") {
			b.WriteString("(?s:.)")
			i += 2
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
