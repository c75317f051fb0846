package policy

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/checker/nature"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	exprparser "github.com/expr-lang/expr/parser"
)

// nameError is expr's error about a name that is not there — `unknown
// name tool_inptu`, `unknown field efect` — with the name that was meant.
type nameError struct {
	err  *file.Error
	hint string // `; did you mean "X"?`
}

func (e *nameError) Error() string { return e.err.Error() + e.hint }
func (e *nameError) Unwrap() error { return e.err }

// withNameHint returns err, the error of compiling src with c, with the
// variable, function or field a misspelt one was meant to be, when one is
// near (didYouMean): the variables are those of envTypes, the functions
// c's and expr's builtins, and the fields those of the object
// the name is read from — command, a step of command.steps (# in a
// predicate over them), session, agent and their signals. A map whose keys
// the conditions do not know (tool_input, payload) never gets here: any
// key compiles. The source is parsed again, only on this error's path.
func withNameHint(src string, err error, c *conf.Config) error {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return err
	}
	var hint string
	if name, ok := strings.CutPrefix(fe.Message, "unknown name "); ok {
		if called(src, fe.Location) {
			hint = didYouMean(name, func(yield func(string) bool) {
				for n := range c.Functions {
					if !yield(n) {
						return
					}
				}
				for _, n := range builtin.Names {
					if !yield(n) {
						return
					}
				}
			})
		} else {
			hint = didYouMean(name, maps.Keys(envTypes()))
		}
	} else if field, ok := strings.CutPrefix(fe.Message, "unknown field "); ok {
		if fields := fieldsAt(src, fe.Location); len(fields) > 0 {
			hint = didYouMean(field, maps.Keys(fields))
		}
	}
	if hint == "" {
		return err
	}
	return &nameError{err: fe, hint: hint}
}

// called reports whether the name at loc in src is called: a function's.
func called(src string, loc file.Location) bool {
	tree, err := exprparser.Parse(src)
	if err != nil {
		return false
	}
	return ast.Find(tree.Node, func(n ast.Node) bool {
		c, ok := n.(*ast.CallNode)
		return ok && c.Callee.Location() == loc
	}) != nil
}

// fieldsAt returns the fields of the object whose member at loc (the
// unknown field the checker reported) is read, or nil when it cannot tell.
func fieldsAt(src string, loc file.Location) map[string]nature.Nature {
	tree, err := exprparser.Parse(src)
	if err != nil {
		return nil
	}
	found := ast.Find(tree.Node, func(n ast.Node) bool {
		m, ok := n.(*ast.MemberNode)
		return ok && m.Property.Location() == loc
	})
	member, ok := found.(*ast.MemberNode)
	if !ok {
		return nil
	}
	obj := natureOf(tree.Node, member.Node)
	if obj == nil || obj.TypeData == nil {
		return nil
	}
	return obj.Fields
}

// natureOf returns the type of n, a part of root, as far as the
// variables' types say: a variable, a member or an element of one, or #
// in a predicate over a list of known elements; nil otherwise.
func natureOf(root, n ast.Node) *nature.Nature {
	switch n := n.(type) {
	case *ast.IdentifierNode:
		t, ok := envTypes()[n.Value]
		if !ok {
			return nil
		}
		nt := t.Nature()
		return &nt
	case *ast.MemberNode:
		obj := natureOf(root, n.Node)
		if obj == nil {
			return nil
		}
		if p, ok := n.Property.(*ast.StringNode); ok {
			if obj.TypeData == nil {
				return nil
			}
			if f, ok := obj.Fields[p.Value]; ok {
				return &f
			}
			return nil
		}
		return obj.Ref // an element of a list
	case *ast.PointerNode:
		if n.Name != "" {
			return nil // #index, #acc
		}
		// # is an element of the list of the innermost predicate around it.
		var around []*ast.BuiltinNode
		ast.Find(root, func(x ast.Node) bool {
			if b, ok := x.(*ast.BuiltinNode); ok && len(b.Arguments) >= 2 && within(b.Arguments[1], n) {
				around = append(around, b)
			}
			return false
		})
		for _, b := range around {
			if !slices.ContainsFunc(around, func(o *ast.BuiltinNode) bool { return o != b && within(b.Arguments[1], o) }) {
				if list := natureOf(root, b.Arguments[0]); list != nil {
					return list.Ref
				}
			}
		}
	}
	return nil
}

// within reports whether node is a part of tree.
func within(tree, node ast.Node) bool {
	return ast.Find(tree, func(x ast.Node) bool { return x == node }) != nil
}
