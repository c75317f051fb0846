package policy

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/expr-lang/expr/ast"
)

// maxGlobAlternatives bounds the patterns a brace expansion yields
// ("{a,b}{c,d}" is 4), so that a pattern cannot make a condition slow.
const maxGlobAlternatives = 256

// errGlobTooMany reports a brace expansion beyond maxGlobAlternatives.
var errGlobTooMany = fmt.Errorf("more than %d alternatives", maxGlobAlternatives)

// compileGlob expands the braces of a glob pattern and checks the syntax
// of every alternative, so that a broken pattern is an error rather than a
// pattern that never matches.
func compileGlob(pattern string) ([]string, error) {
	alts, err := expandBraces(pattern)
	if err != nil {
		return nil, fmt.Errorf("glob pattern %q: %w", pattern, err)
	}
	for _, a := range alts {
		for _, seg := range strings.Split(a, "/") {
			if _, err := path.Match(seg, ""); err != nil {
				return nil, fmt.Errorf("glob pattern %q: %w", pattern, err)
			}
		}
	}
	return alts, nil
}

// expandBraces expands shell brace alternation: "*.{go,rs}" is "*.go" and
// "*.rs"; braces nest ("{a,b{c,d}}"). As in the shell, a brace without a
// comma at its level ("{x}") or without its pair is literal, and so is one
// escaped with a backslash or inside a bracket expression ("[{]").
func expandBraces(p string) ([]string, error) {
	open, end, commas := findBraces(p)
	if open < 0 {
		return []string{p}, nil
	}
	prefix, suffix := p[:open], p[end+1:]
	var parts []string
	from := open + 1
	for _, c := range commas {
		parts = append(parts, p[from:c])
		from = c + 1
	}
	parts = append(parts, p[from:end])
	rest, err := expandBraces(suffix)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, part := range parts {
		alts, err := expandBraces(part)
		if err != nil {
			return nil, err
		}
		for _, a := range alts {
			for _, r := range rest {
				if len(out) == maxGlobAlternatives {
					return nil, errGlobTooMany
				}
				out = append(out, prefix+a+r)
			}
		}
	}
	return out, nil
}

// findBraces returns the first brace group of p that alternates — its '{',
// its matching '}' and the commas at its level — or open -1 when there is
// none. Groups without a comma are literal and searched inside.
func findBraces(p string) (open, end int, commas []int) {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			i = skipBracket(p, i)
		case '{':
			if e, cs := matchBrace(p, i); e >= 0 && len(cs) > 0 {
				return i, e, cs
			}
		}
	}
	return -1, -1, nil
}

// matchBrace returns the '}' matching the '{' at p[i] and the commas at
// its level, or -1.
func matchBrace(p string, i int) (int, []int) {
	depth := 0
	var commas []int
	for j := i; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case '[':
			j = skipBracket(p, j)
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j, commas
			}
		case ',':
			if depth == 1 {
				commas = append(commas, j)
			}
		}
	}
	return -1, nil
}

// skipBracket returns the index of the ']' closing the bracket expression
// at p[i], or i when it does not close (then '[' is an error for
// path.Match, reported by compileGlob).
func skipBracket(p string, i int) int {
	j := i + 1
	if j < len(p) && p[j] == '^' {
		j++
	}
	if j < len(p) && p[j] == ']' {
		j++ // a ']' first is a member
	}
	for ; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case ']':
			return j
		}
	}
	return i
}

// globMatch matches name against a shell glob: '*', '?' and '[…]' within a
// path element, "**" for any number of elements, "{a,b}" alternation. A
// pattern without '/' is also tried against the last element of name, so
// "*.go" matches "/src/main.go". A relative pattern with a '/' is taken
// relative to dir when name is absolute ("src/**/*.go" in /proj matches
// /proj/src/main.go), except one that starts with "**", which matches at
// any depth anywhere ("**/.env"); dir "" leaves it relative. A malformed
// pattern is an error.
func globMatch(pattern, name, dir string) (bool, error) {
	alts, err := compileGlob(pattern)
	if err != nil {
		return false, err
	}
	name = filepath.ToSlash(name)
	for _, p := range alts {
		if !strings.Contains(p, "/") {
			if ok, _ := path.Match(p, path.Base(name)); ok {
				return true, nil
			}
		} else if !path.IsAbs(p) && !strings.HasPrefix(p, "**") && path.IsAbs(name) && dir != "" {
			p = strings.TrimSuffix(filepath.ToSlash(dir), "/") + "/" + strings.TrimPrefix(p, "./")
		}
		if globSegments(strings.Split(p, "/"), strings.Split(name, "/"), 0) {
			return true, nil
		}
	}
	return false, nil
}

func globSegments(pat, name []string, depth int) bool {
	if depth > 64 {
		return false
	}
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if globSegments(pat[1:], name[i:], depth+1) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// globPatcher completes the calls glob(pattern, path) of one rule with
// the directory a relative pattern is taken from, glob(pattern, path,
// dir): the rule's project directory (a literal) for a project rule, else
// the event's cwd. It also checks the patterns written as literals, so that
// `policy check` reports a broken one.
type globPatcher struct {
	base string // "" = the variable cwd
	err  error
}

// Visit implements ast.Visitor.
func (g *globPatcher) Visit(node *ast.Node) {
	call, ok := (*node).(*ast.CallNode)
	if !ok {
		return
	}
	if id, ok := call.Callee.(*ast.IdentifierNode); !ok || id.Value != "glob" {
		return
	}
	if len(call.Arguments) > 0 {
		if s, ok := call.Arguments[0].(*ast.StringNode); ok && g.err == nil {
			if _, err := compileGlob(s.Value); err != nil {
				g.err = err
			}
		}
	}
	if len(call.Arguments) == 2 {
		var dir ast.Node = &ast.IdentifierNode{Value: "cwd"}
		if g.base != "" {
			dir = &ast.StringNode{Value: g.base}
		}
		// A new node: the checker has typed this one for two arguments.
		args := []ast.Node{call.Arguments[0], call.Arguments[1], dir}
		ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: "glob"}, Arguments: args})
	}
}

// globBase is the directory relative glob patterns of r are taken from:
// the project's directory (the one holding .hookwatch/) for a project
// rule, "" (the event's cwd) for a user or managed rule.
func (r *Rule) globBase() string {
	if r.Scope != ScopeProject || r.File == "" {
		return ""
	}
	abs, err := filepath.Abs(r.File)
	if err != nil {
		return ""
	}
	return filepath.Dir(filepath.Dir(abs))
}

// errNotString is the error of a glob argument that is no string at run time.
var errNotString = errors.New("glob: pattern, path and dir must be strings")
