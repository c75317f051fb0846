package bench

import (
	"bytes"
	"context"
	"os"
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

// TestTouchFreshGivesBack: the model benchmark's warm-up writes every
// chunk it maps (a cost per fault for each) and gives the memory back: the
// process is no larger after it.
func TestTouchFreshGivesBack(t *testing.T) {
	before := rssKiB(t)
	perFault, err := touchFresh(context.Background(), 256)
	if err != nil {
		t.Fatal(err)
	}
	if len(perFault) != 4 {
		t.Errorf("%d chunks measured of 256 MiB, want 4", len(perFault))
	}
	for _, us := range perFault {
		if us <= 0 {
			t.Errorf("a chunk's cost per fault: %v µs", us)
		}
	}
	if after := rssKiB(t); after > before+32<<10 {
		t.Errorf("resident %d KiB after the warm-up, %d before: the memory was kept", after, before)
	}
}

// rssKiB is the process's resident memory, from /proc/self/status.
func rssKiB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no VmRSS in /proc/self/status")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// TestPrintModelRunWarm: a run after a warm-up says what the warm-up's
// faults cost, so that a reader can tell a cold machine's figures.
func TestPrintModelRunWarm(t *testing.T) {
	r := ModelRun{Sessions: 3, Events: 30, Via: ViaSpool, SliceMicros: []float64{40, 42, 41}, WarmFault: 1.64}
	var out bytes.Buffer
	printModelRun(&out, r)
	if !strings.Contains(out.String(), "(memory warmed up first at 1.6 µs per page fault)") {
		t.Errorf("no warm-up in:\n%s", out.String())
	}
	r.WarmFault = 0
	out.Reset()
	printModelRun(&out, r)
	if strings.Contains(out.String(), "warmed") {
		t.Errorf("a warm-up printed for a run without one:\n%s", out.String())
	}
}
