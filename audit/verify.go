package audit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/hookwatch/hookwatch/internal/lines"
	"github.com/hookwatch/hookwatch/internal/patherr"
	"github.com/hookwatch/hookwatch/internal/regfile"
)

// Kinds of Problem.
const (
	// Altered: a line's content does not match its hash, or a line does
	// not follow the hash of the line before it (that line was edited and
	// its hash recomputed, or replaced).
	Altered = "altered"
	// Removed: lines of the chain are missing (numbers skip).
	Removed = "removed"
	// Reordered: a line comes before one that precedes it in the chain, or
	// a line is repeated.
	Reordered = "reordered"
	// Truncated: the file ends inside a line.
	Truncated = "truncated"
	// Malformed: a line is not a line of an audit chain.
	Malformed = "malformed"
)

// Problem is the first thing wrong with a stream.
type Problem struct {
	// File is the file, Line the line of that file (from 1) at fault.
	File   string
	Line   int64
	Kind   string
	Detail string
}

func (p *Problem) Error() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Kind, p.Detail)
}

// StreamReport is what Verify found of one stream.
type StreamReport struct {
	// Files are the stream's files in chain order.
	Files []string
	// Lines is the number of lines that verified; Head the hash of the
	// last of them (record it elsewhere to detect, later, lines cut off
	// at the end, which no chain can show by itself).
	Lines int64
	Head  string
	// Pruned is the last line of the chain a prune deleted (Writer.Prune;
	// 0: none): the stream's lines verified as the chain's lines after it,
	// from the hash the prune recorded.
	Pruned int64
	// Problem is the first problem, nil when the stream verified.
	Problem *Problem
}

// streamFile matches a stream's file name: events.jsonl, events.000001.jsonl…
var streamFile = regexp.MustCompile(`^(events|tool_calls)(\.[0-9]{6})?\.jsonl$`)

// Verify checks the audit trail at path: a file of a stream, a session's
// directory, or a directory of session directories. For a file, the chain
// starts where the file does when earlier segments of its stream exist
// beside it (checked against the last line of the one just before), and at
// line 1 otherwise. It returns a report per stream; an error only when
// path holds no audit trail or cannot be read.
func Verify(path string) ([]StreamReport, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot verify %s: %w", path, patherr.Strip(err, path))
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			// Opening a FIFO waits for a writer: forever, here.
			return nil, fmt.Errorf("cannot verify %s: not a regular file or a directory (%s)", path, regfile.TypeName(fi.Mode()))
		}
		return []StreamReport{verifyFile(path)}, nil
	}
	var reports []StreamReport
	if r := verifySessionDir(path); len(r) > 0 {
		return r, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("cannot verify %s: %w", path, patherr.Strip(err, path))
	}
	for _, e := range entries {
		if e.IsDir() {
			reports = append(reports, verifySessionDir(filepath.Join(path, e.Name()))...)
		}
	}
	if len(reports) == 0 {
		return nil, fmt.Errorf("cannot verify %s: no %s or %s in it or in its subdirectories", path, EventsFile, ToolCallsFile)
	}
	return reports, nil
}

func verifySessionDir(dir string) []StreamReport {
	var out []StreamReport
	for _, name := range []string{EventsFile, ToolCallsFile} {
		segs, err := Segments(dir, name)
		if err != nil || len(segs) == 0 {
			continue
		}
		rec, ok, err := readPruned(dir, name)
		if err != nil {
			out = append(out, StreamReport{Files: segs, Problem: &Problem{File: filepath.Join(dir, PrunedFile(name)), Kind: Malformed, Detail: err.Error()}})
			continue
		}
		if !ok {
			out = append(out, verifyStream(segs, link{}, true))
			continue
		}
		// Segments the record names as pruned, left by a prune that was
		// interrupted, are passed over: the chain starts after them.
		segs = slices.DeleteFunc(segs, func(s string) bool { n := segmentNumber(s); return n > 0 && n <= rec.Segment })
		r := verifyStream(segs, link{line: rec.Line, hash: rec.Hash}, true)
		r.Pruned = rec.Line
		out = append(out, r)
	}
	return out
}

func verifyFile(path string) StreamReport {
	m := streamFile.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return verifyStream([]string{path}, link{}, true)
	}
	dir, name := filepath.Dir(path), m[1]+".jsonl"
	segs, err := Segments(dir, name)
	i := slices.Index(segs, path)
	if err != nil || i <= 0 {
		// The first of its stream: the chain starts at line 1, or where
		// a prune of the segments before it left it.
		if rec, ok, err := readPruned(dir, name); ok && (segmentNumber(path) == 0 || segmentNumber(path) > rec.Segment) {
			r := verifyStream([]string{path}, link{line: rec.Line, hash: rec.Hash}, true)
			r.Pruned = rec.Line
			return r
		} else if err != nil {
			return StreamReport{Files: []string{path}, Problem: &Problem{File: filepath.Join(dir, PrunedFile(name)), Kind: Malformed, Detail: err.Error()}}
		}
		return verifyStream([]string{path}, link{}, true)
	}
	// The chain comes from the segment before.
	last, err := readLastLine(segs[i-1])
	if err != nil || last == nil {
		return verifyStream([]string{path}, link{}, false)
	}
	h, err := readLine(last)
	if err != nil {
		return verifyStream([]string{path}, link{}, false)
	}
	return verifyStream([]string{path}, link{line: h.Line, hash: h.Hash}, true)
}

// verifyStream checks files as one chain that continues from at. When
// anchored is false the chain starts wherever the first line says.
func verifyStream(files []string, at link, anchored bool) StreamReport {
	r := StreamReport{Files: files}
	for _, f := range files {
		lines, p := readHeaders(f)
		// The lines before a line that cannot be read come first.
		if cp := checkChain(f, lines, &at, &anchored, &r.Lines); cp != nil {
			p = cp
		}
		if p != nil {
			r.Problem = p
			break
		}
	}
	r.Head = at.hash
	return r
}

// checkChain checks the headers of one file's lines against the chain
// position at, advancing it.
func checkChain(file string, lines []lineHeader, at *link, anchored *bool, count *int64) *Problem {
	for k, h := range lines {
		n := int64(k + 1)
		problem := func(kind, format string, args ...any) *Problem {
			return &Problem{File: file, Line: n, Kind: kind, Detail: fmt.Sprintf(format, args...)}
		}
		if h.Sum != h.Hash {
			return problem(Altered, "its content does not match its hash")
		}
		want := at.line + 1
		if !*anchored {
			want, at.hash = h.Line, h.Prev
			*anchored = true
		}
		switch {
		case h.Line < want:
			return problem(Reordered, "it is line %d of the chain, which came before (line %d expected)", h.Line, want)
		case h.Line > want:
			for _, later := range lines[k+1:] {
				if later.Line == want {
					return problem(Reordered, "it is line %d of the chain; line %d comes after it", h.Line, want)
				}
			}
			if want == 1 {
				return problem(Removed, "the chain starts at line %d: its first %d lines are missing", h.Line, h.Line-1)
			}
			return problem(Removed, "it is line %d of the chain: line(s) %d to %d are missing before it", h.Line, want, h.Line-1)
		case h.Prev != at.hash:
			if want == 1 {
				return problem(Altered, "the first line of the chain names a predecessor")
			}
			return problem(Altered, "it does not follow the hash of line %d of the chain: that line was altered or replaced", want-1)
		}
		*at = link{line: h.Line, hash: h.Hash}
		*count++
	}
	return nil
}

// readHeaders reads the chain members of every line of a file. It stops
// at the first line that is not a chain line, or at a cut last line, and
// returns the lines before it with the problem.
func readHeaders(file string) ([]lineHeader, *Problem) {
	f, _, err := regfile.Open(file)
	if err != nil {
		return nil, &Problem{File: file, Line: 0, Kind: Malformed, Detail: err.Error()}
	}
	defer f.Close()
	var out []lineHeader
	r := lines.NewReader(f, 256<<10, lines.Unbounded)
	for n := int64(1); ; n++ {
		line, fl, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, &Problem{File: file, Line: n, Kind: Malformed, Detail: err.Error()}
		}
		if fl&lines.Unterminated != 0 {
			return out, &Problem{File: file, Line: n, Kind: Truncated,
				Detail: fmt.Sprintf("the file ends inside this line (%d bytes without a newline)", len(line))}
		}
		h, herr := readLine(line)
		if herr != nil {
			return out, &Problem{File: file, Line: n, Kind: Malformed, Detail: herr.Error()}
		}
		out = append(out, h)
	}
}

// Empty reports whether the stream verified holds no line: nothing was
// verified, which is no evidence of anything (a file emptied looks the
// same as one never written to).
func (r StreamReport) Empty() bool { return r.Problem == nil && r.Lines == 0 }

// Summary is one line of text per report: "OK <stream>: N lines, head H",
// "EMPTY <stream>: no lines to verify", or "FAIL <file>:<line>: <kind>:
// <detail>".
func Summary(r StreamReport) string {
	name := "(empty)"
	if len(r.Files) > 0 {
		name = r.Files[len(r.Files)-1]
		if len(r.Files) > 1 {
			name += fmt.Sprintf(" (and %d rotated segments)", len(r.Files)-1)
		}
	}
	if r.Problem != nil {
		return "FAIL " + r.Problem.Error()
	}
	if r.Empty() {
		return "EMPTY " + name + ": no lines to verify"
	}
	if r.Pruned > 0 {
		return fmt.Sprintf("OK   %s: %d lines, head %s (lines 1 to %d pruned: it starts from the hash the prune recorded)", name, r.Lines, r.Head, r.Pruned)
	}
	return strings.TrimSpace(fmt.Sprintf("OK   %s: %d lines, head %s", name, r.Lines, r.Head))
}
