package event

import "strings"

// ApplyPatch is the name of Codex's patch tool; its tool_input is
// {"command": "<patch text>"}.
const ApplyPatch = "apply_patch"

// Operations on a file in a patch (PatchFile.Op).
const (
	PatchAdd    = "add"
	PatchUpdate = "update"
	PatchDelete = "delete"
)

// PatchFile is one file a patch touches.
type PatchFile struct {
	Op   string `json:"op"`
	Path string `json:"path"`
	// MoveTo is the new path of an updated file that the patch renames.
	MoveTo string `json:"move_to,omitempty"`
}

// Patch headers (Codex's apply_patch format).
const (
	patchBegin  = "*** Begin Patch"
	patchEnd    = "*** End Patch"
	patchAdd    = "*** Add File: "
	patchUpdate = "*** Update File: "
	patchDelete = "*** Delete File: "
	patchMove   = "*** Move to: "
)

// PatchFiles returns the files a patch touches, read from its
// "*** Add/Update/Delete File:" and "*** Move to:" headers, in order.
func PatchFiles(patch string) []PatchFile {
	var files []PatchFile
	for line := range strings.Lines(patch) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, patchAdd):
			files = append(files, PatchFile{Op: PatchAdd, Path: line[len(patchAdd):]})
		case strings.HasPrefix(line, patchUpdate):
			files = append(files, PatchFile{Op: PatchUpdate, Path: line[len(patchUpdate):]})
		case strings.HasPrefix(line, patchDelete):
			files = append(files, PatchFile{Op: PatchDelete, Path: line[len(patchDelete):]})
		case strings.HasPrefix(line, patchMove) && len(files) > 0 && files[len(files)-1].Op == PatchUpdate:
			files[len(files)-1].MoveTo = line[len(patchMove):]
		}
	}
	return files
}

// PatchHeaders returns the patch reduced to its header lines (begin, end,
// and one per file, with its move): which files it touches, without the
// diff. It is idempotent.
func PatchHeaders(patch string) string {
	var b strings.Builder
	for line := range strings.Lines(patch) {
		l := strings.TrimRight(line, "\r\n")
		if l == patchBegin || l == patchEnd || strings.HasPrefix(l, patchAdd) || strings.HasPrefix(l, patchUpdate) ||
			strings.HasPrefix(l, patchDelete) || strings.HasPrefix(l, patchMove) {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
