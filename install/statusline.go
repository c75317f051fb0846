package install

import (
	"strings"
)

// The statusLine command runs in a shell and has no args field, so the
// binary's path must be quoted for sh. A statusLine the user already had is
// wrapped, not replaced:
//
//	'<bin>' statusline --wrap '<their command>'
//
// and Uninstall puts their command back.

// shellQuote quotes s for a POSIX shell, leaving words that need no quoting
// alone so the common case stays readable.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellWords splits a command line the way sh would for quoting purposes:
// blanks separate words; single quotes, double quotes and backslashes quote.
// It does not expand anything. ok is false for an unterminated quote.
func ShellWords(s string) (words []string, ok bool) {
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			if s[i] != '\n' { // backslash-newline is a line continuation
				w.WriteByte(s[i])
			}
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, true
}

// statusKind classifies a statusLine command.
type statusKind int

const (
	statusOther  statusKind = iota // not hookwatch's
	statusPlain                    // '<bin> statusline', as Install writes it
	statusWrap                     // '<bin> statusline --wrap <old>', as Install writes it
	statusCustom                   // hookwatch statusline with flags of the user's own
)

// classifyStatus tells whether cmd is hookwatch's statusLine command and,
// for a wrapper, returns the wrapped command.
func classifyStatus(cmd, binary string) (kind statusKind, wrapped string) {
	w, ok := ShellWords(cmd)
	if !ok || len(w) < 2 || w[1] != "statusline" || !isHookwatchBinary(w[0], binary) {
		return statusOther, ""
	}
	switch {
	case len(w) == 2:
		return statusPlain, ""
	case len(w) == 4 && w[2] == "--wrap":
		return statusWrap, w[3]
	}
	return statusCustom, ""
}

// statusCommand is the statusLine command Install writes.
func statusCommand(binary, wrapped string, wrap bool) string {
	s := shellQuote(binary) + " statusline"
	if wrap {
		s += " --wrap " + shellQuote(wrapped)
	}
	return s
}

// isHookwatchBinary reports whether path names a hookwatch binary: its base
// name is hookwatch (hookwatch.exe on Windows), or it is the binary being
// installed.
func isHookwatchBinary(path, binary string) bool {
	if path == "" {
		return false
	}
	if binary != "" && path == binary {
		return true
	}
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".exe"), ".EXE")
	return base == "hookwatch"
}
