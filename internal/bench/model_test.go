package bench

import (
	"bytes"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

func TestTrend(t *testing.T) {
	for _, c := range []struct {
		slices []float64
		want   float64
	}{
		{[]float64{60, 70, 50, 55, 58, 150, 65, 66, 120}, 66.0 / 60},
		{[]float64{40, 80}, 2},
		{[]float64{50}, 1},
		{nil, 1},
	} {
		if got := trend(c.slices, 3); got != c.want {
			t.Errorf("trend(%v) = %v, want %v", c.slices, got, c.want)
		}
	}
}

func TestThirds(t *testing.T) {
	for _, c := range []struct {
		slices []float64
		want   float64
	}{
		// Thirds of three: (120+60+60)/3 over (60+60+60)/3, the late
		// collection counted once.
		{[]float64{60, 60, 60, 50, 55, 58, 120, 60, 60}, 80.0 / 60},
		// A third of ten is three slices; the middle four are not read.
		{[]float64{40, 50, 60, 1, 1, 1, 1, 50, 60, 70}, 60.0 / 50},
		{[]float64{40, 80}, 2},
		{[]float64{50}, 1},
		{nil, 1},
	} {
		if got := thirds(c.slices); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("thirds(%v) = %v, want %v", c.slices, got, c.want)
		}
	}
}

// TestProcSwitches: a process's threads that sleep count voluntary
// switches, and all the switches count those.
func TestProcSwitches(t *testing.T) {
	vol0, all0, err := procSwitches(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		time.Sleep(time.Millisecond) // each parks a thread, or the poller waits
	}
	vol1, all1, err := procSwitches(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if vol1-vol0 < 10 || all1 < vol1 || all1-all0 < vol1-vol0 {
		t.Fatalf("voluntary %d → %d, all %d → %d", vol0, vol1, all0, all1)
	}
	if _, _, err := procSwitches(-1); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}

// TestProcFaults: memory the process writes for the first time faults it
// in, a page at a time.
func TestProcFaults(t *testing.T) {
	before, err := procFaults(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	const pages = 4096
	page := os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, pages*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	for i := 0; i < len(mem); i += page {
		mem[i] = 1
	}
	after, err := procFaults(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after-before < pages/2 {
		t.Fatalf("%d page faults for %d pages written", after-before, pages)
	}
	if _, err := procFaults(-1); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}

func TestParseVia(t *testing.T) {
	got, err := ParseVia("spool, post,forward")
	if err != nil || !slices.Equal(got, []Via{ViaSpool, ViaPost, ViaForward}) {
		t.Fatalf("ParseVia(spool, post,forward) = %v, %v", got, err)
	}
	for _, bad := range []string{"", "spool,", "http", "Spool"} {
		if got, err := ParseVia(bad); err == nil {
			t.Errorf("ParseVia(%q) = %v, want an error", bad, got)
		}
	}
}

// TestGCSoFar reads the garbage collector's figures from a /metrics page
// written as the collector writes its own (metrics.WriteProcessMetrics):
// collections run between two readings count.
func TestGCSoFar(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		metrics.WriteProcessMetrics(w)
	}))
	defer srv.Close()
	sec0, cycles0, err := gcSoFar(srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		runtime.GC()
	}
	sec1, cycles1, err := gcSoFar(srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if cycles1-cycles0 < 3 {
		t.Errorf("collections %v then %v, across three runtime.GC", cycles0, cycles1)
	}
	if sec1 < sec0 {
		t.Errorf("GC CPU went back from %v to %v", sec0, sec1)
	}
	// A page without them is an error, not zeros.
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer bare.Close()
	if _, _, err := gcSoFar(bare.Client(), bare.URL); err == nil {
		t.Error("no error for a /metrics page without the collector's figures")
	}
}

// TestPrintModelRounds: over several rounds each slice's figure is the
// median of its runs, one slow slice in one run does not move it, and the
// measures are those of the medians; each way and number of sessions is
// summed up apart, in the order first run.
func TestPrintModelRounds(t *testing.T) {
	runs := []ModelRun{
		{Sessions: 3, Via: ViaSpool, SliceMicros: []float64{40, 40, 40, 40, 40, 40, 90}},
		{Sessions: 1, Via: ViaPost, SliceMicros: []float64{30, 60}},
		{Sessions: 3, Via: ViaSpool, SliceMicros: []float64{42, 90, 41, 40, 44, 41, 44}},
		{Sessions: 3, Via: ViaSpool, SliceMicros: []float64{38, 41, 39, 42, 41, 43, 42, 50}},
	}
	var out bytes.Buffer
	printModelRounds(&out, runs)
	want := "  3 session(s) each appended to the spool, as hooks hand them over, median of 3 runs per slice: 40 41 40 40 41 41 44\n" +
		"    median 41 µs/event, last/first slice 1.10 (last three / first three slices' medians 1.02, last third / first third's means 1.05)\n" +
		"  1 session(s) POSTed to /v1/events in batches as the SDK gathers them, median of 1 runs per slice: 30 60\n" +
		"    median 60 µs/event, last/first slice 2.00 (last three / first three slices' medians 2.00, last third / first third's means 2.00)\n"
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
