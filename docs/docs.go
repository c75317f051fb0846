// Package docs holds hookwatch's user documentation. metrics.md is also
// built into the binary: the tables of that page are what /metrics says of
// each family in its # HELP and # TYPE lines, so that the page is the one
// place a metric's meaning is written.
package docs

import (
	_ "embed"
	"regexp"
	"strings"
)

//go:embed metrics.md
var metricsPage string

// Metric is one family of a row of metrics.md's tables.
type Metric struct {
	Name string
	// Type is "counter", "gauge", "histogram" (le buckets), "summary"
	// (quantiles, _sum, _count) or "vmrange" (VictoriaMetrics'
	// histogram: _bucket{vmrange}, _sum, _count).
	Type string
	// Help is the row's meaning as plain text: code spans, links and
	// emphasis reduced to their text.
	Help string
}

// Metrics returns the families metrics.md's tables describe, in the page's
// order. A row that names several families gives each the row's type and
// meaning; a row without a type gives none.
func Metrics() []Metric {
	var out []Metric
	for line := range strings.Lines(metricsPage) {
		cells := tableCells(line)
		if len(cells) != 4 || !strings.HasPrefix(cells[0], "`") {
			continue
		}
		typ := tableType(cells[1])
		if typ == "" {
			continue
		}
		help := plainText(cells[3])
		for _, name := range codeSpan.FindAllStringSubmatch(cells[0], -1) {
			out = append(out, Metric{Name: name[1], Type: typ, Help: help})
		}
	}
	return out
}

// tableCells splits a table row into its cells, trimmed; nil for a line
// that is not a row. An escaped \| stays in its cell.
func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || len(line) < 2 {
		return nil
	}
	line = line[1 : len(line)-1]
	var cells []string
	start := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '|':
			cells = append(cells, strings.TrimSpace(line[start:i]))
			start = i + 1
		}
	}
	return append(cells, strings.TrimSpace(line[start:]))
}

// tableType reads a type cell: "counter", "gauge", "summary",
// "histogram (vmrange)", "histogram (`le` buckets …)".
func tableType(cell string) string {
	switch word, rest, _ := strings.Cut(cell, " "); word {
	case "counter", "gauge", "summary":
		return word
	case "histogram":
		if strings.Contains(rest, "vmrange") {
			return "vmrange"
		}
		return "histogram"
	}
	return ""
}

var (
	codeSpan = regexp.MustCompile("`([a-z_:][a-z0-9_:]*)`")
	link     = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// plainText reduces a cell's markdown to the text a reader of # HELP sees.
func plainText(md string) string {
	md = link.ReplaceAllString(md, "$1")
	return strings.NewReplacer("`", "", "**", "", "\\|", "|").Replace(md)
}
