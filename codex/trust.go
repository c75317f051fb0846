package codex

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"
)

// HookKey is the key Codex names a hook handler by in hooks/list and in
// config.toml's [hooks.state."<key>"]: the hooks file, the event in snake
// case, the group's index and the handler's index in it.
func HookKey(path, event string, group, handler int) string {
	return path + ":" + snake(event) + ":" + strconv.Itoa(group) + ":" + strconv.Itoa(handler)
}

// snake writes an event name in snake case: PreToolUse → pre_tool_use.
func snake(name string) string {
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// trustHeader is the first line of the table TrustBlock writes for key.
func trustHeader(key string) string { return "[hooks.state." + tomlString(key) + "]\n" }

// SetTrust returns config (the bytes of config.toml) with key trusted at
// hash: a table written by TrustBlock for the same key is replaced, the
// new one appended. A table for key in any other shape is the user's and
// is left alone; ok is false then, as Codex would refuse a file defining
// the table twice.
func SetTrust(config []byte, key, hash string) (out []byte, ok bool) {
	config, _ = RemoveTrust(config, key)
	if bytes.Contains(config, []byte(trustHeader(key))) {
		return config, false
	}
	return append(config, TrustBlock(Hook{Key: key, CurrentHash: hash})...), true
}

// RemoveTrust returns config without the table TrustBlock wrote for key,
// byte for byte as it was before the table was appended, and whether
// there was one. A table for key that holds more than trusted_hash, or
// does not follow a newline, is the user's and is left alone.
func RemoveTrust(config []byte, key string) ([]byte, bool) {
	head := "\n" + trustHeader(key) + "trusted_hash = "
	i := bytes.Index(config, []byte(head))
	if i < 0 {
		return config, false
	}
	rest := config[i+len(head):]
	nl := bytes.IndexByte(rest, '\n')
	if nl < 0 {
		return config, false
	}
	end := i + len(head) + nl + 1
	// The table ends here unless more keys follow before the next table.
	if tail := config[end:]; len(bytes.TrimSpace(tail)) > 0 && !bytes.HasPrefix(bytes.TrimLeft(tail, " \t\r\n"), []byte("[")) {
		return config, false
	}
	out := append(append([]byte(nil), config[:i]...), config[end:]...)
	return out, true
}

// projectTrustMark precedes the table SetProjectTrust writes, so that
// RemoveProjectTrust takes out only a table hookwatch wrote, never the
// user's own trust of the project.
const projectTrustMark = "# trusted by hookwatch install --codex --trust-project\n"

// projectHeader is the first line of project dir's table in config.toml.
func projectHeader(dir string) string { return "[projects." + tomlString(dir) + "]\n" }

// projectTrustBlock is the table SetProjectTrust appends for dir.
func projectTrustBlock(dir string) string {
	return "\n" + projectTrustMark + projectHeader(dir) + "trust_level = \"trusted\"\n"
}

// SetProjectTrust returns config (the bytes of config.toml) with project
// dir trusted — [projects."<dir>"] trust_level = "trusted", what `codex
// exec --trust` records; Codex loads a project's .codex/ layer, its hooks
// included, only then. changed is false when config already has a table
// for dir: trusted or not, it is the user's and left alone (Codex would
// refuse a file defining it twice).
func SetProjectTrust(config []byte, dir string) (out []byte, changed bool) {
	if bytes.Contains(config, []byte(projectHeader(dir))) {
		return config, false
	}
	return append(config, projectTrustBlock(dir)...), true
}

// RemoveProjectTrust returns config without the table SetProjectTrust
// appended for dir, byte for byte as it was before, and whether there was
// one.
func RemoveProjectTrust(config []byte, dir string) ([]byte, bool) {
	block := []byte(projectTrustBlock(dir))
	i := bytes.Index(config, block)
	if i < 0 {
		return config, false
	}
	return append(append([]byte(nil), config[:i]...), config[i+len(block):]...), true
}
