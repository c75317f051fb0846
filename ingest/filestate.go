package ingest

import (
	"path"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/redact"
	"github.com/hookwatch/hookwatch/stale"
)

// fileStates returns, for a PostToolUse of a Claude Code tool that reads or
// writes one file, the state of that file now (package stale): what the
// agent just saw or left, for the stale-context guard to compare with at a
// resume. Any other event, and a file that cannot be read, gives none.
//
// The path is the one the session model names the call's file by
// (classify: the input's file_path or notebook_path, joined to cwd when
// relative). A path that redaction would change is not recorded at all: it
// holds a secret, and the model, which sees it redacted, could never match
// it.
func (pl *Pipeline) fileStates(p *event.Payload) []event.FileState {
	e, ok := p.Event.(*event.PostToolUseInput)
	if !ok || !pl.RecordFiles {
		return nil
	}
	switch e.ToolName {
	case "Read", "Write", "Edit", "MultiEdit", "NotebookEdit":
	default:
		return nil
	}
	var file, notebook string
	jsonscan.Members(e.ToolInput, func(key, val []byte) {
		switch string(key) {
		case `"file_path"`:
			file, _ = jsonscan.Unquote(val)
		case `"notebook_path"`:
			notebook, _ = jsonscan.Unquote(val)
		}
	})
	name := file
	if name == "" {
		name = notebook
	}
	if name == "" || name[0] == '~' {
		return nil
	}
	if !path.IsAbs(name) {
		if p.CWD == "" {
			return nil
		}
		name = path.Join(p.CWD, name)
	}
	if pl.Privacy.Redact {
		if _, n := redact.String(name); n > 0 {
			return nil
		}
	}
	st, err := stale.Take(name)
	if err != nil {
		return nil
	}
	return []event.FileState{st}
}
