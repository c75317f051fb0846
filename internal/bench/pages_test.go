package bench

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPages: the pages benchmark reports a positive cost per fault for
// each stretch of the memory it grew to, and the spread between chunks.
func TestPages(t *testing.T) {
	var out bytes.Buffer
	if err := Pages(context.Background(), &out, PagesOptions{MiB: 1024}); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`median per 512 MiB: ([0-9. ]+)\n`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no medians in:\n%s", out.String())
	}
	stretches := strings.Fields(m[1])
	if len(stretches) != 2 {
		t.Errorf("%d stretches of 512 MiB in 1024 MiB: %q", len(stretches), m[1])
	}
	for _, f := range stretches {
		if v, err := strconv.ParseFloat(f, 64); err != nil || v <= 0 {
			t.Errorf("a stretch's median %q", f)
		}
	}
	if !regexp.MustCompile(`cheapest 64 MiB [0-9.]+ µs per fault, dearest [0-9.]+ \([0-9.]+×\)`).MatchString(out.String()) {
		t.Errorf("no spread in:\n%s", out.String())
	}
}
