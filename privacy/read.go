package privacy

import (
	"bytes"

	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

// Captured is what a capture object holds for its readers: how the tool's
// output was kept and, for a preview, its head and tail.
type Captured struct {
	// Mode is CaptureNone, CapturePreview or CapturePatch as this package
	// writes them; any other non-empty string a forged or future object
	// says.
	Mode Capture
	// Head and Tail are the start and the end of the output's JSON text,
	// each cut anywhere (even inside an escape); "" for a mode none.
	Head, Tail string
}

// ReadCapture reads a capture object, {"hookwatch_capture": mode, "bytes":
// n, "head": …, "tail": …}, for the readers of stored events and of the
// model: ok is false when raw is not a JSON object whose hookwatch_capture
// is a non-empty string and whose head and tail are strings (or null, or
// absent: ""). Names match exactly and the last of a name wins. Nothing
// else of the object is checked: it was redacted when it was made
// (parseCaptured is the check that decides whether to capture again).
func ReadCapture(raw []byte) (c Captured, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !bytes.Contains(raw, []byte(`"`+captureKey+`"`)) {
		return Captured{}, false
	}
	var mode string
	valid := true
	_, whole := jsonscan.Members(raw, func(key, val []byte) {
		var dst *string
		switch string(jsonscan.Name(key)) {
		case captureKey:
			dst = &mode
		case "head":
			dst = &c.Head
		case "tail":
			dst = &c.Tail
		default:
			return
		}
		if string(val) == "null" {
			*dst = ""
			return
		}
		s, isStr := jsonscan.Unquote(val)
		*dst, valid = s, valid && isStr
	})
	c.Mode = Capture(mode)
	return c, whole && valid && mode != ""
}
