package attribution

import (
	"bytes"
	"hash/maphash"

	"github.com/hookwatch/hookwatch/classify"
)

// metas are the classifications a session's calls got, by tool, working
// directory and input: a session runs the same commands over and over (its
// tests, its builds, git status), and classifying a shell call parses its
// command. A call gets the Meta of the earlier call with the same input,
// shared, as a call's copies share it (callState.own): nobody changes one.
type metas map[uint64]metaEntry

type metaEntry struct {
	tool, cwd string
	input     []byte // the earlier call's input, which nobody changes
	meta      classify.Meta
}

// Bounds of metas: inputs longer than maxMetaInput (a file's content to
// write) are classified each time, and past maxMetas entries nothing more
// is kept.
const (
	maxMetaInput = 4 << 10
	maxMetas     = 1024
)

var metaSeed = maphash.MakeSeed()

// classify returns classify.Call(tool, input, cwd), from ms when an earlier
// call had the same.
func (ms *metas) classify(tool string, input []byte, cwd string) classify.Meta {
	if len(input) > maxMetaInput {
		return classify.Call(tool, input, cwd)
	}
	var h maphash.Hash
	h.SetSeed(metaSeed)
	h.WriteString(tool)
	h.WriteByte(0)
	h.WriteString(cwd)
	h.WriteByte(0)
	h.Write(input)
	k := h.Sum64()
	if e, ok := (*ms)[k]; ok && e.tool == tool && e.cwd == cwd && bytes.Equal(e.input, input) {
		return e.meta
	}
	m := classify.Call(tool, input, cwd)
	if *ms == nil {
		*ms = metas{}
	}
	if len(*ms) < maxMetas {
		(*ms)[k] = metaEntry{tool: tool, cwd: cwd, input: input, meta: m}
	}
	return m
}
