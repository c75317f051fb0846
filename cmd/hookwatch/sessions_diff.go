package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
)

const sessionsDiffSynopsis = `sessions diff [--json] [--unrelated] A B

Puts two sessions side by side, as the collector's model has them
(GET /v1/sessions/A/compare/B on the collector the hooks send to:
$HOOKWATCH_URL, else the URL 'hookwatch install --url' kept, with the
token the hooks send):
the baseline both were forked from and when each left it, their outcome,
decomposition shape, turns, agents, failures, denials, tokens and cost,
and the calls per tool, per subtype and per file. Two sessions that share
no baseline are refused unless --unrelated asks to compare them anyway.
A and B are session ids, whole or their first 8 characters or more, as the
comparison and 'hookwatch sessions' print them.

Flags:`

// sessionsDiffFlagSet defines the flags of sessions diff, --json and
// --unrelated: the one definition runSessionsDiff parses and the docs'
// command lines are checked against.
func sessionsDiffFlagSet(stdout, stderr io.Writer) (fs *flag.FlagSet, asJSON, unrelated *bool) {
	fs = newFlagSet("sessions diff", sessionsDiffSynopsis, stdout, stderr)
	asJSON = fs.Bool("json", false, "print the collector's answer as JSON")
	unrelated = fs.Bool("unrelated", false, "compare two sessions even when they share no baseline")
	return fs, asJSON, unrelated
}

// runSessionsDiff is `hookwatch sessions diff`.
func runSessionsDiff(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, asJSON, unrelated := sessionsDiffFlagSet(stdout, stderr)
	ids, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(ids) != 2 {
		return fmt.Errorf("%w: sessions diff takes two session ids, got %s", errUsage, counted(len(ids), "argument"))
	}
	base, token, err := collectorURL()
	if err != nil {
		return err
	}
	if err := sessionsByPrefix(ctx, base, token, ids); err != nil {
		return err
	}
	a, b := ids[0], ids[1]
	u := base + "/v1/sessions/" + url.PathEscape(a) + "/compare/" + url.PathEscape(b)
	if *unrelated {
		u += "?unrelated=1"
	}
	body, err := apiGet(ctx, base, token, u)
	if ae := (*apiError)(nil); errors.As(err, &ae) && ae.Status == http.StatusConflict {
		return fmt.Errorf("sessions %s and %s share no baseline: neither was forked from the other or from a session they both continue (--unrelated compares them anyway)", a, b)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		var out bytes.Buffer
		if err := json.Indent(&out, body, "", "  "); err != nil {
			return fmt.Errorf("cannot read the comparison: %w", err)
		}
		out.WriteByte('\n')
		_, err := out.WriteTo(stdout)
		return err
	}
	var c collector.CompareResponse
	if err := json.Unmarshal(body, &c); err != nil || c.Comparison == nil {
		return fmt.Errorf("cannot read the comparison: %v", err)
	}
	printComparison(stdout, c.Comparison)
	return nil
}

// sessionsByPrefix replaces each of ids that is shorter than a whole id
// (36 characters) but at least minPrefix with the session of the
// collector at base whose id starts with it: the short ids the comparison
// and the listings print. The collector's listing is read once, and only
// when some id is short. Any other id, or one no session starts with, is
// left as given, for the API to say it is not found; one that several
// start with is an error naming them.
func sessionsByPrefix(ctx context.Context, base, token string, ids []string) error {
	found := map[string][]string{}
	for _, id := range ids {
		if isPrefix(id) {
			found[id] = nil
		}
	}
	if len(found) == 0 {
		return nil
	}
	var page struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
		NextCursor string `json:"next_cursor"`
	}
	client, err := collectorClient()
	if err != nil {
		return err
	}
	if _, err := apiPages(ctx, client, base, token, base+"/v1/sessions?limit=1000", &page, &page.NextCursor, func() {
		for _, s := range page.Sessions {
			for prefix := range found {
				if strings.HasPrefix(s.ID, prefix) {
					found[prefix] = append(found[prefix], s.ID)
				}
			}
		}
		page.Sessions = nil
	}); err != nil {
		return err
	}
	for i, id := range ids {
		if matches, short := found[id]; short {
			var err error
			if ids[i], err = pickPrefixed("sessions", id, matches); err != nil {
				return err
			}
		}
	}
	return nil
}

// printComparison prints a comparison as a table: A's column, then B's.
func printComparison(w io.Writer, c *attribution.Comparison) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(name, a, b string) { fmt.Fprintf(tw, "%s\t%s\t%s\n", name, a, b) }
	num := func(f func(s *attribution.Session) int) (string, string) {
		return fmt.Sprint(f(c.A)), fmt.Sprint(f(c.B))
	}
	row("", "A", "B")
	row("session", c.A.SessionID, c.B.SessionID)
	row("title", cut(c.A.Title, 50), cut(c.B.Title, 50))
	row("baseline", branchOf(c, c.A.SessionID), branchOf(c, c.B.SessionID))
	row("outcome", outcome(c.A), outcome(c.B))
	row("shape", shapeOf(c.A.Shape), shapeOf(c.B.Shape))
	a, b := num(func(s *attribution.Session) int { return s.Counts.Prompts })
	row("turns", a, b)
	row("agents", agents(c.A), agents(c.B))
	a, b = num(func(s *attribution.Session) int { return s.Counts.ToolCalls })
	row("tool calls", a, b)
	a, b = num(func(s *attribution.Session) int { return s.Counts.Failures })
	row("failures", a, b)
	a, b = num(func(s *attribution.Session) int { return s.Counts.Rejected })
	row("rejected", a, b)
	a, b = num(func(s *attribution.Session) int { return s.Counts.Denials })
	row("denials", a, b)
	if c.A.Usage == nil && c.B.Usage == nil {
		row("tokens", "– (no transcript imported)", "–")
	}
	for _, t := range []struct {
		name string
		of   func(u *attribution.Usage) int64
	}{
		{"input tokens", func(u *attribution.Usage) int64 { return u.InputTokens }},
		{"output tokens", func(u *attribution.Usage) int64 { return u.OutputTokens }},
		{"cache read tokens", func(u *attribution.Usage) int64 { return u.CacheReadTokens }},
		{"cache write tokens", func(u *attribution.Usage) int64 { return u.CacheCreationTokens }},
	} {
		if c.A.Usage != nil || c.B.Usage != nil {
			row(t.name, tokens(c.A.Usage, t.of), tokens(c.B.Usage, t.of))
		}
	}
	if c.A.Usage != nil || c.B.Usage != nil {
		row("cost", cost(c.A.Usage), cost(c.B.Usage))
	}
	section := func(title string, rows []attribution.CountRow) {
		if len(rows) == 0 {
			return
		}
		row(title, "", "")
		for _, r := range rows {
			row("  "+r.Name, fmt.Sprint(r.A), fmt.Sprint(r.B))
		}
	}
	section("tools", c.Tools)
	section("subtypes", c.Subtypes)
	section("subagent types", c.AgentTypes)
	if len(c.Files) > 0 {
		row("files", "", "")
		for _, f := range c.Files {
			row("  "+f.Path, fileUse(f.A), fileUse(f.B))
		}
		if c.FilesOmitted > 0 {
			row(fmt.Sprintf("  (%d more not listed)", c.FilesOmitted), "", "")
		}
	}
	tw.Flush()
	if c.Baseline == nil {
		fmt.Fprintln(w, "\nThese sessions share no baseline: neither was forked from the other or from a common session.")
	}
}

// branchOf says how a side descends from the comparison's baseline.
func branchOf(c *attribution.Comparison, id string) string {
	base := c.Baseline
	if base == nil {
		return "none shared"
	}
	br := base.A
	if id == c.B.SessionID {
		br = base.B
	}
	if len(br.Via) == 0 {
		return "is the baseline"
	}
	s := br.Lineage + " of " + shortID(base.SessionID)
	if br.ForkedAt != nil {
		s += " at " + br.ForkedAt.Local().Format(time.DateTime)
	}
	if len(br.Via) > 1 {
		s += fmt.Sprintf(" (%d steps)", len(br.Via))
	}
	return s
}

// agents is a side's count of agents, and what they are beside the main
// agent: the subagents that shape its work, and the client's compaction
// agents, which the agents count too.
func agents(s *attribution.Session) string {
	out := fmt.Sprintf("%d (%s", s.Counts.Agents, counted(s.Counts.Subagents, "subagent"))
	if n := s.Counts.Agents - 1 - s.Counts.Subagents; n > 0 {
		out += ", " + counted(n, "compaction agent")
	}
	return out + ")"
}

// outcome is a session's status and end reason.
func outcome(s *attribution.Session) string {
	if s.EndReason != "" {
		return s.Status + " (" + s.EndReason + ")"
	}
	return s.Status
}

// shapeOf says a shape in words; "unknown" for a model stored before shapes.
func shapeOf(s *attribution.Shape) string {
	if s == nil {
		return "unknown"
	}
	return s.String()
}

// tokens is one figure of a usage; a dash before any transcript was
// imported.
func tokens(u *attribution.Usage, of func(*attribution.Usage) int64) string {
	if u == nil {
		return "–"
	}
	return fmt.Sprint(of(u))
}

func cost(u *attribution.Usage) string {
	if u == nil {
		return "–"
	}
	s := fmt.Sprintf("$%.4f", u.CostUSD)
	if u.Unpriced > 0 {
		s += fmt.Sprintf(" (+%d unpriced responses)", u.Unpriced)
	}
	return s
}

func fileUse(u attribution.FileUse) string {
	switch {
	case u.Read && u.Written:
		return "read, written"
	case u.Read:
		return "read"
	case u.Written:
		return "written"
	}
	return "–"
}

// shortID is the first 8 characters of an id.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// cut shortens s to n runes.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
