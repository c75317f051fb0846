package install

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// InstalledService is what ReadServiceUnit reads of a unit ServiceUnit or
// ForwarderUnit wrote.
type InstalledService struct {
	Binary  string            // the program it runs
	Command string            // its one argument: serve or forward
	Env     map[string]string // the service's environment, never nil
}

// MaxServiceUnitSize bounds what ReadServiceUnit reads: a unit hookwatch
// writes is a few hundred bytes and its settings.
const MaxServiceUnitSize = 64 << 10

// ReadServiceUnit reads back content, the file at the path ServiceUnit
// returns for goos: the binary it runs, with which command, in which
// environment. It reads what ServiceUnit and ForwarderUnit write, their
// Environment lines (EnvironmentVariables entries) as a hand may have
// added, changed or removed them, and nothing else: it returns an error
// for a file without their "Written by hookwatch service install"
// comment, larger than MaxServiceUnitSize, with a key they do not write, a
// program other than "<binary> serve|forward", or a value it cannot read
// as the service manager would (a systemd specifier such as %h, a binary
// property list). Writing such a unit over would lose what it holds.
// The values of the other keys they write are not returned: they are
// ServiceUnit's to write.
func ReadServiceUnit(goos string, content []byte) (InstalledService, error) {
	if len(content) > MaxServiceUnitSize {
		return InstalledService{}, fmt.Errorf("larger than %d KiB: not a unit hookwatch service install writes", MaxServiceUnitSize>>10)
	}
	switch goos {
	case "linux":
		return readSystemdUnit(content)
	case "darwin":
		return readLaunchdPlist(content)
	}
	return InstalledService{}, fmt.Errorf("no service manager support for %s", goos)
}

// systemdKeys are the keys systemdUnit writes, by section.
var systemdKeys = map[string][]string{
	"Unit":    {"Description", "Documentation"},
	"Service": {"Type", "ExecStart", "Environment", "Restart", "RestartSec"},
	"Install": {"WantedBy"},
}

func readSystemdUnit(content []byte) (InstalledService, error) {
	s := InstalledService{Env: map[string]string{}}
	lines := strings.Split(string(content), "\n")
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "# "+serviceMark) }) {
		return s, errors.New("not written by hookwatch service install (it lacks the comment \"# " + serviceMark + ".\")")
	}
	section, exec := "", false
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		// systemd joins a line that ends in a backslash to the next;
		// systemdUnit never writes one.
		if n := len(line) - len(strings.TrimRight(line, `\`)); n%2 == 1 {
			return s, fmt.Errorf("line %d: a line continued on the next, which service install does not write", i+1)
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = line[1 : len(line)-1]
			if _, ok := systemdKeys[section]; !ok {
				return s, fmt.Errorf("line %d: section %s, which service install does not write", i+1, line)
			}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || section == "" || !slices.Contains(systemdKeys[section], k) {
			return s, fmt.Errorf("line %d: %q is not a setting service install writes", i+1, line)
		}
		switch k {
		case "ExecStart":
			if exec {
				return s, fmt.Errorf("line %d: a second ExecStart", i+1)
			}
			exec = true
			words, err := systemdWords(v, true)
			if err != nil {
				return s, fmt.Errorf("line %d: ExecStart: %w", i+1, err)
			}
			if err := s.setProgram(words); err != nil {
				return s, fmt.Errorf("line %d: ExecStart: %w", i+1, err)
			}
		case "Environment":
			if v == "" {
				// An empty assignment resets the list, for systemd.
				clear(s.Env)
				continue
			}
			words, err := systemdWords(v, false)
			if err != nil {
				return s, fmt.Errorf("line %d: Environment: %w", i+1, err)
			}
			for _, w := range words {
				name, val, ok := strings.Cut(w, "=")
				if !ok || !validEnvName(name) {
					return s, fmt.Errorf("line %d: Environment: %q is not NAME=value", i+1, w)
				}
				s.Env[name] = val
			}
		}
	}
	if !exec {
		return s, errors.New("no ExecStart")
	}
	return s, nil
}

// systemdEscapes are the C escapes systemd unescapes in a quoted word,
// but \x, \u and octal ones, which systemdQuote never writes.
var systemdEscapes = map[byte]byte{'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v', 's': ' ', '\\': '\\', '"': '"', '\'': '\''}

// systemdWords splits s, the value of a unit file's key, into words the
// way systemd does, undoing systemdQuote: quotes, C escapes, "%%" for "%"
// and, in ExecStart (exec), "$$" for "$". A specifier other than %% or a
// variable expansion, whose value the service manager supplies, is an
// error: written back quoted, it would turn into a literal.
func systemdWords(s string, exec bool) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == 0 && (c == ' ' || c == '\t'):
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
			continue
		case quote == 0 && (c == '"' || c == '\''):
			quote, inWord = c, true
			continue
		case quote != 0 && c == quote:
			quote = 0
			continue
		case c == '\\':
			if i+1 == len(s) {
				return nil, errors.New("it ends in a backslash")
			}
			i++
			e, ok := systemdEscapes[s[i]]
			if !ok {
				return nil, fmt.Errorf("the escape \\%c, which service install does not write", s[i])
			}
			c = e
		case c == '%':
			if i+1 == len(s) || s[i+1] != '%' {
				return nil, fmt.Errorf("a specifier (%s), which service install does not write", s[i:min(i+2, len(s))])
			}
			i++
		case exec && c == '$':
			if i+1 == len(s) || s[i+1] != '$' {
				return nil, errors.New("a variable expansion ($), which service install does not write")
			}
			i++
		}
		w.WriteByte(c)
		inWord = true
	}
	if quote != 0 {
		return nil, errors.New("an unterminated quote")
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// setProgram sets s's Binary and Command from the program a unit runs,
// which must be "<absolute path> serve|forward".
func (s *InstalledService) setProgram(args []string) error {
	if len(args) != 2 || !strings.HasPrefix(args[0], "/") || (args[1] != "serve" && args[1] != "forward") {
		return fmt.Errorf("it runs %s, not <binary> serve or <binary> forward", strconv.Quote(strings.Join(args, " ")))
	}
	s.Binary, s.Command = args[0], args[1]
	return nil
}

// launchdKeys are the keys of the dictionary launchdPlist writes.
var launchdKeys = []string{"Label", "ProgramArguments", "EnvironmentVariables", "RunAtLoad", "KeepAlive", "ProcessType", "StandardOutPath", "StandardErrorPath"}

func readLaunchdPlist(content []byte) (InstalledService, error) {
	s := InstalledService{Env: map[string]string{}}
	if bytes.HasPrefix(content, []byte("bplist")) {
		return s, errors.New("a binary property list, which service install does not write (plutil -convert xml1 makes it XML again)")
	}
	d := xml.NewDecoder(bytes.NewReader(content))
	marked := false
	for {
		tok, err := d.Token()
		if err != nil {
			return s, fmt.Errorf("no <plist> element: %w", err)
		}
		if c, ok := tok.(xml.Comment); ok && strings.HasPrefix(strings.TrimSpace(string(c)), serviceMark) {
			marked = true
		}
		if e, ok := tok.(xml.StartElement); ok {
			if e.Name.Local != "plist" {
				return s, fmt.Errorf("<%s>, not <plist>", e.Name.Local)
			}
			break
		}
	}
	if !marked {
		return s, errors.New("not written by hookwatch service install (it lacks the comment <!-- " + serviceMark + ". -->)")
	}
	if err := plistExpect(d, "dict"); err != nil {
		return s, err
	}
	program := false
	for {
		key, err := plistKey(d)
		if err != nil {
			return s, err
		}
		if key == "" {
			break
		}
		if !slices.Contains(launchdKeys, key) {
			return s, fmt.Errorf("the key %s, which service install does not write", key)
		}
		switch key {
		case "ProgramArguments":
			if err := plistExpect(d, "array"); err != nil {
				return s, fmt.Errorf("ProgramArguments: %w", err)
			}
			var args []string
			for {
				e, err := plistNext(d)
				if err != nil {
					return s, fmt.Errorf("ProgramArguments: %w", err)
				}
				if e == nil {
					break
				}
				v, err := plistString(d, *e)
				if err != nil {
					return s, fmt.Errorf("ProgramArguments: %w", err)
				}
				args = append(args, v)
			}
			if err := s.setProgram(args); err != nil {
				return s, fmt.Errorf("ProgramArguments: %w", err)
			}
			program = true
		case "EnvironmentVariables":
			if err := plistExpect(d, "dict"); err != nil {
				return s, fmt.Errorf("EnvironmentVariables: %w", err)
			}
			for {
				name, err := plistKey(d)
				if err != nil {
					return s, fmt.Errorf("EnvironmentVariables: %w", err)
				}
				if name == "" {
					break
				}
				if !validEnvName(name) {
					return s, fmt.Errorf("EnvironmentVariables: %q is not a variable name", name)
				}
				e, err := plistValue(d)
				if err != nil {
					return s, fmt.Errorf("EnvironmentVariables: %w", err)
				}
				if s.Env[name], err = plistString(d, *e); err != nil {
					return s, fmt.Errorf("EnvironmentVariables: %s: %w", name, err)
				}
			}
		default:
			// Label, RunAtLoad, KeepAlive, ProcessType and the log's
			// paths: ServiceUnit's to write whatever they hold.
			_, err := plistValue(d)
			if err == nil {
				err = d.Skip()
			}
			if err != nil {
				return s, fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	if !program {
		return s, errors.New("no ProgramArguments")
	}
	if e, err := plistNext(d); err != nil {
		return s, err
	} else if e != nil {
		return s, fmt.Errorf("<%s> after the <dict>", e.Name.Local)
	}
	return s, nil
}

// plistNext returns the next element of the one the decoder is in, nil
// at its end. Text between elements must be blank.
func plistNext(d *xml.Decoder) (*xml.StartElement, error) {
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return &t, nil
		case xml.EndElement:
			return nil, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return nil, fmt.Errorf("text %q between elements", bytes.TrimSpace(t))
			}
		}
	}
}

// plistValue reads the element that follows a <key>: its value, which
// must be there.
func plistValue(d *xml.Decoder) (*xml.StartElement, error) {
	e, err := plistNext(d)
	if err == nil && e == nil {
		err = errors.New("a key without a value")
	}
	return e, err
}

// plistExpect reads the next element, which must be a <name>.
func plistExpect(d *xml.Decoder, name string) error {
	e, err := plistNext(d)
	if err != nil {
		return err
	}
	if e == nil || e.Name.Local != name {
		return fmt.Errorf("want a <%s>", name)
	}
	return nil
}

// plistKey reads the next <key> of a <dict>, "" at its end.
func plistKey(d *xml.Decoder) (string, error) {
	e, err := plistNext(d)
	if err != nil || e == nil {
		return "", err
	}
	if e.Name.Local != "key" {
		return "", fmt.Errorf("<%s> where a <key> belongs", e.Name.Local)
	}
	k, err := plistText(d)
	if err == nil && k == "" {
		err = errors.New("an empty <key>")
	}
	return k, err
}

// plistString reads the value of e, which must be a <string>.
func plistString(d *xml.Decoder, e xml.StartElement) (string, error) {
	if e.Name.Local != "string" {
		return "", fmt.Errorf("<%s>, not a <string>", e.Name.Local)
	}
	return plistText(d)
}

// plistText reads the text of the element just started, up to its end.
func plistText(d *xml.Decoder) (string, error) {
	var b strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return "", io.ErrUnexpectedEOF
		}
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.EndElement:
			return b.String(), nil
		case xml.StartElement:
			return "", fmt.Errorf("<%s> inside a text", t.Name.Local)
		}
	}
}
