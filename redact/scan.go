package redact

import (
	"math/bits"
	"strings"
	"unsafe"
)

// Character classes of the class table (class.go).
const (
	cWord  = 1 << iota // [A-Za-z0-9_]: a byte that makes the next one not start a word
	cTok               // [A-Za-z0-9_-]: body of most API tokens
	cAlnum             // [A-Za-z0-9]
	cB64               // [A-Za-z0-9+/=]: base64, PEM bodies
	cUpNum             // [A-Z0-9]: AWS key ids
	cHex               // [0-9a-f]
	cName              // [A-Za-z0-9_.-]: the name in an assignment
	cTrig              // = : - , may start a secret wherever they stand, $ a parameter's expansion; \ an escape that ends a word
	cTrigB             // first letters of token prefixes: only at a word start
)

// markerPrefix starts every replacement; a value that already starts with it is
// left alone, which is what makes redaction idempotent.
const markerPrefix = "[REDACTED:"

// maxSpan bounds how far a detector looks ahead or back (PEM END lines, quoted
// values), so that hostile input cannot make a scan quadratic.
const maxSpan = 64 << 10

// scanner accumulates the redacted copy of s. out stays nil until the first
// replacement, so a secret-free text costs no allocation.
type scanner struct {
	s    string
	out  []byte
	last int // s[last:] has not been copied to out yet
	n    int
	m    memo
}

// memo remembers the forward scans of one pass, so that a hostile text made
// of overlapping candidates ("sk-sk-sk-…", a quote never closed after many
// "token=\"") costs linear time: a scan that starts inside a stretch already
// scanned ends where that one ended, which is exact, so results do not
// depend on it.
type memo struct {
	runs  [9]span  // by class bit: no byte of s[from:to] stops the run, s[to] does
	quote [5]span  // closeQuote, by quote (see quoteIndex)
	line  [6]span  // lineEnd, by quote, and 5 for none
	value span     // unquoted values (valueEnd)
	steps stepped  // the expansions valueEnd stepped over in value's stretch
	end   span     // to is the index of the next "-----END " at or after from, or -1
	cmd   cmdWords // the words before the last flag that may be a password (flagTool)
	start span     // lineStart: from is where the last look back started, to the line start it found or -1
	netrc netrcLn  // netrcLine's last line
}

// stepped lists spans in order: the first few in an array of its own, so
// that a text with few of them costs no allocation.
type stepped struct {
	first [4]span
	n     int
	more  []span
}

func (l *stepped) add(c span) {
	if l.n < len(l.first) {
		l.first[l.n] = c
	} else {
		l.more = append(l.more, c)
	}
	l.n++
}

func (l *stepped) at(i int) span {
	if i < len(l.first) {
		return l.first[i]
	}
	return l.more[i-len(l.first)]
}

func (l *stepped) reset() { l.n, l.more = 0, l.more[:0] }

// inside reports whether i is inside one of the spans, after its first
// byte: a binary search for the first that ends after i.
func (l *stepped) inside(i int) (c span, ok bool) {
	lo, hi := 0, l.n
	for lo < hi {
		if mid := int(uint(lo+hi) >> 1); l.at(mid).to <= i {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == l.n || l.at(lo).from >= i {
		return span{}, false
	}
	return l.at(lo), true
}

type span struct {
	from, to int
	ok       bool
}

func (c *span) covers(i int) bool { return c.ok && c.from <= i && i <= c.to }

// run is the memoized run(s, i, set); m may be nil.
func (m *memo) run(s string, i int, set uint16) int {
	if m == nil {
		return run(s, i, set)
	}
	c := &m.runs[bits.TrailingZeros16(set)]
	if !c.covers(i) {
		*c = span{i, run(s, i, set), true}
	}
	return c.to
}

// nextEnd returns the index of the next "-----END " at or after from, or -1.
func (m *memo) nextEnd(s string, from int) int {
	c := &m.end
	if !c.ok || from < c.from || (c.to >= 0 && c.to < from) {
		e := strings.Index(s[from:], "-----END ")
		if e >= 0 {
			e += from
		}
		*c = span{from, e, true}
	}
	return c.to
}

// scan is one pass of String.
func scan(s string) (string, int) {
	sc := scanner{s: s}
	// inWord is cWord of the previous byte moved onto the cTrigB bit, so that
	// a letter trigger inside a word is masked without a branch: a third of
	// the bytes of source code are trigger letters, and a branch on each
	// would be mispredicted all the time.
	const shift = 8 // cTrigB == cWord << 8
	var inWord uint16
	for i := 0; i < len(s); i++ {
		cl := class[s[i]]
		hit := cl & (cTrig | cTrigB) &^ inWord
		inWord = (cl & cWord) << shift
		if hit == 0 {
			continue
		}
		// Cheap looks at the neighbours rule out most of the rest before
		// the detectors run.
		if hit&cTrigB != 0 {
			if i+1 >= len(s) || s[i+1] < 64 || s[i+1] >= 128 || second[s[i]]>>(s[i+1]-64)&1 == 0 {
				continue
			}
			if t := third[s[i]]; t != 0 && s[i+1] == byte(t>>8) && (i+2 >= len(s) || s[i+2] != byte(t)) {
				continue // http, range, new, value: not a command's name
			}
		} else if s[i] == '\\' {
			// JSON text read as text — a piece of a Codex output cut from
			// the middle of its string — writes a line break as `\n`: the
			// escape's letter ends a word, it does not start one.
			if i+1 < len(s) && escapeLetter(s[i+1]) {
				i, inWord = i+1, 0
			}
			continue
		} else if !worthSep(s, i) {
			continue
		}
		if end := sc.at(i); end > i {
			// The replacement ends in ']': the byte at end starts a word.
			i, inWord = end-1, 0
		}
	}
	if sc.n == 0 {
		return s, 0
	}
	sc.out = append(sc.out, s[sc.last:]...)
	// out is never written again: hand it over as the string without a copy.
	return unsafe.String(unsafe.SliceData(sc.out), len(sc.out)), sc.n
}

// escapeLetter reports whether c, after a backslash, makes a JSON escape
// of a blank or control character.
func escapeLetter(c byte) bool { return c == 'n' || c == 't' || c == 'r' || c == 'b' || c == 'f' }

// second holds, for each cTrigB letter, the bytes that can follow it in a
// prefix the detectors know: bit b-64 stands for byte b (they are all
// letters). TestClassTable checks it against the prefixes.
var second = [256]uint64{
	's': 1 << ('k' - 64),
	'r': 1<<('k'-64) | 1<<('a'-64),
	'w': 1 << ('h' - 64),
	'a': 1 << ('c' - 64),
	'g': 1<<('h'-64) | 1<<('i'-64) | 1<<('l'-64),
	'x': 1<<('o'-64) | 1<<('a'-64),
	'A': 1<<('K'-64) | 1<<('S'-64) | 1<<('B'-64) | 1<<('C'-64) | 1<<('I'-64),
	'e': 1 << ('y' - 64),
	'n': 1<<('p'-64) | 1<<('e'-64),
	'h': 1<<('f'-64) | 1<<('o'-64) | 1<<('t'-64),
	'v': 1 << ('a' - 64),
	'S': 1 << ('G' - 64),
	'L': 1 << ('S' - 64),
	'p': 1<<('y'-64) | 1<<('a'-64) | 1<<('A'-64),
	'P': 1<<('a'-64) | 1<<('A'-64),
	'i': 1<<('d'-64) | 1<<('D'-64),
	'I': 1<<('d'-64) | 1<<('D'-64),
	'd': 1<<('o'-64) | 1<<('c'-64) | 1<<('i'-64),
}

// third holds, for a letter that starts the name of a command whose
// arguments command reads, or a keyword (a .netrc's account), the name's
// second letter (high byte) and third (low byte): the second alone would
// let through words as common as http, range, new, var and act.
// TestClassTable checks it against the names.
var third = [256]uint16{
	'a': 'c'<<8 | 'c', // account (.netrc), not act, acme
	'h': 't'<<8 | 'p', // htpasswd
	'r': 'a'<<8 | 'b', // rabbitmqctl
	'n': 'e'<<8 | 't', // net
	'v': 'a'<<8 | 'u', // vault
}

// flagStart holds the letters that can follow the '-' of a flag dash
// reads (bit b-64 stands for byte b): -u, -p, the letters passwordLetter
// lists, and the first letters of shortFlag's names (-dest…, -src…,
// -hashes).
const flagStart uint64 = 1<<('u'-64) | 1<<('d'-64) | 1<<('p'-64) | 1<<('a'-64) | 1<<('P'-64) |
	1<<('k'-64) | 1<<('K'-64) | 1<<('w'-64) | 1<<('s'-64) | 1<<('U'-64) | 1<<('H'-64) | 1<<('h'-64)

// worthSep is the cheap look for the separators = : , and -: whether a
// name that may end in a secret-bearing word stands before it, or what
// follows can start a flag, a PEM line or a URL.
func worthSep(s string, i int) bool {
	if i+1 >= len(s) {
		return false // every detector needs a value after the separator
	}
	c, n := s[i], s[i+1]
	switch c {
	case '$':
		return n == '{' // ${NAME…}: paramDefault
	case '-':
		if n == '-' {
			return true
		}
		// -u, -dest…, and shortFlag's flags, which follow a blank or a
		// quote.
		return n >= 64 && n < 128 && flagStart>>(n-64)&1 != 0 && (i == 0 || isBlank(s[i-1]) || isQuote(s[i-1]))
	case ',':
		return i > 0 && isQuote(s[i-1])
	case ':':
		if n == '/' {
			return true
		}
	}
	p := i - 1
	if c == '=' && p >= 0 && s[p] == ':' {
		p--
	}
	for k := 0; p >= 0 && k < 64 && (s[p] == ' ' || s[p] == '\t'); k++ {
		p--
	}
	if p >= 0 && isQuote(s[p]) {
		p--
		if p >= 0 && s[p] == '\\' {
			p--
		}
	}
	return p >= 0 && keywordEnd(s[p])
}

// emit replaces s[start:end] with the marker of kind and returns end.
func (sc *scanner) emit(start, end int, kind string) int {
	if sc.out == nil {
		sc.out = make([]byte, 0, len(sc.s)+32)
	}
	sc.out = append(sc.out, sc.s[sc.last:start]...)
	sc.out = append(sc.out, markerPrefix...)
	sc.out = append(sc.out, kind...)
	sc.out = append(sc.out, ']')
	sc.last = end
	sc.n++
	return end
}

// at runs the detectors that can start at the trigger byte s[i]. It returns the
// end of the replaced span, or 0 when nothing was replaced.
func (sc *scanner) at(i int) int {
	s := sc.s
	switch s[i] {
	case '=', ',':
		return sc.assign(i)
	case ':':
		if hasAt(s, i+1, "//") {
			return sc.url(i)
		}
		return sc.assign(i)
	case '-':
		return sc.dash(i)
	case '$':
		return sc.paramDefault(i)
	case 'p', 'P':
		if hasFoldAt(s, i, "password ") {
			if end := sc.sqlLiteral(i+9, "password"); end > 0 {
				return end
			}
			if end := sc.netrc(i, i+9); end > 0 {
				return end
			}
			return sc.netrcLine(i)
		}
		if hasFoldAt(s, i, "passwd ") {
			if end := sc.netrc(i, i+7); end > 0 {
				return end
			}
			return sc.netrcLine(i)
		}
	case 'a':
		if hasAt(s, i, "account ") {
			if end := sc.netrcAccount(i); end > 0 {
				return end
			}
			return sc.netrcLine(i)
		}
	case 'i', 'I':
		if hasFoldAt(s, i, "identified by ") {
			return sc.sqlLiteral(i+14, "password")
		}
	case 'h', 'r', 'n', 'v':
		if end := sc.command(i); end > 0 {
			return end
		}
	}
	if start, end, kind := matchToken(&sc.m, s, i); end > start {
		end = sc.emit(start, end, kind)
		if kind == "aws_access_key_id" {
			if e := sc.awsSecretAfter(end); e > 0 {
				return e
			}
		}
		return end
	}
	return 0
}

// awsSecretAfter redacts the secret access key that follows an access key
// id on its line or the next, whatever names it or does not: the CSV the
// AWS console hands out (id,secret), aws configure's prompts, two lines of
// a note. A secret access key is 40 bytes of base64 with both cases; k is
// the end of the access key id. It returns the end of the secret, or 0.
func (sc *scanner) awsSecretAfter(k int) int {
	s := sc.s
	lines, start := 0, true // start: s[j] may start a word
	for j := k; j < len(s) && j-k < 256; j++ {
		c := s[j]
		if c == '\\' && j+1 < len(s) && escapeLetter(s[j+1]) {
			if s[j+1] == 'n' {
				lines++
			}
			j, start = j+1, true // a JSON escape of a line break ends a word
			continue
		}
		if c == '\n' {
			lines++
		}
		if lines > 1 {
			break
		}
		if class[c]&cB64 == 0 || c == '=' { // '=' is no padding here: it ends a name
			start = true
			continue
		}
		if !start {
			continue
		}
		e := j
		for e < len(s) && class[s[e]]&cB64 != 0 && s[e] != '=' {
			e++
		}
		if e-j == 40 && hasUpperLower(s[j:e]) {
			return sc.emit(j, e, "aws_secret_access_key")
		}
		j, start = e-1, false
	}
	return 0
}

// hasUpperLower reports whether v holds both an upper- and a lower-case
// letter.
func hasUpperLower(v string) bool {
	var up, low bool
	for i := 0; i < len(v); i++ {
		up = up || isUpper(v[i])
		low = low || isLower(v[i])
	}
	return up && low
}

// netrc redacts the password of a .netrc entry, "machine host login user
// password secret" (or "default login user password secret"; passwd is
// password's other name), its tokens on one line or several; s[i] starts
// the keyword and k is after it and its blank. The whole entry must stand
// before: prose has "login" and "password" too ("the login form password
// field").
func (sc *scanner) netrc(i, k int) int {
	if !netrcEntry(sc.s, i) {
		return 0
	}
	return sc.netrcValue(k)
}

// netrcEntry reports whether the .netrc tokens "machine host login user"
// (or "default login user") stand before s[i].
func netrcEntry(s string, i int) bool {
	ub, _ := prevWord(s, i)
	lb, le := prevWord(s, ub)
	if !endsWord(s, lb, le, "login") {
		return false
	}
	if hb, he := prevWord(s, lb); !endsWord(s, hb, he, "default") {
		if mb, me := prevWord(s, hb); he == hb || !endsWord(s, mb, me, "machine") {
			return false
		}
	}
	return true
}

// netrcAccount redacts the value of a .netrc entry's account token, the
// second password ftp sends; s[i] starts "account ". The entry stands
// before it as before a password (netrc), or before the password that
// precedes it ("login user password p account secret"), on one line or
// several.
func (sc *scanner) netrcAccount(i int) int {
	s := sc.s
	at := i
	vb, _ := prevWord(s, i)
	if pb, pe := prevWord(s, vb); pb < pe && (endsWord(s, pb, pe, "password") || endsWord(s, pb, pe, "passwd")) {
		at = pb
	}
	if !netrcEntry(s, at) {
		return 0
	}
	return sc.netrcValue(i + len("account "))
}

// netrcValue redacts the value of a .netrc token that holds a secret,
// the word at s[k] after blanks; it returns its end, or 0 when it is none
// or no secret.
func (sc *scanner) netrcValue(k int) int {
	s := sc.s
	k = skipBlank(s, k)
	e := k
	for e < len(s) && !isBlank(s[e]) && s[e] != '"' && s[e] != '\\' {
		e++
	}
	if e == k || skipValue(s[k:e]) || strings.HasPrefix(s[k:], markerPrefix) {
		return 0
	}
	return sc.emit(k, e, "password")
}

// netrcLine redacts the secrets of a line of a .netrc file that grep
// printed behind the file's path ("home/u/.netrc:password s3cr3t",
// "./.netrc:12:  password s3cr3t", "_netrc:machine h login u password
// s3cr3t account s3cr3t"), which grep -r password prints without the rest
// of the entry: the path says what the words are, so the value of each
// password, passwd and account token on the line is redacted (account is
// the second password ftp sends). s[i] starts the keyword that brought the
// scan here. Prose in other files keeps its words ("README.md:set the
// password in ~/.netrc"), and so does a comment in a .netrc. It returns
// the end of the last value redacted, or 0.
func (sc *scanner) netrcLine(i int) int {
	s := sc.s
	ln := sc.m.netrcLine(s, i)
	if ln == nil {
		return 0
	}
	// The line is read once, word by word, whichever keyword asks: a
	// later one resumes where the last read stopped.
	end := 0
	for ln.w < len(s) && !ln.done {
		w := ln.w
		switch c := s[w]; {
		case c == '\\' && w+1 < len(s) && (s[w+1] == 'n' || s[w+1] == 'r'), c == '\n', c == '\r':
			ln.done = true // the line's end
			continue
		case c == ' ' || c == '\t' || c == ',':
			ln.w++
			continue
		case c == '\\' && w+1 < len(s) && escapeLetter(s[w+1]):
			ln.w += 2
			continue
		case c == '#' && ln.words == 0:
			ln.done = true // a comment
			continue
		}
		e := w
		for e < len(s) && !isBlank(s[e]) && s[e] != ',' && s[e] != '\\' {
			e++
		}
		if e == w {
			e++ // a backslash that escapes nothing a line holds
		}
		value := false
		if ln.secret && w >= sc.last {
			if v := sc.netrcValue(w); v > 0 {
				end, e, value = v, v, true
			}
		}
		word := s[w:e]
		ln.secret = !value && (strings.EqualFold(word, "password") || strings.EqualFold(word, "passwd") || strings.EqualFold(word, "account"))
		ln.w, ln.words = e, ln.words+1
	}
	return end
}

// endsWord reports whether the word s[b:e] is w, or ends in w after a byte
// not a letter or digit: grep -n glues its file:line: to a line's first
// word.
func endsWord(s string, b, e int, w string) bool {
	k := e - len(w)
	return k >= b && s[k:e] == w && (k == b || class[s[k-1]]&cAlnum == 0)
}

// prevWord returns the bounds of the word of blank-separated tokens that
// ends before the blanks (JSON escapes of blanks included) before s[p];
// b == e when there is none. A word that is only the prefix lineBody
// passes over ("3" of cat -n, "2-" of grep -A, "+" of a diff) is not one
// of the line's words: the word before it is returned, across at most two
// such prefixes (a numbered empty line between), so that a run of them
// costs each call a bounded look.
func prevWord(s string, p int) (b, e int) {
	for skips := 0; ; skips++ {
		e = blankBack(s, p)
		b = e
		for b > 0 && !isBlank(s[b-1]) && !(b > 1 && s[b-2] == '\\' && escapeLetter(s[b-1])) {
			b--
		}
		if b == e || skips == 2 {
			return b, e
		}
		ls := b
		for ls > 0 && b-ls < 8 && s[ls-1] == ' ' { // cat -n's padding
			ls--
		}
		if !lineStartAt(s, ls) || lineBody(s, ls) < e {
			return b, e
		}
		p = b
	}
}

// maxLinePrefix bounds the path that lineBody reads at the start of a
// line, and how far back lineStart looks for one.
const maxLinePrefix = 256

// lineBody returns where the text of the line that starts at s[ls] begins
// after the prefix that a tool printing files line by line puts there:
// cat -n and nl ("     3\t"), grep -n, rg and git grep -n ("3:", "3-" on
// a context line, after a path or not: "a/.env:3:", "a/.env-3-"; rg
// --heading prints the path on a line of its own), and the mark of a diff
// line ("+", "-", " "), alone or after such a number (grep -n in a patch);
// and the path alone that grep -r and git grep without -n put on every
// line of a file, "a/.netrc:" on a match, "a/.netrc-" on a line of the
// context -A, -B and -C print around it, read so when the line before or
// after starts with it too. A path may be Windows' ("C:\Users\u\_netrc:"),
// its backslashes the path's.
// It returns ls when the line has none.
//
// It is the one reading of these prefixes, for the rules that follow a
// secret from line to line (a .netrc entry's words, a PEM block's body, a
// base64 key wrapped): a rule that looks within a line sees a prefix glued
// to the line's first word, which ends at its ':', '-' or '+', as the start
// of a word. The prefix stays in the text; only what follows is redacted.
func lineBody(s string, ls int) int {
	_, body := linePrefix(s, ls)
	return body
}

// linePrefix is lineBody, which also returns where the path of the
// prefix ends: s[ls:pathEnd] is the path grep, rg or git grep printed, and
// pathEnd is ls when the prefix has none.
func linePrefix(s string, ls int) (pathEnd, body int) {
	if ls > 1 && s[ls-2] == '\\' && (s[ls-1] == 'n' || s[ls-1] == 'r') {
		// The \n or \r of JSON text read as text, or of a Windows path
		// that starts the line ("C:\repo\k.pem:"): then the path's
		// prefix is the line's.
		if r := driveStart(s, ls); r >= 0 {
			if pe, body := linePrefix(s, r); body > ls {
				return pe, body
			}
		}
	}
	p := ls
	for p < len(s) && p-ls < 8 && s[p] == ' ' {
		p++
	}
	if d := digitRun(s, p); d > p {
		switch {
		case d < len(s) && (s[d] == '\t' || s[d] == ':' || s[d] == '-'):
			return ls, diffMark(s, d+1)
		case hasAt(s, d, `\t`): // cat -n's tab in JSON text read as text
			return ls, diffMark(s, d+2)
		}
	}
	if p == ls {
		// A path, then the number between two of the same separator.
		// A backslash is the path's in a Windows path, which starts
		// with its drive; elsewhere, but before the n or r of a line
		// break in JSON text read as text (lineStartAt), as in the
		// rest of a Windows path that such a break seemed to cut.
		drive := ls+2 < len(s) && isLetter(s[ls]) && s[ls+1] == ':' && (s[ls+2] == '\\' || s[ls+2] == '/')
		first, colon, dashes := ls+1, -1, false
		if drive {
			first = ls + 2
		}
		j := first
		for ; j < len(s) && j-ls < maxLinePrefix && !isBlank(s[j]); j++ {
			if s[j] == '\\' && !drive && j+1 < len(s) && (s[j+1] == 'n' || s[j+1] == 'r') {
				break
			}
			if s[j] != ':' && s[j] != '-' {
				continue
			}
			if d := digitRun(s, j+1); d > j+1 && d < len(s) && s[d] == s[j] {
				return j, diffMark(s, d+1)
			}
			if colon < 0 && s[j] == ':' {
				colon = j
			}
			dashes = dashes || s[j] == '-'
		}
		// A path and no number (grep -r, git grep without -n): the
		// line before or after starts with the same path, as every line
		// of a file printed so does, a match's or the context's. One
		// line alone is not read so: "file.go:text" is as often the
		// text itself; but a path that names a .netrc is one, whose
		// line grep -r password prints alone.
		if colon < 0 && !dashes {
			return ls, diffMark(s, ls)
		}
		nb := neighbours(s, ls, j)
		if colon > ls && (netrcFile(s[ls:colon]) || nb.share(s, ls, colon)) {
			return colon, diffMark(s, colon+1)
		}
		// A context line: its path ends at a '-', and paths hold
		// dashes too ("my-app/a.key-"): the last that the line around
		// shares, of a path that names a file (a '.' or a directory),
		// so that words joined by hyphens are no path.
		for k := j - 1; k > first && dashes; k-- {
			if s[k] == '-' && pathLike(s[ls:k]) && (netrcFile(s[ls:k]) || nb.share(s, ls, k)) {
				return k, diffMark(s, k+1)
			}
		}
	}
	return ls, diffMark(s, ls)
}

// driveStart returns the start of the line that holds s[ls-1] when a
// raw line break (or the text's start) ends before it, no blank comes
// between, and a Windows drive starts it ("C:\\"), or -1.
func driveStart(s string, ls int) int {
	r := ls
	for r > 0 && ls-r < maxLinePrefix && !isBlank(s[r-1]) {
		r--
	}
	if (r == 0 || s[r-1] == '\n' || s[r-1] == '\r') && r+2 < ls && isLetter(s[r]) && s[r+1] == ':' && s[r+2] == '\\' {
		return r
	}
	return -1
}

// pathLike reports whether p can be a path grep printed before a line of
// context: it names a directory or a file with an extension.
func pathLike(p string) bool { return strings.ContainsAny(p, "./\\") }

// netrcFile reports whether path names a .netrc file: its last element is
// .netrc, or _netrc as curl and Git read it on Windows.
func netrcFile(path string) bool {
	base := path[strings.LastIndexAny(path, "/\\")+1:]
	return base == ".netrc" || base == "_netrc"
}

// maxLineAround bounds how far neighbours looks for the start of the line
// before or after.
const maxLineAround = 4 * maxLinePrefix

// around holds the lines before and after the line that starts at ls:
// s[above:aboveEnd], and the line that starts at s[below], looked for
// from s[from] when first asked (belowRead); a start of -1 is none.
type around struct {
	ls, from, above, aboveEnd, below int
	raw, belowRead                   bool
}

// neighbours finds the line before the line that starts at s[ls], and
// will find the one after, looked for from s[from], after what the
// line's prefix can hold. Line breaks are raw or JSON escapes; each look
// goes at most maxLineAround bytes. A line a raw break starts is among
// lines raw breaks part: the \n and \r of a Windows path or of a line's
// text ("C:\new", printf("a\n")) part none.
func neighbours(s string, ls, from int) around {
	nb := around{ls: ls, from: from, above: -1, below: -1}
	e, raw := ls, false
	switch {
	case e > 0 && (s[e-1] == '\n' || s[e-1] == '\r'):
		e, raw = e-1, true
	case e > 1 && s[e-2] == '\\' && (s[e-1] == 'n' || s[e-1] == 'r'):
		e -= 2
	default:
		e = -1 // the text's first line
	}
	// The \r of a \r\n is the same break.
	if e > 0 && s[e-1] == '\r' && s[e] == '\n' {
		e--
	} else if e > 1 && hasAt(s, e-2, `\r`) && hasAt(s, e, `\n`) {
		e -= 2
	}
	for b := e; b >= 0 && e-b <= maxLineAround; b-- {
		if b == 0 || s[b-1] == '\n' || s[b-1] == '\r' || !raw && lineStartAt(s, b) {
			nb.above, nb.aboveEnd = b, e
			break
		}
	}
	nb.raw = raw
	return nb
}

// lineBelow returns the start of the line after nb's, or -1.
func (nb *around) lineBelow(s string) int {
	if nb.belowRead {
		return nb.below
	}
	nb.belowRead = true
	ls, raw := nb.ls, nb.raw
	for i := nb.from; i < len(s) && i-ls <= maxLineAround; i++ {
		switch {
		case hasAt(s, i, "\r\n"):
			nb.below = i + 2
		case s[i] == '\n' || s[i] == '\r':
			nb.below = i + 1
		case raw:
			continue
		case hasAt(s, i, `\r\n`):
			nb.below = i + 4
		case hasAt(s, i, `\n`) || hasAt(s, i, `\r`):
			nb.below = i + 2
		default:
			continue
		}
		break
	}
	return nb.below
}

// share reports whether the line before or after starts with s[ls:e],
// the path the line that starts at s[ls] starts with, then ':' or '-':
// grep -r prints it before every line of a file, a match's and the
// context's.
func (nb *around) share(s string, ls, e int) bool {
	w := s[ls:e]
	at := func(b, end int) bool {
		return b >= 0 && end-b > len(w) && hasAt(s, b, w) && (s[b+len(w)] == ':' || s[b+len(w)] == '-')
	}
	return at(nb.above, nb.aboveEnd) || at(nb.lineBelow(s), len(s))
}

// diffMark returns the index after the mark of a diff line at s[p] (+, -
// or a blank), or p. The first dash of a PEM line's five is not one:
// a diff's removed BEGIN line has six.
func diffMark(s string, p int) int {
	if p < len(s) && (s[p] == '+' || s[p] == ' ' || s[p] == '-' && (!hasAt(s, p, "-----") || hasAt(s, p, "------"))) {
		return p + 1
	}
	return p
}

// digitRun returns the end of the run of at most 12 decimal digits at s[i]:
// a line number.
func digitRun(s string, i int) int {
	e := i
	for e < len(s) && e-i < 12 && '0' <= s[e] && s[e] <= '9' {
		e++
	}
	return e
}

// lineStartAt reports whether a line starts at s[i]: the text's start, or
// after a line break, raw or as a JSON escape.
func lineStartAt(s string, i int) bool {
	return i == 0 || s[i-1] == '\n' || s[i-1] == '\r' ||
		i > 1 && s[i-2] == '\\' && (s[i-1] == 'n' || s[i-1] == 'r')
}

// lineStart returns the start of the line that holds s[i-1], looking back
// at most maxLinePrefix bytes, or -1 when it is further. A look from after
// the last one's start reads only the bytes between them, so that a text
// of many END lines and no line break costs linear time.
func (m *memo) lineStart(s string, i int) int {
	c := &m.start
	from := max(i-maxLinePrefix, 0)
	known := c.ok && c.from <= i && c.from >= from
	if known {
		from = c.from + 1
	}
	for j := i; j >= from; j-- {
		if lineStartAt(s, j) {
			*c = span{i, j, true}
			return j
		}
	}
	ls := -1
	if known && c.to >= 0 && i-c.to <= maxLinePrefix {
		ls = c.to
	}
	*c = span{i, ls, true}
	return ls
}

// netrcLine returns the read of the line that holds s[i] when its prefix
// (see linePrefix) is the path of a .netrc file and s[i] is in its text,
// or nil. The read is kept, so that the keywords of a line read its prefix
// and its words once.
func (m *memo) netrcLine(s string, i int) *netrcLn {
	ls := m.lineStart(s, i)
	if ls < 0 {
		return nil
	}
	c := &m.netrc
	if !c.read || c.ls != ls {
		pe, body := linePrefix(s, ls)
		*c = netrcLn{ls: ls, body: body, w: body, netrc: netrcFile(s[ls:pe]), read: true}
	}
	if !c.netrc || i < c.body {
		return nil
	}
	return c
}

// netrcLn is the read of a line of a .netrc file that netrcLine
// resumes: the line starts at ls and its text at body; w is where the
// read of its words stopped, words how many it read, secret whether the
// last was a keyword of a secret, done whether it reached the line's end.
type netrcLn struct {
	ls, body, w, words        int
	netrc, read, secret, done bool
}

// blankBack returns the index after the word that ends before the blanks
// (JSON escapes of blanks included) that end before s[p].
func blankBack(s string, p int) int {
	for p > 0 {
		switch {
		case isBlank(s[p-1]):
			p--
		case p > 1 && s[p-2] == '\\' && escapeLetter(s[p-1]):
			p -= 2
		default:
			return p
		}
	}
	return p
}

// matchToken recognises a token by its prefix at s[i], which the caller knows to
// start a word. It returns the span to replace (start > i for webhook URLs,
// whose host stays readable) or end == 0.
func matchToken(m *memo, s string, i int) (start, end int, kind string) {
	switch s[i] {
	case 's':
		if hasAt(s, i, "sk-ant-") {
			return prefixed(m, s, i, 7, cTok, 20, "anthropic_key")
		}
		if hasAt(s, i, "sk-") {
			// Plain "sk-" also starts CSS classes and kebab-case names:
			// require the length and the mixed case of a random key
			// (bounded, so that checking it stays cheap on "sk-sk-sk-…").
			if e := m.run(s, i+3, cTok); e-(i+3) >= 32 && e-(i+3) <= 256 && mixedCase(s[i+3:e]) {
				return i, e, "openai_key"
			}
			return 0, 0, ""
		}
		if hasAt(s, i, "sk_live_") || hasAt(s, i, "sk_test_") {
			return prefixed(m, s, i, 8, cAlnum, 16, "stripe_key")
		}
	case 'r':
		if hasAt(s, i, "rk_live_") || hasAt(s, i, "rk_test_") {
			return prefixed(m, s, i, 8, cAlnum, 16, "stripe_key")
		}
	case 'w':
		if hasAt(s, i, "whsec_") {
			return prefixed(m, s, i, 6, cB64, 24, "stripe_key")
		}
	case 'g':
		if len(s)-i > 4 && s[i+1] == 'h' && s[i+3] == '_' && strings.IndexByte("pousr", s[i+2]) >= 0 {
			return prefixed(m, s, i, 4, cAlnum, 30, "github_token")
		}
		if hasAt(s, i, "github_pat_") {
			return prefixed(m, s, i, 11, cWord, 40, "github_token")
		}
		for _, p := range [...]string{"glpat-", "gldt-", "glrt-", "glptt-"} {
			if hasAt(s, i, p) {
				return prefixed(m, s, i, len(p), cTok, 20, "gitlab_token")
			}
		}
	case 'x':
		if len(s)-i > 5 && hasAt(s, i, "xox") && s[i+4] == '-' && strings.IndexByte("baprse", s[i+3]) >= 0 {
			return prefixed(m, s, i, 5, cTok, 10, "slack_token")
		}
		if hasAt(s, i, "xapp-") {
			return prefixed(m, s, i, 5, cTok, 10, "slack_token")
		}
	case 'A':
		if hasAt(s, i, "AKIA") || hasAt(s, i, "ASIA") || hasAt(s, i, "ABIA") || hasAt(s, i, "ACCA") {
			if e := m.run(s, i+4, cUpNum); e-(i+4) == 16 && (e == len(s) || class[s[e]]&cAlnum == 0) {
				return i, e, "aws_access_key_id"
			}
			return 0, 0, ""
		}
		if hasAt(s, i, "AIza") {
			return prefixed(m, s, i, 4, cTok, 35, "google_api_key")
		}
	case 'e':
		return matchJWT(m, s, i)
	case 'n':
		if hasAt(s, i, "npm_") {
			return prefixed(m, s, i, 4, cAlnum, 36, "npm_token")
		}
	case 'h':
		if hasAt(s, i, "hf_") {
			return prefixed(m, s, i, 3, cAlnum, 30, "huggingface_token")
		}
		if hasAt(s, i, "hooks.slack.com/") {
			for _, p := range [...]string{"services/", "workflows/", "triggers/"} {
				if hasAt(s, i+16, p) {
					return webhookPath(s, i+16+len(p), "slack_token")
				}
			}
		}
	case 'S':
		if hasAt(s, i, "SG.") {
			if e1 := m.run(s, i+3, cTok); e1-(i+3) >= 16 && e1 < len(s) && s[e1] == '.' {
				if e2 := m.run(s, e1+1, cTok); e2-(e1+1) >= 32 {
					return i, e2, "sendgrid_key"
				}
			}
		}
	case 'L':
		if hasAt(s, i, "LS0tLS1CRUdJTi") { // "-----BEGIN " in base64
			return base64PEM(m, s, i)
		}
	case 'p':
		if hasAt(s, i, "pypi-AgE") {
			return prefixed(m, s, i, 5, cTok, 50, "pypi_token")
		}
	case 'd':
		if hasAt(s, i, "dop_v1_") || hasAt(s, i, "doo_v1_") || hasAt(s, i, "dor_v1_") {
			return prefixed(m, s, i, 7, cHex, 64, "digitalocean_token")
		}
		if hasAt(s, i, "dckr_pat_") {
			return prefixed(m, s, i, 9, cTok, 20, "docker_token")
		}
		for _, p := range [...]string{"discord.com/api/webhooks/", "discordapp.com/api/webhooks/"} {
			if hasAt(s, i, p) {
				return webhookPath(s, i+len(p), "discord_webhook")
			}
		}
	}
	return 0, 0, ""
}

// base64PEM matches a PEM private key written in base64, as a kubeconfig's
// client-key-data or a Kubernetes secret's tls.key holds it: the base64
// whose first line decodes to a BEGIN line that names a private key (a
// certificate is left), on one line or wrapped at the width base64 tools
// use.
func base64PEM(m *memo, s string, i int) (int, int, string) {
	e := m.run(s, i, cB64)
	if e-i < 64 {
		return 0, 0, ""
	}
	var head [48]byte
	for k := 0; k < 16; k++ {
		var v uint32
		for _, c := range []byte(s[i+4*k : i+4*k+4]) {
			v = v<<6 | uint32(b64Value(c))
		}
		head[3*k], head[3*k+1], head[3*k+2] = byte(v>>16), byte(v>>8), byte(v)
	}
	line := string(head[len("-----BEGIN "):])
	if le := strings.Index(line, "-----"); le < 0 || !strings.Contains(line[:le], "PRIVATE KEY") {
		return 0, 0, ""
	}
	// A wrapped body goes on while its lines are as long as the first.
	for width := e - i; e < len(s) && e-i < maxSpan; {
		next := e + 1
		if s[e] == '\\' && next < len(s) && s[next] == 'n' {
			next++
		} else if s[e] != '\n' {
			break
		}
		next, f := wrappedLine(s, next, width)
		if f == next || f-next > width {
			break
		}
		e = f
		if f-next < width {
			break
		}
	}
	return i, e, "private_key"
}

// wrappedLine returns the bounds of the base64 on the line that starts at
// s[ls], a line of a body wrapped at width: after the indentation of a
// YAML block and the prefix lineBody reads (cat -n, grep -n, a diff's
// mark). A line of base64 may start with '+', which is then no diff's
// mark: the reading that makes the line as long as the first wins.
func wrappedLine(s string, ls, width int) (b, e int) {
	b = skipBlank(s, lineBody(s, ls))
	e = run(s, b, cB64)
	if e-b != width {
		if b2 := skipBlank(s, ls); b2 < b {
			if e2 := run(s, b2, cB64); e2-b2 == width {
				return b2, e2
			}
		}
	}
	return b, e
}

// b64Value is the value of the base64 digit c ('=' and others are 0).
func b64Value(c byte) byte {
	switch {
	case 'A' <= c && c <= 'Z':
		return c - 'A'
	case 'a' <= c && c <= 'z':
		return c - 'a' + 26
	case '0' <= c && c <= '9':
		return c - '0' + 52
	case c == '+':
		return 62
	case c == '/':
		return 63
	}
	return 0
}

// prefixed matches a token made of a prefix of length plen followed by at
// least min bytes of class set.
func prefixed(m *memo, s string, i, plen int, set uint16, min int, kind string) (int, int, string) {
	if e := m.run(s, i+plen, set); e-(i+plen) >= min {
		return i, e, kind
	}
	return 0, 0, ""
}

// webhookPath matches the secret path of a webhook URL starting at i.
func webhookPath(s string, i int, kind string) (int, int, string) {
	e := i
	for e < len(s) && e-i < 256 && (class[s[e]]&cTok != 0 || s[e] == '/') {
		e++ // webhook paths are about 60 bytes: the bound keeps "hooks.slack.com/services/" repeated linear
	}
	if e-i < 10 {
		return 0, 0, ""
	}
	return i, e, kind
}

// matchJWT matches header.payload.signature where header and payload are
// base64url JSON objects (both start with "eyJ", the encoding of `{"`).
func matchJWT(m *memo, s string, i int) (int, int, string) {
	if !hasAt(s, i, "eyJ") {
		return 0, 0, ""
	}
	e1 := m.run(s, i, cTok)
	if e1-i < 10 || e1 >= len(s) || s[e1] != '.' || !hasAt(s, e1+1, "eyJ") {
		return 0, 0, ""
	}
	e2 := m.run(s, e1+1, cTok)
	if e2-(e1+1) < 10 || e2 >= len(s) || s[e2] != '.' {
		return 0, 0, ""
	}
	return i, m.run(s, e2+1, cTok), "jwt"
}

// startsSecret reports whether a token or a PEM block starts at s[i]: an
// assignment whose value is one leaves it to the main loop, which names it
// better ("github_token" rather than "secret") and knows where a PEM block ends.
func startsSecret(m *memo, s string, i int) bool {
	if i >= len(s) {
		return false
	}
	if hasAt(s, i, "-----BEGIN ") {
		return true
	}
	if class[s[i]]&cTrigB == 0 {
		return false
	}
	_, end, _ := matchToken(m, s, i)
	return end > 0
}

// url redacts the password of scheme://user:password@host; s[i] is the ':'
// before "//". The user and the host stay readable.
func (sc *scanner) url(i int) int {
	s := sc.s
	as := i + 3
	ae := as
	// A parameter's braces are part of the authority
	// (postgres://${DB_USER:-app}:${DB_PASS:-…}@db), its ':' no separator.
	first := -1 // the first ':' outside them
	// A user's default is not skipped as a whole: it may hold the whole
	// user info (https://${U:-user:pw@host}/x), and one whose braces do not
	// close within maxDefault bytes (https://${U:-…300 bytes…}:pw@host)
	// would take a look ahead as long as the text for every such brace. The
	// scan goes on into its word, counting its braces as braceEnd does,
	// where a ':' is no separator. The scan still ends at the first other
	// stop, so that it stays as short as the authority it reads.
	depth, longColon := 0, -1 // the braces open in such a default; the first ':' in it
	closedAt := -1            // where such a default's braces closed
	for ae < len(s) && ae-as < 2048 && (!authorityStop(s[ae]) || depth > 0 && (s[ae] == '{' || s[ae] == '}')) {
		switch {
		case depth > 0:
			switch s[ae] {
			case '{':
				depth++
			case '}':
				if depth--; depth == 0 {
					closedAt = ae
				}
			case ':':
				if longColon < 0 {
					longColon = ae
				}
			}
		case s[ae] == ':' && first < 0:
			first = ae
		case s[ae] == '$':
			ws, we, op, closed := paramWord(s, ae, maxDefault)
			if closed && (first >= 0 || op == '?') {
				ae = we + 1
				continue
			}
			if op == 0 {
				if e := braceSkip(s, ae); e > ae+1 {
					ae = e
					continue
				}
				break
			}
			if first < 0 {
				// The user's default, closed or not: read into it, as
				// it may hold the whole user info
				// (https://${U:-user:pw@host}/x).
				depth, longColon = 1, -1
				ae = ws
				continue
			}
			if first == ae-1 && first > as && op != '?' {
				// user:${PW:-…} whose braces do not close within
				// maxDefault bytes: a password's place, where a
				// port's default is not that long.
				return sc.longWord(ae, ws, we, "url_password")
			}
		}
		ae++
	}
	at := strings.LastIndexByte(s[as:ae], '@')
	if at < 0 || hasAt(s, as, markerPrefix) {
		return 0 // no user info, or a token in the user part, redacted already
	}
	colon := first
	if depth > 0 || closedAt > as+at {
		// The user's default never closes, or closes after the '@'
		// (https://${U:-…300 bytes…:pw@host}/x, a ':' after it is a
		// port's): the password is after its first ':', and what of the
		// user is after a ':' of its own (${U:-a:b:pw@host, which no
		// shell expands) goes with it.
		colon = longColon
	}
	if colon < 0 || colon >= as+at {
		return 0
	}
	ps, pe := colon+1, as+at
	if ws, we := defaultWord(s, ps); we > 0 && we+1 == pe {
		ps, pe = ws, we // the password is the word of ${PW:-password}
	}
	if ps == pe || skipCredential(s[ps:pe]) {
		return 0
	}
	kind := "url_password"
	if start, end, k := matchToken(&sc.m, s, ps); start == ps && end == pe {
		kind = k // https://x-access-token:ghs_…@github.com
	}
	return sc.emit(ps, pe, kind)
}

// braceSkip returns the index after the parameter expansion ${…} that
// starts at s[i] and closes within maxDefault bytes, or i+1.
func braceSkip(s string, i int) int {
	if hasAt(s, i, "${") {
		if e := braceEnd(s, i+1, maxDefault); e > 0 {
			return e
		}
	}
	return i + 1
}

func authorityStop(c byte) bool {
	switch c {
	case '/', '?', '#', ' ', '\t', '\r', '\n', '"', '\'', '`', '\\', '<', '>', '(', ')', '[', ']', '{', '}', ',', ';', '|':
		return true
	}
	return false
}

// dash handles what starts with '-': PEM blocks, and the flags of a command
// line that carry a password (--name value here, a single dash in
// shortFlag).
func (sc *scanner) dash(i int) int {
	s := sc.s
	if hasAt(s, i, "-----BEGIN ") {
		return sc.pemBegin(i)
	}
	if hasAt(s, i, "-----END ") {
		return sc.pemEnd(i)
	}
	// A flag follows a blank or a quote.
	if i > 0 && !isBlank(s[i-1]) && !isQuote(s[i-1]) {
		return 0
	}
	if hasAt(s, i, "-u ") {
		return sc.userPassword(skipBlank(s, i+3), ':')
	}
	if !hasAt(s, i, "--") {
		return sc.shortFlag(i)
	}
	ns := i + 2
	ne := run(s, ns, cTok)
	if ne < len(s) && s[ne] == '=' && s[ns:ne] == "hash" {
		// NetExec's --hash=LM:NT, which assign would not know for a
		// secret: "hash" names digests far more often.
		if form, kind := flagPassword(sc.m.flagTool(s, i), 'H'); form != 0 {
			return sc.flagValues(ne+1, form, kind)
		}
		return 0
	}
	if ne == ns || ne >= len(s) || !isBlank(s[ne]) {
		return 0 // --name=value is assign's
	}
	name := s[ns:ne]
	k := skipBlank(s, ne)
	if name == "user" || name == "proxy-user" {
		return sc.userPassword(k, ':')
	}
	if strings.HasPrefix(name, "no-") || strings.HasPrefix(name, "ask-") || k >= len(s) || s[k] == '-' {
		return 0 // --no-password, wget's --ask-password: switches
	}
	if name == "hash" {
		// NetExec's --hash is its -H.
		if form, kind := flagPassword(sc.m.flagTool(s, i), 'H'); form != 0 {
			return sc.flagValues(k, form, kind)
		}
		return 0
	}
	// The name with its dashes, as assign reads --pass=…: --pass is a
	// flag's name (redis-cli's), a bare "pass" is not.
	kind := nameKind(s[i:ne])
	if kind == "" || kind == "authorization" || kind == "cookie" || kind == "signature" {
		return 0
	}
	if kind == "password" {
		var ok bool
		if k, ok = passSource(s, k, true); !ok {
			return 0 // apksigner --ks-pass env:VAR names where the password is
		}
	}
	return sc.value(k, ' ', kind, false, false, false, "")
}

// shortFlag redacts the value of the single-dash flag at s[i] when it is a
// password: openssl's -pass, -passin and -passout pass:…, keytool's and
// jarsigner's -storepass, -keypass (and their -src and -dest forms),
// Impacket's -hashes LM:NT (or -hashes=LM:NT, as argparse reads it), and a
// letter that the command it belongs to reads as its password (see
// flagPassword).
func (sc *scanner) shortFlag(i int) int {
	s := sc.s
	if ne := run(s, i+1, cTok); ne < len(s) && s[ne] == '=' && s[i+1:ne] == "hashes" {
		return sc.ntHash(ne + 1)
	} else if ne < len(s) && isBlank(s[ne]) {
		k := skipBlank(s, ne)
		switch s[i+1 : ne] {
		case "pass", "passin", "passout":
			if k, ok := passSource(s, k, false); ok {
				return sc.value(k, ' ', "password", false, false, false, "")
			}
		case "storepass", "keypass", "srcstorepass", "deststorepass", "srckeypass", "destkeypass":
			if k < len(s) && s[k] != '-' {
				return sc.value(k, ' ', "password", false, false, false, "")
			}
			return 0
		case "hashes":
			return sc.ntHash(k) // impacket-psexec, secretsdump.py …: only Impacket spells it so
		}
	}
	k := i + 2
	if k >= len(s) || !passwordLetter(s[i+1]) {
		return 0
	}
	if s[i+1] == 'H' {
		v := skipBlank(s, k)
		if s[k] == '=' {
			v = k + 1 // NetExec's -H=LM:NT
		}
		if cs, e := ntHashAt(s, v); e == cs {
			if b, we := nextArg(s, v); b == we || !placeholder(s[b:we]) {
				return 0 // curl -H 'Accept: …', smbmap -H host: no need to find the command
			}
		}
	}
	form, kind := flagPassword(sc.m.flagTool(s, i), s[i+1])
	switch {
	case form == 0:
		return 0
	case !isBlank(s[k]):
		if form&fAttached == 0 {
			return 0
		}
		// -p<password>, and -p=<password> to docker's flag parser and
		// to argparse, which then takes no further value.
		if s[k] == '=' && form&fSeparate != 0 {
			k++
		}
		form &^= fMany
	case form&fSeparate == 0:
		return 0 // mysql -p prompts; a word after it is the database
	default:
		k = skipBlank(s, k)
		if k >= len(s) || s[k] == '-' {
			return 0
		}
	}
	if portMapping(s, k) {
		return 0 // docker run --name mysql -p3306:3306
	}
	if form&fUserPct != 0 {
		return sc.userPassword(k, '%')
	}
	return sc.flagValues(k, form, kind)
}

// How a flag takes a password (flagPassword).
const (
	fAttached = 1 << iota // -p<password>
	fSeparate             // -p <password>
	fUserPct              // -U user%password
	fMany                 // -p <password> <password>…, up to the next option; one when attached
	fHash                 // an NTLM hash (ntHash), not a password
)

// flagValues redacts the value at s[k] of a flag that flagPassword
// describes with form, and with fMany the values that follow it: NetExec
// tries every word after its -p (-H) up to the next option or the end of
// the command as one more password (hash). A placeholder among them (a
// variable, ${PASS:-x}, $(cat f), an empty value: placeholder) is passed
// over, as NetExec reads the words after it too; the list stops at any other word
// not redacted, which the main loop then reads (a token). It returns the
// end of the last value redacted, or 0.
func (sc *scanner) flagValues(k, form int, kind string) int {
	s := sc.s
	end := sc.flagValue(k, form, kind)
	if form&fMany == 0 {
		return end
	}
	// e is the end of the last word read, its closing quote included.
	e := end
	if q := quoteAt(s, k); end > 0 && q != "" && hasAt(s, e, q) {
		e += len(q)
	}
	if end == 0 {
		b, we := nextArg(s, k)
		if b == we || !placeholder(s[b:we]) {
			return 0
		}
		e = we
	}
	for n := 0; n < maxArgs; n++ {
		if e >= len(s) || (s[e] != ' ' && s[e] != '\t') {
			break // the end of a line, of the command, of JSON text's string
		}
		b, we := nextArg(s, e)
		if b == we || !moreValue(s[b:we]) {
			break
		}
		next := sc.flagValue(b, form, kind)
		switch {
		case next > 0:
			end, e = next, next
			if q := quoteAt(s, b); q != "" && hasAt(s, e, q) {
				e += len(q)
			}
		case placeholder(s[b:we]):
			e = we
		default:
			return end
		}
	}
	return end
}

// placeholder reports whether the word w stands for a value rather than
// being one: a shell parameter ($PASS, ${PASS}, $1, quoted in double
// quotes or not), also expanded with an operator (${PASS:-x},
// ${PASS#prefix}), a command substitution ($(cat pw.txt), `cat pw.txt`),
// or an empty quoted value. It holds no secret to redact, and nothing the
// main loop would find in it (a command's text is read for it): an operator's word that
// holds a secret (${T:-ghp_…}) makes it no placeholder, so that the main
// loop reads it, as it reads anything else. A default that is a value
// (${PASS:-S3cret}, see defaultWord) is redacted by value before a caller
// asks.
func placeholder(w string) bool {
	if len(w) >= 2 && (w[0] == '"' && w[len(w)-1] == '"' || w[0] == '\'' && w[len(w)-1] == '\'') {
		if len(w) == 2 {
			return true
		}
		if w[0] == '\'' {
			return false // '$PASS' is the word $PASS itself
		}
		w = w[1 : len(w)-1]
	}
	if len(w) >= 2 && w[0] == '`' && w[len(w)-1] == '`' {
		_, found := scan(w[1 : len(w)-1]) // `cat pw.txt`, as $(…)
		return found == 0
	}
	if len(w) < 2 || w[0] != '$' {
		return false
	}
	name := w[1:]
	if name[0] == '(' {
		// A command substitution $(…): what the command prints.
		if braceEnd(name, 0, len(name)) != len(name) {
			return false
		}
		_, found := scan(name[1 : len(name)-1])
		return found == 0
	}
	if name[0] != '{' {
		return paramName(name) == len(name) && (name[0] > '9' || len(name) == 1) // $12 is $1 and a 2
	}
	if braceEnd(name, 0, len(name)) != len(name) {
		return false // ${A}x} is ${A} and x}
	}
	name = name[1 : len(name)-1]
	n := paramName(name)
	if n == 0 {
		return false
	}
	if n == len(name) {
		return true
	}
	word := name[n:]
	if strings.IndexByte(":-=?+#%/^,", word[0]) < 0 {
		return false
	}
	_, found := scan(word)
	return found == 0
}

// defaultWord returns where the word of the shell parameter expansion at
// s[k] starts and ends (the index of its closing brace) when that word is a
// value written in the command: the default of ${NAME:-word}, ${NAME-word},
// ${NAME:=word} and ${NAME=word}, the alternate value of ${NAME:+word} and
// ${NAME+word}. A secret there is as much in the text as after a flag or an
// '=', and value reads it as it would read it there. we is 0 when s[k]
// starts no such expansion: the word of ${NAME:?word} is a message, the
// others' a pattern or an offset. The braces must close within
// maxDefault bytes.
func defaultWord(s string, k int) (ws, we int) {
	ws, we, op, closed := paramWord(s, k, maxDefault)
	if !closed || op == '?' {
		return 0, 0
	}
	return ws, we
}

// paramWord reads the shell parameter expansion at s[k] when it is one of
// bash's that take a word: ${NAME-word}, ${NAME=word}, ${NAME?word} and
// ${NAME+word}, each also with a colon before its operator. It returns
// where the word starts, the index of the closing brace (braces nested in
// the word counted: ${A:-x${B}}) and the operator op (- = ? or +), which
// is 0 when s[k] starts no such expansion. When the braces do not close
// within max bytes, closed is false and we is where the bound ends (or the
// text), at ws at least.
func paramWord(s string, k, max int) (ws, we int, op byte, closed bool) {
	if !hasAt(s, k, "${") {
		return 0, 0, 0, false
	}
	n := paramName(s[k+2:])
	if n == 0 {
		return 0, 0, 0, false
	}
	o := k + 2 + n
	if o < len(s) && s[o] == ':' {
		o++
	}
	if o >= len(s) || (s[o] != '-' && s[o] != '=' && s[o] != '?' && s[o] != '+') {
		return 0, 0, 0, false
	}
	if e := braceEnd(s, k+1, max); e > 0 {
		return o + 1, e - 1, s[o], true
	}
	we = min(k+1+max, len(s))
	if we < o+1 {
		we = o + 1
	}
	return o + 1, we, s[o], false
}

// maxDefault bounds the expansion that paramWord and braceSkip read: a
// password or a token is far shorter, and the bound keeps the cost of
// braces that never close (value, url and userPassword look at every one)
// well below nextArg's. A longer default where a value or a password is
// read (value, paramDefault, url, userPassword) is redacted whole all the
// same (longWord); elsewhere it is left to the main loop, as a token in it
// is.
const maxDefault = 256

// paramName returns the length of the shell parameter's name that starts
// w: a variable's name or a positional parameter's digits.
func paramName(w string) int {
	n := 0
	if w != "" && w[0] >= '0' && w[0] <= '9' {
		for n < len(w) && w[n] >= '0' && w[n] <= '9' {
			n++
		}
		return n
	}
	return run(w, 0, cWord)
}

// flagValue redacts one value of a flag, as flagValues.
func (sc *scanner) flagValue(k, form int, kind string) int {
	if form&fHash != 0 {
		return sc.ntHash(k)
	}
	if hasAt(sc.s, k, "`") {
		return 0 // a command substitution on a command line, not a quoted value (placeholder)
	}
	return sc.value(k, ' ', kind, false, false, false, "")
}

// moreValue reports whether the word w, after a value of a flag that takes
// several, is one more: not an option, a redirection (2>&1, >out) or a
// comment.
func moreValue(w string) bool {
	d := 0
	for d < len(w) && w[d] >= '0' && w[d] <= '9' {
		d++
	}
	return w[0] != '-' && w[0] != '#' && (d == len(w) || (w[d] != '>' && w[d] != '<'))
}

// ntHash redacts the NTLM hash at s[k], quoted or not, also as the word of
// ${NT:-hash}: LM:NT, :NT or NT alone, each 32 hex digits. It
// authenticates as the password does (pass the hash). Anything else after
// the flag, such as a file of hashes, is left as it is.
func (sc *scanner) ntHash(k int) int {
	if cs, e := ntHashAt(sc.s, k); e > cs {
		end := sc.emit(cs, e, "password")
		if _, we := defaultWord(sc.s, k+len(quoteAt(sc.s, k))); we == e {
			end++ // the expansion is read whole
		}
		return end
	}
	return 0
}

// ntHashAt returns the bounds of the NTLM hash at s[k] (after its quote,
// in the word of ${NT:-hash}), or e == cs when there is none.
func ntHashAt(s string, k int) (cs, e int) {
	cs = k + len(quoteAt(s, k))
	if ws, we := defaultWord(s, cs); we > 0 {
		cs = ws
	}
	e = hexRun(s, cs)
	if lm := e - cs; e < len(s) && s[e] == ':' && (lm == 0 || lm == 32) {
		if e = hexRun(s, e+1); e-cs != lm+33 {
			return cs, cs
		}
	} else if lm != 32 {
		return cs, cs
	}
	if e < len(s) && !valueStop(s[e]) {
		return cs, cs // a longer word
	}
	return cs, e
}

// hexRun returns the end of the run of hex digits, of either case, at s[i].
func hexRun(s string, i int) int {
	for i < len(s) && (class[s[i]]&cHex != 0 || (s[i] >= 'A' && s[i] <= 'F')) {
		i++
	}
	return i
}

// passwordLetter reports whether some command reads the flag -c as its
// password (see flagPassword): the cheap look before finding the command.
func passwordLetter(c byte) bool {
	switch c {
	case 'p', 'a', 'P', 'k', 'K', 'w', 's', 'U', 'H':
		return true
	}
	return false
}

// flagPassword says how the short flag -c of tool (as flagTool names the
// command) takes a password, and the kind of secret it is; form is 0 when
// it takes none. It is the one list of such flags: each letter is a port,
// a path or a switch to other commands (ssh -p 22, redis-cli -p 6379, scp
// -P 2222, unzip -p, curl -k, wc -w, mkdir -p), so a flag is a password
// only for the commands named here.
func flagPassword(tool string, c byte) (form int, kind string) {
	kind = "password"
	switch tool {
	case "mysql", "7z":
		if c == 'p' {
			return fAttached, kind // a word after mysql's -p is the database; 7z -p alone prompts
		}
	case "sshpass", "login", "mongo":
		if c == 'p' {
			return fAttached | fSeparate, kind
		}
	case "redis-cli":
		if c == 'a' {
			return fSeparate, kind
		}
	case "zip":
		if c == 'P' {
			return fSeparate, kind
		}
	case "openssl":
		switch c {
		case 'k':
			return fSeparate, kind // enc -k password
		case 'K':
			return fSeparate, "secret" // enc -K key, in hex
		}
	case "ldap":
		if c == 'w' {
			return fAttached | fSeparate, kind
		}
	case "ldappasswd":
		if c == 'w' || c == 'a' || c == 's' {
			return fAttached | fSeparate, kind // the bind, the old and the new password
		}
	case "smb":
		if c == 'U' {
			return fAttached | fSeparate | fUserPct, kind
		}
	case "netexec":
		switch c {
		// argparse's: -p <password>…, -p<password>, -p=<password>.
		case 'p':
			return fAttached | fSeparate | fMany, kind
		case 'H':
			return fAttached | fSeparate | fMany | fHash, kind // and --hash
		}
	case "smbmap":
		if c == 'p' {
			// argparse's too. -P is its port, -H its host; a hash is
			// given as -p LM:NT.
			return fAttached | fSeparate, kind
		}
	}
	return 0, ""
}

// toolOf names the command w as flagPassword knows it, or "". w is a
// word of a command line, without its path; s[b] starts that word.
func toolOf(s string, b int, w string) string {
	w = strings.TrimSuffix(w, ".exe")
	switch w {
	case "sshpass", "redis-cli", "openssl", "zip", "ldappasswd":
		return w
	case "login":
		if wordBefore(s, b) {
			return w // docker login, not login(1)'s -p
		}
	case "7z", "7za", "7zr", "7zz":
		return "7z"
	case "valkey-cli", "keydb-cli":
		return "redis-cli"
	case "unzip":
		return "zip"
	case "mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport", "mongostat", "mongotop", "mongofiles":
		return "mongo" // not mongod or mongos, whose -p is nothing
	case "ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapmodrdn", "ldapcompare", "ldapwhoami", "ldapexop":
		return "ldap"
	case "smbclient", "rpcclient", "smbcacls", "smbget", "smbtree", "net":
		return "smb"
	case "netexec", "nxc", "crackmapexec", "cme":
		return "netexec" // NetExec, and CrackMapExec as it was named before
	case "smbmap":
		return w
	}
	if strings.HasPrefix(w, "mysql") || strings.HasPrefix(w, "mariadb") {
		return "mysql"
	}
	return ""
}

// flagTool names the command a short flag at s[i] belongs to, as toolOf
// names it, or "". It reads the words before the flag back to the start of
// the command (a line, ;, |, &, a subshell) and takes the nearest command
// toolOf knows, except sshpass when a word not a flag stands between
// (sshpass -d 3 -p …, not sshpass -e ssh -p 22).
func (m *memo) flagTool(s string, i int) string {
	// fw is the start of the flag's word (-p or '-p…').
	fw := i
	for fw > 0 && !wordStop(s[fw-1]) {
		fw--
	}
	c := cmdWords{at: fw, toolAt: -1, nonFlag: -1}
	prev := &m.cmd
	for e := fw; ; {
		for e > 0 && (s[e-1] == ' ' || s[e-1] == '\t') {
			e--
		}
		b := e
		for b > 0 && !wordStop(s[b-1]) {
			b--
		}
		if b == e {
			break // the start of the command
		}
		c.add(s, b, e)
		if prev.ok && b == prev.at {
			// The words before this one were read for the flag there.
			c.merge(prev)
			break
		}
		e = b
	}
	*prev = c
	prev.ok = true
	if c.tool == "sshpass" && c.nonFlag != c.toolAt {
		return ""
	}
	return c.tool
}

// cmdWords is what flagTool read of the words of a command that start
// before at: the nearest command toolOf knows and the nearest word that is
// not a flag, their starts -1 when there is none.
type cmdWords struct {
	ok              bool
	at              int
	tool            string
	toolAt, nonFlag int
}

// add reads the word s[b:e], nearer to at than any read before.
func (c *cmdWords) add(s string, b, e int) {
	t := nameStart(s, b, e)
	// A name after '=' or after a long option is that option's value:
	// docker run --name mongo -p 27017, --name=mongo.
	if c.toolAt < 0 && (t == b || s[t-1] != '=') && !optionValue(s, b) {
		if tool := toolOf(s, b, s[t:e]); tool != "" {
			c.tool, c.toolAt = tool, b
		}
	}
	if c.nonFlag < 0 && s[b] != '-' {
		c.nonFlag = b
	}
}

// nameStart returns where the name of the command in the word s[b:e]
// starts: after a path, a quote, a JSON key's colon or an escaped line
// break (/usr/bin/mysql, "command":"mysql, a.env:3:mysql in grep's output,
// \nmysql in JSON text read as text).
func nameStart(s string, b, e int) int {
	t := e
	for t > b && class[s[t-1]]&cName != 0 {
		t--
	}
	if t > b && s[t-1] == '\\' && t < e && escapeLetter(s[t]) {
		t++
	}
	return t
}

// merge completes c with p, the reading of the words before p.at.
func (c *cmdWords) merge(p *cmdWords) {
	if c.toolAt < 0 {
		c.tool, c.toolAt = p.tool, p.toolAt
	}
	if c.nonFlag < 0 {
		c.nonFlag = p.nonFlag
	}
}

// optionValue reports whether the word before s[b] in its command is a
// long option without its value (--name, not --rm=true nor the -- that
// ends the options), whose value the word at s[b] then is.
func optionValue(s string, b int) bool {
	for b > 0 && (s[b-1] == ' ' || s[b-1] == '\t') {
		b--
	}
	p := b
	for p > 0 && !wordStop(s[p-1]) {
		p--
	}
	w := s[p:b]
	return len(w) > 2 && w[0] == '-' && w[1] == '-' && strings.IndexByte(w, '=') < 0
}

// wordStop reports whether c ends a word of a command: a blank or a
// separator of commands.
func wordStop(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ';', '|', '&', '(', ')', '`', '{', '}':
		return true
	}
	return false
}

// wordBefore reports whether a word of the same command stands before
// s[b].
func wordBefore(s string, b int) bool {
	for b > 0 && (s[b-1] == ' ' || s[b-1] == '\t') {
		b--
	}
	return b > 0 && !wordStop(s[b-1])
}

// portMapping reports whether the word at s[k] is a port mapping such as
// 3306:3306 or 127.0.0.1:3306:3306.
func portMapping(s string, k int) bool {
	colon := false
	for ; k < len(s) && !valueStop(s[k]); k++ {
		switch c := s[k]; {
		case c == ':':
			colon = true
		case c != '.' && (c < '0' || c > '9'):
			return false
		}
	}
	return colon
}

// passSource reads the password argument of openssl's -pass, -passin and
// -passout, or of apksigner's --ks-pass, at s[k]: pass:<password> holds the
// password, which starts at the index returned; env:VAR, file:PATH, fd:N
// and stdin say where to read it, ok false. Any other word is the password
// itself when plain is true.
func passSource(s string, k int, plain bool) (start int, ok bool) {
	j := k + len(quoteAt(s, k))
	switch {
	case hasAt(s, j, "pass:"):
		return j + 5, true
	case hasAt(s, j, "env:"), hasAt(s, j, "file:"), hasAt(s, j, "fd:"), hasAt(s, j, "stdin"):
		return k, false
	}
	return k, plain
}

// userPassword redacts the password of user<sep>password at s[k]: curl's
// -u and --user user:password, smbclient's -U user%password (whose user
// may be DOMAIN\user).
func (sc *scanner) userPassword(k int, sep byte) int {
	s := sc.s
	if q := quoteAt(s, k); q != "" {
		k += len(q)
	}
	if hasAt(s, k, markerPrefix) {
		return 0 // -u sk_test_…: the token was the user, redacted already
	}
	u := k
	for u < len(s) && !isBlank(s[u]) && !isQuote(s[u]) && s[u] != sep &&
		(sep != ':' || (s[u] != '@' && s[u] != '\\' && s[u] != '/')) {
		if s[u] != '$' {
			u++
		} else {
			u = braceSkip(s, u) // ${USER:-me}: its ':' is not the separator
		}
	}
	if u == k || u >= len(s) || s[u] != sep {
		return 0
	}
	ps := u + 1
	if hasAt(s, ps, "//") {
		return 0 // -u redis://user:password@host: url keeps the user and the host
	}
	// The password may be the word of ${PW:-password} (defaultWord),
	// also when its braces close further than defaultWord reads.
	limit := len(s)
	ws, we, op, closed := paramWord(s, ps, maxDefault)
	switch {
	case op == 0 || op == '?':
		we = 0
	case !closed:
		return sc.longWord(ps, ws, we, "password")
	default:
		ps, limit = ws, we
	}
	pe := ps
	for pe < limit && !isBlank(s[pe]) && !isQuote(s[pe]) {
		if s[pe] != '\\' {
			pe++
		} else if n := wordEscape(s, pe); n > 0 {
			pe += n
		} else {
			break
		}
	}
	if pe == ps || skipCredential(s[ps:pe]) || allDigits(s[ps:pe]) {
		return 0 // docker -u 1000:1000
	}
	end := sc.emit(ps, pe, "password")
	if pe == we {
		end++ // the expansion is read whole
	}
	return end
}

// maxArgs and maxArg bound how far command reads a command line: the
// words of the commands it knows are few and short, and the bounds keep a
// text of their names linear.
const (
	maxArgs = 16
	maxArg  = 1024
)

// command redacts the password that the command named at s[i] takes as an
// argument rather than as a flag's value: htpasswd -b's, rabbitmqctl
// add_user's, change_password's and authenticate_user's, net use's and net
// user's (Windows), and the token of vault login when it reads as one. It
// returns 0 when s[i] names none of them.
func (sc *scanner) command(i int) int {
	s := sc.s
	var name string
	switch s[i] {
	case 'h':
		name = "htpasswd"
	case 'r':
		name = "rabbitmqctl"
	case 'n':
		name = "net"
	case 'v':
		name = "vault"
	}
	e := i + len(name)
	if !hasAt(s, i, name) || (i > 0 && !cmdStart(s, i)) {
		return 0
	}
	if hasAt(s, e, ".exe") {
		e += 4
	}
	if e >= len(s) || (s[e] != ' ' && s[e] != '\t') {
		return 0
	}
	switch name {
	case "htpasswd":
		return sc.htpasswd(e)
	case "rabbitmqctl":
		return sc.rabbitmqctl(e)
	case "net":
		if cmdPosition(s, i) || shellCommand(s, i) {
			return sc.net(e) // not "the net user count"
		}
	case "vault":
		return sc.vaultLogin(e)
	}
	return 0
}

// cmdStart reports whether a command name can start at s[i]: after
// anything but a byte of a name or '=' (a blank, a separator of commands, a
// quote, a path, a diff's +, grep's file:line:), or after an escaped line
// break.
func cmdStart(s string, i int) bool {
	c := s[i-1]
	if class[c]&cName == 0 && c != '=' {
		return true
	}
	return i > 1 && s[i-2] == '\\' && escapeLetter(c)
}

// cmdPosition reports whether the word at s[i] is the first of its
// command: only blanks stand between it and the start of the text, a line,
// a separator of commands, or a prompt or trace (C:\> , $ , set -x's + ).
func cmdPosition(s string, i int) bool {
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	return i == 0 || cmdStart(s, i) || strings.IndexByte("+$>#", s[i-1]) >= 0
}

// shellCommand reports whether the words before s[i] hand the rest of the
// command line to one of Windows' shells as a command of its own: cmd's /c
// or /k (cmd /q /c net …), PowerShell's -Command or an abbreviation of it
// (powershell -NoProfile -c net …). Quoted, the command starts after the
// quote and cmdPosition sees it; unquoted, it follows a switch, after the
// shell's other switches, PowerShell's with their values
// (-ExecutionPolicy Bypass, see psValueSwitch).
func shellCommand(s string, i int) bool {
	sw := byte(0) // the first byte of the switch that takes the command
	b, e := i, i
	for n := 0; n < maxArgs; n++ {
		if b, e = lastWord(s, b); b == e {
			return false
		}
		w := s[b:e]
		switch {
		case sw == 0:
			if !strings.EqualFold(w, "/c") && !strings.EqualFold(w, "/k") &&
				!(len(w) >= 2 && len(w) <= len("-command") && strings.EqualFold(w, "-command"[:len(w)])) {
				return false
			}
			sw = w[0]
		case w[0] != sw || strings.IndexAny(w[1:], `/\`) >= 0:
			// The shell's name, before .exe, quoted or not, after its
			// path: "C:\Windows\System32\cmd.exe", /mnt/c/…/cmd.exe.
			ne := e
			if isQuote(s[ne-1]) {
				ne--
			}
			name := s[nameStart(s, b, ne):ne]
			if len(name) > 4 && strings.EqualFold(name[len(name)-4:], ".exe") {
				name = name[:len(name)-4]
			}
			if sw == '/' {
				return strings.EqualFold(name, "cmd")
			}
			if strings.EqualFold(name, "powershell") || strings.EqualFold(name, "pwsh") {
				return true
			}
			// Or the value of a switch before it.
			pb, pe := lastWord(s, b)
			if pb == pe || !psValueSwitch(s[pb:pe]) {
				return false
			}
			b = pb
		}
	}
	return false
}

// lastWord returns the bounds of the word of a command that ends before
// s[e], after blanks, or b == e at the start of the command. A word longer
// than maxArg is cut there.
func lastWord(s string, e int) (b, end int) {
	for e > 0 && (s[e-1] == ' ' || s[e-1] == '\t') {
		e--
	}
	b = e
	for b > 0 && !wordStop(s[b-1]) && e-b < maxArg {
		b--
	}
	return b, e
}

// psValueSwitch reports whether w is a switch of PowerShell (powershell.exe
// or pwsh) that takes a value as the next word: its name, a prefix of it
// as PowerShell accepts one, or an alias.
func psValueSwitch(w string) bool {
	if len(w) < 2 || w[0] != '-' {
		return false
	}
	w = w[1:]
	for _, p := range [...]struct {
		name string
		min  int // the shortest prefix PowerShell takes for it
	}{
		{"executionpolicy", 2}, {"windowstyle", 1}, {"version", 1}, {"inputformat", 3},
		{"outputformat", 1}, {"workingdirectory", 2}, {"configurationname", 6},
		{"psconsolefile", 3}, {"settingsfile", 3}, {"custompipename", 3},
		{"ep", 2}, {"if", 2}, {"of", 2}, {"wd", 2}, // aliases
	} {
		if len(w) >= p.min && len(w) <= len(p.name) && strings.EqualFold(w, p.name[:len(w)]) {
			return true
		}
	}
	return false
}

// nextArg returns the bounds of the argument of a command line after s[k],
// or b == e at the end of the command (or past maxArg bytes). A quoted
// argument runs to its closing quote, also when the quotes are escaped, as
// in a command inside another's quotes (bash -c "htpasswd -b f \"A B\" …")
// and in JSON text read as text; a blank or a separator escaped with a
// backslash does not end a word (htpasswd -b f A\ B …, see wordEscape),
// nor does one inside a parameter's braces (${PASS:?not set}) or a command
// substitution ($(cat pw.txt)).
func nextArg(s string, k int) (b, e int) {
	b = skipBlank(s, k)
	if q := quoteAt(s, b); q != "" {
		if c := indexWithin(s, b+len(q), q, maxArg); c >= 0 {
			return b, c + len(q)
		}
	}
	e = b
	for e < len(s) {
		if e-b >= maxArg {
			return b, b
		}
		if s[e] == '\\' {
			if n := wordEscape(s, e); n > 0 {
				e += n // John\ Doe is one word
				continue
			}
		}
		if expansionAt(s, e) {
			// ${…} and a command substitution $(…) are one word, or
			// part of one.
			if c := braceEnd(s, e+1, maxArg-(e-b)); c > 0 {
				e = c
				continue
			}
		}
		if wordStop(s[e]) {
			break
		}
		e++
	}
	return b, e
}

// braceEnd returns the index after the brace (or parenthesis) that closes
// the one at s[i], those nested within counted, or 0 when none does in the
// next max bytes. A brace nests only as ${, as in bash; parentheses nest
// whole.
func braceEnd(s string, i, max int) int {
	opening, closing := byte('{'), byte('}')
	if s[i] == '(' {
		opening, closing = '(', ')'
	}
	open := 0
	for j := i; j < len(s) && j-i < max; j++ {
		switch s[j] {
		case opening:
			// Within a parameter's expansion a brace opens another only
			// as ${ (bash: ${A:-{x}} is the default {x, then a brace).
			if opening == '{' && j > i && s[j-1] != '$' {
				continue
			}
			open++
		case closing:
			if open--; open == 0 {
				return j + 1
			}
		}
	}
	return 0
}

// wordEscape returns how many bytes the backslash at s[i] and what it
// escapes take in a shell word, or 0 when it escapes nothing there. A
// backslash keeps a blank or a punctuation byte in the word (S3cret\ pass,
// P\!x, a\;b, a\\b), and in JSON text read as text, where that escape
// is written \\ before a blank, the same (S3cret\\ pass): the whole word
// is one password, one user. A letter or a digit after it is an escape of
// JSON text (\n, \u0041) and a quote an escaped quote (quoteAt), which
// end an unquoted value.
func wordEscape(s string, i int) int {
	if i+1 >= len(s) {
		return 0
	}
	switch c := s[i+1]; {
	case c == '\\' && i+2 < len(s) && s[i+2] == ' ':
		return 3
	case c == ' ' || (c > ' ' && c < 0x7f && class[c]&cAlnum == 0 && c != '"' && c != '\''):
		return 2
	}
	return 0
}

// htpasswd redacts the password of htpasswd -b [-c…] file user password
// (or -nb user password); s[k] follows the command's name. Without -b the
// password is prompted for, and the last word is the user.
func (sc *scanner) htpasswd(k int) int {
	s := sc.s
	batch, noFile, pos := false, false, 0
	for n := 0; n < maxArgs; n++ {
		b, e := nextArg(s, k)
		if b == e {
			return 0
		}
		k = e
		if s[b] == '-' {
			f := s[b+1 : e]
			batch = batch || strings.IndexByte(f, 'b') >= 0
			noFile = noFile || strings.IndexByte(f, 'n') >= 0
			if strings.HasSuffix(f, "C") || strings.HasSuffix(f, "r") {
				_, k = nextArg(s, k) // -C cost, -r rounds
			}
			continue
		}
		if pos++; pos == 3 || (pos == 2 && noFile) {
			if !batch {
				return 0
			}
			return sc.value(b, ' ', "password", false, false, false, "")
		}
	}
	return 0
}

// rabbitmqctl redacts the password of rabbitmqctl add_user (and
// change_password, authenticate_user) user password; s[k] follows the
// command's name.
func (sc *scanner) rabbitmqctl(k int) int {
	s := sc.s
	sub, pos := false, 0
	for n := 0; n < maxArgs; n++ {
		b, e := nextArg(s, k)
		if b == e {
			return 0
		}
		k = e
		w := s[b:e]
		switch {
		case w[0] == '-':
			if !sub && (w == "-n" || w == "--node" || w == "-t" || w == "--timeout") {
				_, k = nextArg(s, k)
			}
		case !sub:
			if w != "add_user" && w != "change_password" && w != "authenticate_user" {
				return 0
			}
			sub = true
		default:
			if pos++; pos == 2 {
				return sc.value(b, ' ', "password", false, false, false, "")
			}
		}
	}
	return 0
}

// net redacts the password of Windows' net use [device] \\host\share
// password and net user name password; s[k] follows the command's name.
// Options start with '/' (/user:name, /persistent:no); a password of * is
// prompted for.
func (sc *scanner) net(k int) int {
	s := sc.s
	b, e := nextArg(s, k)
	sub := s[b:e]
	if sub != "use" && sub != "user" {
		return 0
	}
	k = e
	var args [3]int // the starts of the first arguments that are not options
	n := 0
	for w := 0; w < maxArgs && n < len(args); w++ {
		b, e := nextArg(s, k)
		if b == e {
			break
		}
		k = e
		if s[b] == '/' && !hasAt(s, b, "//") {
			continue
		}
		args[n] = b
		n++
	}
	at := 1 // net user name password
	if sub == "use" {
		if n > 0 && netDevice(s, args[0]) {
			args[0], args[1], args[2] = args[1], args[2], 0
			n--
		}
		if n < 2 || !(hasAt(s, args[0], `\\`) || hasAt(s, args[0], "//")) {
			return 0
		}
	}
	if n <= at {
		return 0
	}
	return sc.value(args[at], ' ', "password", false, false, false, "")
}

// netDevice reports whether the argument at s[b] is the device of net use:
// Z:, LPT1:, or * for the next free one.
func netDevice(s string, b int) bool {
	_, e := nextArg(s, b)
	w := s[b:e]
	return w == "*" || (len(w) >= 2 && len(w) <= 5 && w[len(w)-1] == ':' && letters(w[:1]))
}

// vaultLogin redacts the token of vault login TOKEN when it is shaped
// like one (long, of mixed case and digits); s[k] follows the command's
// name. The key=value pairs of other methods are assignments, which the
// main loop reads (password=…).
func (sc *scanner) vaultLogin(k int) int {
	s := sc.s
	b, e := nextArg(s, k)
	if s[b:e] != "login" {
		return 0
	}
	k = e
	for n := 0; n < maxArgs; n++ {
		b, e := nextArg(s, k)
		if b == e {
			return 0
		}
		k = e
		if s[b] == '-' || strings.IndexByte(s[b:e], '=') >= 0 {
			continue
		}
		v := s[b:e]
		if q := quoteAt(v, 0); q != "" && len(v) >= 2*len(q) {
			v = v[len(q) : len(v)-len(q)]
		}
		if len(v) < 16 || run(v, 0, cName) != len(v) || !mixedCase(v) {
			return 0
		}
		return sc.value(b, ' ', "secret", false, false, false, "")
	}
	return 0
}

// pemBegin redacts a PEM private key block from its BEGIN line through its
// END line, or, when the text was cut before END, through what still looks
// like the key's body.
func (sc *scanner) pemBegin(i int) int {
	s := sc.s
	ls := i + len("-----BEGIN ")
	le := indexWithin(s, ls, "-----", 80)
	if le < 0 || !strings.Contains(s[ls:le], "PRIVATE KEY") {
		return 0
	}
	body := le + 5
	if e := sc.m.nextEnd(s, body); e >= 0 && e-body <= maxSpan {
		if f := indexWithin(s, e+9, "-----", 80); f >= 0 {
			return sc.emit(i, f+5, "private_key")
		}
	}
	return sc.emit(i, pemBodyEnd(s, body), "private_key")
}

// pemBodyEnd returns where the body of a private key that starts at
// s[body], after its BEGIN line, ends when no END line closes it: the end
// of what still looks like the key's body, read for at most maxSpan bytes.
func pemBodyEnd(s string, body int) int {
	end := body
	for end < len(s) && end-body < maxSpan {
		switch c := s[end]; {
		case c == '\n':
			end = lineBody(s, end+1) // grep -rn's path may hold a '.'
		case c == '\\' && end+1 < len(s) && s[end+1] == 'n':
			end = lineBody(s, end+2)
		case class[c]&cB64 != 0 || strings.IndexByte("\r\t \\:,-", c) >= 0:
			end++
		default:
			return end
		}
	}
	return end
}

// pemOpen reports whether s starts with the BEGIN line of a private key
// whose body runs to the end of s, with no END line: a piece of text cut
// from where s ends holds the rest of the key's body without its BEGIN
// line, which only s tells to be a key's (JSONRange).
func pemOpen(s string) bool {
	if !strings.HasPrefix(s, "-----BEGIN ") {
		return false
	}
	le := indexWithin(s, len("-----BEGIN "), "-----", 80)
	if le < 0 || !strings.Contains(s[:le], "PRIVATE KEY") || strings.Contains(s, "-----END ") {
		return false
	}
	return pemBodyEnd(s, le+5) >= len(s)
}

// pemEnd redacts the tail of a private key whose BEGIN line is not in the text
// (a preview's tail window, a cut log): the END line and the base64 before it.
func (sc *scanner) pemEnd(i int) int {
	s := sc.s
	ls := i + len("-----END ")
	le := indexWithin(s, ls, "-----", 80)
	if le < 0 || !strings.Contains(s[ls:le], "PRIVATE KEY") {
		return 0
	}
	b := i
	for b > sc.last && i-b < maxSpan {
		if c := s[b-1]; class[c]&cB64 != 0 || c == '\n' || c == '\r' || c == '\\' {
			b--
			continue
		}
		// The body's lines as cat -n, grep -n, grep -r or a diff print
		// them: go on before the line's prefix, as lineBody reads it.
		if ls := sc.m.lineStart(s, b); ls >= sc.last && ls < b && b <= lineBody(s, ls) {
			b = ls
			continue
		}
		break
	}
	if lineStartAt(s, b) {
		b = min(lineBody(s, b), i) // the first line's prefix stays
	}
	if i-b < 16 {
		return 0 // a lone END line carries no key material
	}
	return sc.emit(b, le+5, "private_key")
}

// sqlLiteral redacts the quoted literal at s[k] in PASSWORD '…' and
// IDENTIFIED BY '…'.
func (sc *scanner) sqlLiteral(k int, kind string) int {
	s := sc.s
	k = skipBlank(s, k)
	if k >= len(s) || s[k] != '\'' {
		return 0
	}
	cs := k + 1
	ce := sc.closeQuote(cs, "'")
	if ce == cs || skipValue(s[cs:ce]) {
		return 0
	}
	return sc.emit(cs, ce, kind)
}

// assign handles name=value, name: value, name => value, name := "value" and
// "name", "value" where the name ends in a secret-bearing word; s[i] is the
// separator.
func (sc *scanner) assign(i int) int {
	s := sc.s
	sep := s[i]
	j := i + 1
	spaced := sep == ':'
	quotedOnly := false // only a quoted literal is a value (Go :=, function arguments)
	e := i
	switch sep {
	case '=':
		if j < len(s) {
			switch s[j] {
			case '=', '~':
				return 0 // comparison, regexp match
			case '>':
				j++ // PHP/Perl/Ruby key => value
				spaced = true
			}
		}
		if i > 0 {
			switch s[i-1] {
			case '=', '!', '<', '>':
				return 0
			case ':':
				quotedOnly, e = true, i-1
			}
		}
	case ':':
		if (j < len(s) && (s[j] == ':' || s[j] == '=')) || (i > 0 && s[i-1] == ':') {
			return 0 // C++/Rust paths, := (handled at '=')
		}
	case ',':
		// ("API_KEY", "value") as in os.environ.setdefault, Header.Set
		if i == 0 || !isQuote(s[i-1]) {
			return 0
		}
		quotedOnly = true
	}
	if sep == '=' && e == i && (i == 0 || !isBlank(s[i-1])) && j < len(s) && isBlank(s[j]) {
		return 0 // shell: PASSWORD= cmd assigns the empty string
	}
	// The name, backwards from the separator.
	for e > 0 && isBlank(s[e-1]) && s[e-1] != '\n' && s[e-1] != '\r' {
		e--
		spaced = true
	}
	nameQuoted := false
	if e > 0 && isQuote(s[e-1]) {
		nameQuoted = true
		e--
		if e > 0 && s[e-1] == '\\' {
			e--
		}
	}
	if e == 0 || !keywordEnd(s[e-1]) {
		return 0 // the fast exit for almost every '=' and ':' in code
	}
	b := e
	for b > 0 && e-b < 128 && class[s[b-1]]&cName != 0 {
		b--
	}
	if sep == ',' && !nameQuoted {
		return 0
	}
	if b > 0 && s[b-1] == '$' {
		return 0 // "$TOKEN" = …
	}
	if b > 1 && s[b-1] == '{' && s[b-2] == '$' {
		return 0 // ${TOKEN:-default}: paramDefault read it at its '$'
	}
	kind := nameKind(s[b:e])
	if kind == "" {
		return 0
	}
	k := j
	for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
		k++
		if sep != ',' {
			spaced = true
		}
	}
	if sep == '=' && spaced && (kind == "authorization" || kind == "cookie") {
		quotedOnly = true // authorization = request.headers[…] is code
	}
	if kind == "signature" {
		// X-Amz-Signature=… in a presigned URL grants access; elsewhere
		// "signature" is mostly prose or code (function signatures).
		if sep != '=' || spaced {
			return 0
		}
		kind = "secret"
	}
	open := ""
	if b > 0 && !nameQuoted {
		// -H 'Authorization: Bearer …': the value ends at the quote that
		// opened the header argument. Header names may carry a prefix
		// (Proxy-Authorization), which cName already took in.
		open = quoteBefore(s, b)
	}
	return sc.value(k, sep, kind, spaced, nameQuoted, quotedOnly, open)
}

// value redacts the value of an assignment that starts at s[k]. spaced means
// the assignment looked like code (spaces around the separator, YAML's
// colon), where an unquoted value is more often an expression than a secret.
func (sc *scanner) value(k int, sep byte, kind string, spaced, nameQuoted, quotedOnly bool, open string) int {
	s := sc.s
	if k >= len(s) || hasAt(s, k, markerPrefix) {
		return 0
	}
	q := quoteAt(s, k)
	if q == "" && k+1 < len(s) && isQuote(s[k+1]) && strings.IndexByte("bBrRuU", s[k]) >= 0 {
		k++ // Python b"…", r"…"
		q = quoteAt(s, k)
	}
	if ws, we, op, closed := paramWord(s, k+len(q), maxDefault); op != 0 && op != '?' && (!closed || wordDone(s, we+1, q)) {
		// (Text after the braces makes the expansion part of a word,
		// read below: ${A:-x}y, "${A:-x}y".)
		if q == "" && (quotedOnly || nameQuoted) {
			return 0
		}
		if !closed {
			return sc.longWord(k+len(q), ws, we, kind)
		}
		// The expansion's quotes only keep its word whole.
		return sc.wordValue(ws, we, sep, kind, spaced)
	}
	if q != "" {
		cs := k + len(q)
		if startsSecret(&sc.m, s, cs) {
			return 0
		}
		if cs < len(s) && skipLead(s[cs]) {
			if expansionAt(s, cs) {
				if ce := sc.closeQuote(cs, q); textAfterExpansions(s, cs, ce) {
					return sc.emit(cs, ce, kind) // "${VAULT_PW}Xk93"
				}
			}
			return 0 // decided by the first byte: no need to find the end
		}
		ce := sc.closeQuote(cs, q)
		if quotedOnly && (nullish(s[cs:ce]) || identWithKeyword(s[cs:ce])) {
			return 0 // ["token", "password"] is a list of words
		}
		if sep == ',' && strings.IndexAny(s[cs:ce], "0123456789") < 0 {
			// "Authorization", "WWW-Authenticate" is a list of header
			// names; a literal secret passed as an argument has digits.
			return 0
		}
		return sc.literal(cs, ce, kind, q)
	}
	if quotedOnly || nameQuoted || (skipLead(s[k]) && (!expansionAt(s, k) || expansionEnd(s, k) == 0)) || startsSecret(&sc.m, s, k) {
		return 0 // "key": 42 in JSON-ish text is not a string; a token is named by the main loop
	}
	header := kind == "authorization" || kind == "cookie"
	if header && open != "" {
		// -H 'Authorization: Digest a="b", c="d"': up to the closing quote.
		return sc.literal(k, sc.lineEnd(k, open), kind, open)
	}
	start := k
	if kind == "authorization" {
		// Authorization: Bearer abc (an HTTP dump, YAML): keep the scheme.
		if w := sc.m.run(s, k, cTok); w > k && w < len(s) && s[w] == ' ' {
			if k2 := skipBlank(s, w); k2 < len(s) && !valueStop(s[k2]) {
				start = k2
			}
			if ws, we := defaultWord(s, start); we > 0 && start > k {
				return sc.wordValue(ws, we, sep, kind, spaced) // Bearer ${TOKEN:-…}
			}
		}
	}
	ve := sc.valueEnd(start)
	v := s[start:ve]
	if s[start] == '$' && (!textAfterExpansions(s, start, ve) || (ve < len(s) && s[ve] == '}')) {
		// $(cat pw.txt), ${A}${B}, ${HOME}/.pw: a reference. Before a
		// brace that closes nothing of it (${A}x}), the word is not read
		// as the shell would; the word of an expansion is wordValue's.
		return 0
	}
	if kind == "cookie" && strings.IndexByte(v, '=') > 0 {
		// Cookie: a=b; c=d runs to the end of the line.
		ve = sc.lineEnd(start, "")
		v = s[start:ve]
	}
	if v == "" || (s[start] != '$' && skipValue(v)) || nullish(v) || identWithKeyword(v) || !hasAlnum(v) {
		return 0
	}
	if kind == "authorization" && start == k && isScheme(v) {
		return 0 // a lone "Bearer"
	}
	if ve < len(s) && ((s[ve] == '(' && s[ve-1] != '$') || s[ve] == '[' || (spaced && (s[ve] == '<' || s[ve] == '>'))) {
		return 0 // a call, an index, a grammar (token = 1*<any CHAR>): code
	}
	if spaced && (dottedIdent(v) || strings.IndexByte(v, '[') >= 0) {
		return 0 // cfg.Password, os.environ, config["password"]
	}
	if spaced && numeric(v) {
		return 0 // TCPOPT_SIGNATURE = 0x1a, SYS_MEMFD_SECRET = 447
	}
	if sep == '=' && spaced && letters(v) {
		return 0 // state.secret = psk: a variable; a password has a digit more often than not
	}
	if sep == ':' {
		n := skipBlank(s, ve)
		if stopword(v) || (letters(v) && n > ve && n < len(s) && isLetter(s[n])) {
			return 0 // prose: "Token: the unit a model reads.", "token: creating file"
		}
		if letters(v) && n < len(s) && strings.IndexByte(",;)}", s[n]) >= 0 {
			return 0 // Signature: algorithmIdentifier, in a struct literal
		}
	}
	return sc.emit(start, ve, kind)
}

// valueEnd returns where the unquoted value at s[start] ends: at a byte
// that ends a value (valueStop), not escaped (wordEscape: S3cret\ pass is
// one word). An expansion ${…}, a command substitution $(…) and a command
// in backquotes followed by more of the word are part of it, as they are
// of a shell word (Xk93${X}mz, abc$(cat x)def, abc`cat x`def), each when
// it closes within maxDefault bytes (expansionEnd).
//
// A scan from inside the stretch of the last one ends at the same place,
// and is not made again (memo.value), unless it starts right after a
// backslash, which may have escaped its byte, or inside an expansion that
// scan stepped over (memo.steps): from there it ends at the expansion's
// end at the latest, and reads no further.
func (sc *scanner) valueEnd(start int) int {
	s, m := sc.s, &sc.m
	c := &m.value
	if c.covers(start) && (start == c.from || s[start-1] != '\\') {
		if in, ok := m.steps.inside(start); ok {
			return wordEnd(s, start, in.to, nil)
		}
		return c.to
	}
	m.steps.reset()
	*c = span{start, wordEnd(s, start, len(s), &m.steps), true}
	return c.to
}

// wordEnd is valueEnd's scan from s[i], up to limit at most; it appends
// the expansions it steps over to steps, if not nil.
func wordEnd(s string, i, limit int, steps *stepped) int {
	for i < limit {
		c := s[i]
		if c == '$' || c == '`' {
			if e := expansionEnd(s, i); e > 0 {
				if steps != nil {
					steps.add(span{i, e, true})
				}
				i = min(e, limit)
				continue
			}
		}
		if !valueStop(c) {
			i++
			continue
		}
		n := 0
		if c == '\\' {
			n = wordEscape(s, i)
		}
		if n == 0 {
			break
		}
		i += n
	}
	return i
}

// expansionEnd returns the index after the expansion that starts at s[i]
// when it is part of a word: ${…} and $(…) closing within maxDefault
// bytes, or a command in backquotes that does within a line and is
// followed by more of the word (abc`cat x`def: a backquote is also a
// quote, and a closing one, in `token=abc` + `x` of JavaScript, stands
// before a blank or punctuation). It returns 0 otherwise.
func expansionEnd(s string, i int) int {
	if expansionAt(s, i) {
		return braceEnd(s, i+1, maxDefault)
	}
	if s[i] != '`' || i+1 >= len(s) || isBlank(s[i+1]) {
		return 0
	}
	e := indexWithin(s, i+1, "`", maxDefault)
	if e < 0 || e+1 >= len(s) || valueStop(s[e+1]) || strings.IndexByte(s[i+1:e], '\n') >= 0 {
		return 0
	}
	return e + 1
}

// wordDone reports whether a word ends at s[i], in quotes q or none.
func wordDone(s string, i int, q string) bool {
	if q != "" {
		return hasAt(s, i, q)
	}
	return i == len(s) || valueStop(s[i])
}

// expansionAt reports whether s[i] starts a parameter expansion ${…} or a
// command substitution $(…).
func expansionAt(s string, i int) bool {
	return s[i] == '$' && i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '(')
}

// textAfterExpansions reports whether the value s[start:end], which starts
// with a '$', is a word of text after its leading expansions
// (${VAULT_PW}Xk93, ${A:-x}y) rather than a reference: expansions alone,
// a variable ($TOKEN), or a path under one (${HOME}/.pw).
func textAfterExpansions(s string, start, end int) bool {
	i := start
	for i < end && expansionAt(s, i) {
		e := braceEnd(s, i+1, maxDefault)
		if e == 0 || e > end {
			return false
		}
		i = e
	}
	return i > start && i < end && s[i] != '/' && hasAlnum(s[i:end])
}

// wordValue redacts the word s[ws:we] of a parameter expansion
// (defaultWord) as value reads a value that stands there alone, quoted
// when it is. A word of several, ${PASS:-two words}, is one to the shell:
// it is read as a quoted value, a passphrase (or a message, which literal
// does not take for a token). A word that mixes text and expansions
// (Xk93${B}mz, x$(id -u), ${VAULT_PW}x) is one too, which value reads
// whole, and so is text after leading expansions, which value leaves
// before the brace that ends the word (see textAfterExpansions). It
// returns the index after the expansion's brace when it redacted the
// whole word, so that the expansion is read whole.
func (sc *scanner) wordValue(ws, we int, sep byte, kind string, spaced bool) int {
	var end int
	switch w := sc.s[ws:we]; {
	case blankWords(w):
		end = sc.literal(ws, we, kind, "")
	case w != "" && expansionAt(w, 0) && textAfterExpansions(sc.s, ws, we):
		end = sc.emit(ws, we, kind)
	default:
		end = sc.value(ws, sep, kind, spaced, false, false, "")
	}
	if end > 0 && end <= we && (end == we || sc.s[end:we] == quoteAt(sc.s, ws)) {
		end = we + 1
	}
	return end
}

// blankWords reports whether w is words separated by blanks, with nothing
// in it that the shell reads otherwise: a quote, an expansion, an escape,
// a brace, a line break.
func blankWords(w string) bool {
	blank := false
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c == ' ' || c == '\t':
			blank = true
		case c < ' ' || c == 0x7f || isQuote(c) || c == '$' || c == '\\' || c == '{' || c == '}':
			return false
		}
	}
	return blank
}

// paramDefault redacts the word of the expansion ${NAME<op>word} at s[k]
// (paramWord) when NAME names a secret (paramKind): as NAME=word would be
// (${DB_PASSWORD:-…}, ${PASS-…}, : "${API_TOKEN:=…}"), for every operator.
// The word of ${NAME:?word} is the message the shell prints when NAME is
// not set, and a message reads as one: words with a blank between, or a
// word of letters (unset, required); another word is a value written in
// the wrong place (${DB_PASSWORD:?S3cret}) and redacted.
func (sc *scanner) paramDefault(k int) int {
	s := sc.s
	// The name first: most parameters name no secret, and their braces
	// need not be read.
	kind := paramKind(s[k+2 : k+2+paramName(s[k+2:])])
	if kind == "" || kind == "signature" {
		return 0 // a signature is a function's more often than not
	}
	ws, we, op, closed := paramWord(s, k, maxDefault)
	if op == 0 {
		return 0
	}
	if op == '?' && strings.ContainsAny(s[ws:we], " \t") {
		return 0 // a message
	}
	if !closed {
		return sc.longWord(k, ws, we, kind)
	}
	// spaced for ?: a word of letters is a message's word.
	return sc.wordValue(ws, we, '=', kind, op == '?')
}

// paramKind is nameKind for the name of a shell parameter, where a bare
// PASS (or pass) names a password: go test's "--- PASS" is no parameter.
func paramKind(name string) string {
	if strings.EqualFold(name, "pass") {
		return "password"
	}
	return nameKind(name)
}

// longWord redacts the word at s[ws:] of the expansion at s[k] whose
// braces do not close within maxDefault bytes (paramWord; we is where the
// bound ends), where a value of kind is read: up to its closing brace, or
// the end of the line when it has none there. The search goes past the
// bound only once the word is to be redacted, and the main loop goes on
// after it, so that braces that never close cost a scan of the rest of the
// text once, not once each. A word that is a reference ($(…), ${…}), a
// token or a PEM block (which the main loop reads), or already redacted,
// is left.
func (sc *scanner) longWord(k, ws, we int, kind string) int {
	s := sc.s
	if ws >= we || skipLead(s[ws]) || hasAt(s, ws, markerPrefix) || startsSecret(&sc.m, s, ws+len(quoteAt(s, ws))) {
		return 0
	}
	e, open := k+1, 0
	for ; e < len(s); e++ {
		c := s[e]
		if c == '\n' || c == '\r' || (c == '\\' && e+1 < len(s) && escapeLetter(s[e+1])) {
			break // a line break, also as JSON text writes it
		}
		if c == '{' {
			open++
		} else if c == '}' {
			if open--; open == 0 {
				break
			}
		}
	}
	return sc.emit(ws, e, kind)
}

// literal redacts s[cs:ce], a quoted (or header) value. q is the quote that
// closes it, if any: a credential that stops short of it (Digest, AWS4
// signatures) extends to it.
func (sc *scanner) literal(cs, ce int, kind, q string) int {
	s := sc.s
	v := s[cs:ce]
	if strings.TrimSpace(v) == "" || skipValue(v) || !hasAlnum(v) {
		return 0
	}
	if kind == "secret" && strings.IndexByte(v, ' ') >= 0 {
		return 0 // Token: "// indirect": tokens and keys have no spaces, passphrases may
	}
	if kind == "authorization" {
		// Keep the scheme: "Bearer [REDACTED:authorization]".
		w := sc.m.run(s, cs, cTok)
		if w < ce && s[w] == ' ' {
			k := w
			for k < ce && s[k] == ' ' {
				k++
			}
			if k == ce {
				return 0
			}
			if ws, we := defaultWord(s, k); we > 0 && we < ce {
				return sc.wordValue(ws, we, ':', kind, false) // Bearer ${TOKEN:-…}
			}
			if skipValue(s[k:ce]) {
				return 0
			}
			cs = k
		} else if w == ce && isScheme(v) {
			return 0 // a lone "Bearer"
		}
		if q == "" && identWithKeyword(s[cs:ce]) {
			return 0 // authorization: authHeader
		}
	}
	return sc.emit(cs, ce, kind)
}

// lineEnd returns where an unquoted header value starting at k ends: at the
// quote q that opened the header argument, or at the end of the line (a real
// one or a JSON-escaped "\n").
func (sc *scanner) lineEnd(k int, q string) int {
	s := sc.s
	c := &sc.m.line[quoteIndex(q)]
	if !c.covers(k) {
		e := k
		for e < len(s) {
			b := s[e]
			if b == '\n' || b == '\r' || (q == "" && (b == '\\' || isQuote(b))) || (q != "" && hasAt(s, e, q)) {
				break
			}
			e++
		}
		*c = span{k, e, true}
	}
	e := c.to
	// Trailing blanks are not part of the value.
	for e > k && isBlank(s[e-1]) {
		e--
	}
	return e
}

// closeQuote returns the index of the quote q closing a literal whose content
// starts at cs, or the end of the line (or text) when it is not closed there.
func (sc *scanner) closeQuote(cs int, q string) int {
	s := sc.s
	c := &sc.m.quote[quoteIndex(q)]
	// A scan from inside a stretch already scanned ends at the same place,
	// unless it starts right after a backslash, where escapes pair up
	// differently.
	if c.covers(cs) && (cs == c.from || s[cs-1] != '\\') {
		return c.to
	}
	e := cs
	for ; e < len(s); e++ {
		b := s[e]
		if b == '\n' || b == '\r' || hasAt(s, e, q) {
			break
		}
		if b == '\\' && q[0] != '\\' && q != "'" {
			e++ // an escaped character inside "…"
		} else if b == '\\' && q[0] == '\\' && e+1 < len(s) && s[e+1] != q[1] {
			e++ // an escape pair inside \"…\" (JSON-encoded text)
		}
	}
	if e > len(s) {
		e = len(s) // a trailing lone backslash
	}
	*c = span{cs, e, true}
	return e
}

// quoteIndex numbers the quotes quoteAt returns, "" last.
func quoteIndex(q string) int {
	switch q {
	case `"`:
		return 0
	case "'":
		return 1
	case "`":
		return 2
	case `\"`:
		return 3
	case `\'`:
		return 4
	}
	return 5
}

// nameKind returns the kind of secret that a name (of a variable, flag, key,
// header) holds, or "". It compares the name's last letters and digits,
// upper-cased and without separators, so that DB_PASSWORD, dbPassword,
// db-password and db.password are all the same.
func nameKind(name string) string {
	// rev holds the last significant bytes of name, reversed and upper-cased.
	var rev [16]byte
	var pos [16]int
	n := 0
	k := len(name) - 1
	for ; k >= 0 && n < len(rev); k-- {
		c := name[k]
		switch {
		case c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_' || c == '-' || c == '.':
			continue
		default:
			k = -1 // a name is made of cName bytes; stop at anything else
			continue
		}
		rev[n], pos[n] = c, k
		n++
	}
	r := rev[:n]
	switch {
	case revHas(r, "YEKSSECCATERCES"):
		return "aws_secret_access_key"
	case revHas(r, "DROWSSAP"), revHas(r, "DWSSAP"), revHas(r, "ESARHPSSAP"):
		return "password"
	case revHas(r, "SSAP"):
		// PASS only as the last word of a longer name: DB_PASS, dbPass,
		// --pass; not bypass or compass, nor a bare PASS (go test's
		// "--- PASS: TestX").
		p := pos[3]
		if p > 0 && (strings.IndexByte("_-.", name[p-1]) >= 0 || (isLower(name[p-1]) && !isLower(name[p]))) {
			return "password"
		}
	case revHas(r, "NOITAZIROHTUA"):
		return "authorization"
	case revHas(r, "EIKOOC"):
		return "cookie"
	case revHas(r, "ERUTANGIS"):
		return "signature"
	case revHas(r, "TERCES"), revHas(r, "NEKOT"), revHas(r, "YEKIPA"),
		revHas(r, "YEKTERCES"), revHas(r, "YEKETAVIRP"), revHas(r, "YEKTNUOCCA"),
		revHas(r, "YEKSSECCADERAHS"), revHas(r, "YEKNOITPYRCNE"), revHas(r, "YEKGNINGIS"),
		revHas(r, "YEKRETSAM"):
		return "secret"
	case revHas(r, "YEKPPA") && isUpper(name[pos[0]]) && isUpper(name[pos[5]]):
		// Laravel's APP_KEY, its encryption key; appKey in code is
		// more often an app's identifier.
		return "secret"
	}
	return ""
}

func revHas(r []byte, p string) bool {
	if len(r) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		if r[i] != p[i] {
			return false
		}
	}
	return true
}

// keywordEnd reports whether c can end a secret-bearing name (PASSWORD,
// PASS, PASSPHRASE, SECRET, TOKEN, API_KEY, SIGNATURE, AUTHORIZATION, COOKIE).
func keywordEnd(c byte) bool {
	switch c | 0x20 {
	case 'd', 's', 'e', 't', 'n', 'y':
		return true
	}
	return false
}

// skipValue reports whether a value is a reference or a placeholder rather
// than a secret: $VAR, ${VAR}, $(cmd), {{ tmpl }}, %s, <your-token>, ***,
// an already redacted value, or a name behind a sigil (see sigilRef).
func skipValue(v string) bool {
	return v == "" || skipLead(v[0]) || strings.Trim(v, "*.x") == "" || (sigil(v[0]) && sigilRef(v, false))
}

// skipString is skipValue for the whole of a decoded JSON string under a
// key that names a secret (see sigilRef).
func skipString(v string) bool {
	return v == "" || skipLead(v[0]) || strings.Trim(v, "*.x") == "" || (sigil(v[0]) && sigilRef(v, true))
}

// skipLead reports whether a value starting with c is a reference, a
// placeholder or code rather than a secret, whatever follows.
func skipLead(c byte) bool {
	switch c {
	case '$', '%', '{', '<', '[', '(', '|', '>', '?', ':', '`', '\\',
		',', ')', ';', ']', '}':
		return true
	}
	return false
}

// sigil reports whether a value starting with c may be a reference or code
// (a YAML tag, anchor or alias, a comment, an instance variable, a pointer,
// a concatenation after a closing quote) or a secret that happens to start
// with punctuation: sigilRef decides which from what follows.
func sigil(c byte) bool {
	switch c {
	case '!', '#', '@', '&', '*', '+', '~':
		return true
	}
	return false
}

// sigilRef reports whether v, which starts with a sigil, is a reference or
// code: when nothing or punctuation follows the sigil ("# comment",
// "#{interp}", "!!binary", "~/.pgpass"), or a name (!secret db_password,
// !vault, *default, &anchor, @token, "password="+password): nameLike on the
// word that follows. A word that mixes digits into its letters is a secret:
// !Xk93mzPq77. A '#' before a hex colour ("#f8f8f2" in a style sheet) is a
// colour.
//
// whole says v is the whole of a decoded JSON string under a key that names
// a secret, which is text, not YAML or code: there only a sigil alone or
// before punctuation ("#{…}", "# …") and @name (a SQL parameter) stay
// references.
func sigilRef(v string, whole bool) bool {
	rest := v[1:]
	if rest == "" || class[rest[0]]&cAlnum == 0 {
		return true
	}
	switch {
	case whole && v[0] != '@':
		return false
	case v[0] == '#' && hexColour(rest):
		return true
	}
	w := 0
	for w < len(rest) && (class[rest[w]]&cWord != 0 || rest[w] == '.' || rest[w] == '-') {
		w++
	}
	return nameLike(rest[:w])
}

// hexColour reports whether v is the hex digits of a CSS colour (#fff,
// #f8f8f2, #ffffff80).
func hexColour(v string) bool {
	switch len(v) {
	case 3, 4, 6, 8:
	default:
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i] | 0x20; class[c]&cHex == 0 {
			return false
		}
	}
	return true
}

// skipCredential is skipValue for the password of a URL or of user:password,
// which may well start with a percent-escape.
func skipCredential(v string) bool {
	switch v[0] {
	case '$', '{', '<', '[':
		return true
	}
	return v == "%s" || strings.Trim(v, "*") == ""
}

// nullish reports whether an unquoted value is a literal or a type name of
// some language rather than a secret.
func nullish(v string) bool {
	if len(v) > 9 {
		return false
	}
	var b [9]byte
	for i := 0; i < len(v); i++ {
		b[i] = v[i] | 0x20
	}
	switch string(b[:len(v)]) {
	case "null", "nil", "none", "true", "false", "undefined", "string", "str", "number", "int",
		"bool", "boolean", "bytes", "any", "object", "required", "optional", "secret", "yes", "no", "iota":
		return true
	}
	return false
}

// identWithKeyword reports whether v is an identifier (or a.b selector)
// that names a secret rather than being one: token=token,
// password=get_password, this._password=s._password,
// API_KEY=your_api_key_here. A value that only contains a keyword, such as
// Passw0rd123, mypass2024 or tokenXk93mzPq77abc, is not a name (nameLike):
// many real passwords and tokens contain pass, key or token.
func identWithKeyword(v string) bool {
	for i := 0; i < len(v); i++ {
		if class[v[i]]&cWord == 0 && v[i] != '.' {
			return false
		}
	}
	for _, w := range [...]string{"pass", "secret", "token", "key", "auth", "cookie", "cred", "sig"} {
		if containsFold(v, w) {
			return nameLike(v)
		}
	}
	return false
}

// nameLike reports whether v reads as a name in code or configuration:
// words of letters, joined by _ . - or written in camelCase, each of which
// may end in one digit or in a width (token2, oauth2Token, sha256_sig,
// base64Key, key_1). A chosen or random string mixes digits into its words
// or ends in several: Passw0rd123, SuperSecretPw99, mypass2024,
// tokenXk93mzPq77abc, key_9f8e7d6c5b4a, f8f8f2.
func nameLike(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); {
		if c := v[i]; c == '_' || c == '.' || c == '-' {
			i++
			continue
		}
		ws := i
		for i < len(v) && isLetter(v[i]) && (i == ws || !isUpper(v[i]) || !isLower(v[i-1])) {
			i++ // a camelCase word ends before the upper-case letter that follows a lower-case one
		}
		ds := i
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
		}
		if i == ws {
			return false // neither a letter, a digit nor a separator
		}
		if i-ds > 1 && !width(v[ds:i]) {
			return false
		}
		if i > ds && i < len(v) && isLower(v[i]) {
			return false // a digit inside a word: Passw0rd, Xk93mz
		}
	}
	return true
}

// width reports whether the digits d are a size that names carry: sha256,
// base64, int32, x509, ed25519.
func width(d string) bool {
	switch d {
	case "16", "32", "64", "128", "224", "256", "384", "512", "1024", "2048", "4096", "509", "25519":
		return true
	}
	return false
}

// dottedIdent reports whether v is a.b(.c…) made of identifiers.
func dottedIdent(v string) bool {
	dots := 0
	start := true
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '.':
			if start {
				return false
			}
			dots++
			start = true
		case class[c]&cWord != 0:
			if start && c >= '0' && c <= '9' {
				return false
			}
			start = false
		default:
			return false
		}
	}
	return dots > 0 && !start
}

// stopword reports whether v is a common English word that starts a sentence
// after "Password:" or "Token:" in prose rather than being the secret.
func stopword(v string) bool {
	if len(v) > 6 {
		return false
	}
	var b [6]byte
	for i := 0; i < len(v); i++ {
		b[i] = v[i] | 0x20
	}
	switch string(b[:len(v)]) {
	case "a", "an", "the", "is", "are", "was", "be", "to", "of", "and", "or", "in", "on", "for", "if",
		"it", "its", "this", "that", "must", "should", "will", "can", "not", "see", "use", "set", "you",
		"your", "we", "our", "my", "no", "yes", "none", "n/a", "tbd", "todo", "empty", "same":
		return true
	}
	return false
}

// isScheme reports whether w is an HTTP authentication scheme name.
func isScheme(w string) bool {
	switch strings.ToLower(w) {
	case "bearer", "basic", "token", "digest", "negotiate", "ntlm", "bot", "apikey", "key":
		return true
	}
	return false
}

// valueStop reports whether c ends an unquoted value.
func valueStop(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '"', '\'', '`', '\\', ';', '&', '|', '<', '>', '(', ')', ',', '}', ']':
		return true
	}
	return false
}

// quoteAt returns the quote that starts at s[k] ("\"", "'", "`", or a
// JSON-escaped \" or \') or "".
func quoteAt(s string, k int) string {
	if k >= len(s) {
		return ""
	}
	if isQuote(s[k]) {
		return s[k : k+1]
	}
	if s[k] == '\\' && k+1 < len(s) && (s[k+1] == '"' || s[k+1] == '\'') {
		return s[k : k+2]
	}
	return ""
}

// quoteBefore returns the quote that ends just before s[b], or "".
func quoteBefore(s string, b int) string {
	if b == 0 || (s[b-1] != '"' && s[b-1] != '\'') {
		return ""
	}
	if b > 1 && s[b-2] == '\\' {
		return s[b-2 : b]
	}
	return s[b-1 : b]
}

func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }
func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func skipBlank(s string, k int) int {
	for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	return k
}

// run returns the end of the run of bytes of class set starting at s[i].
func run(s string, i int, set uint16) int {
	for i < len(s) && class[s[i]]&set != 0 {
		i++
	}
	return i
}

func hasAt(s string, i int, p string) bool {
	return i >= 0 && len(s)-i >= len(p) && s[i:i+len(p)] == p
}

// hasFoldAt is hasAt ignoring the case of ASCII letters; p is lower-case.
func hasFoldAt(s string, i int, p string) bool {
	if i < 0 || len(s)-i < len(p) {
		return false
	}
	for k := 0; k < len(p); k++ {
		c := s[i+k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != p[k] {
			return false
		}
	}
	return true
}

// containsFold reports whether s contains the lower-case ASCII word w,
// ignoring case.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if hasFoldAt(s, i, w) {
			return true
		}
	}
	return false
}

// indexWithin returns the index of p in s[from:from+limit], or -1.
func indexWithin(s string, from int, p string, limit int) int {
	if from > len(s) {
		return -1
	}
	end := len(s)
	if end-from > limit {
		end = from + limit
	}
	if k := strings.Index(s[from:end], p); k >= 0 {
		return from + k
	}
	return -1
}

func hasAlnum(v string) bool {
	for i := 0; i < len(v); i++ {
		if class[v[i]]&cAlnum != 0 {
			return true
		}
	}
	return false
}

// letters reports whether v is made of ASCII letters and '_' only.
func letters(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isLetter(c) && c != '_' {
			return false
		}
	}
	return v != ""
}

func isLetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

// numeric reports whether v is a number literal of some language: 447,
// 0x1a, 0o755, 1_000, 3.5.
func numeric(v string) bool {
	if len(v) > 1 && v[0] == '-' {
		v = v[1:]
	}
	if v == "" || v[0] < '0' || v[0] > '9' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if class[v[i]]&cHex == 0 && strings.IndexByte("xXoObB_.ABCDEF", v[i]) < 0 {
			return false
		}
	}
	return true
}

func mixedCase(v string) bool {
	var up, low, dig bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		up = up || ('A' <= c && c <= 'Z')
		low = low || ('a' <= c && c <= 'z')
		dig = dig || ('0' <= c && c <= '9')
	}
	return up && low && dig
}

func allDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return v != ""
}
