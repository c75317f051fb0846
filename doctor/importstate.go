package doctor

import (
	"path/filepath"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/importer"
)

// checkImportState fails, and is reported (ok), when the home's import
// state exists and cannot be read: the offsets to which hookwatch import
// and the collector following Claude Code's transcripts and Codex's
// rollouts have read. Until it is mended no transcript is imported, by
// either, and the rollouts' offsets are kept nowhere. It is read by the one
// reader of it, the importer's, whose error names the way out.
func (e *env) checkImportState() (Check, bool) {
	// The importer's reader takes a state that does not exist for an
	// empty one.
	path := filepath.Join(e.home, importer.StateFile)
	_, err := importer.Offsets(path)
	if err == nil {
		return Check{}, false
	}
	return Check{
		Name:    "import state",
		Status:  Fail,
		Message: "the import state cannot be read: no Claude Code transcript is imported, by hookwatch import or by the collector, and the offsets read of Codex's rollouts are not kept, until it is mended",
		Details: []string{err.Error()},
		Fix:     "rm " + claudecode.ShellQuote(path) + "   # what was imported is not stored twice when read again",
	}, true
}
