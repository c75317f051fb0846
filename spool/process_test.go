package spool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The helper processes of TestProcesses are this test binary re-executed with
// -test.run=^TestHelperProcess$ and these variables set.
const (
	helperRole  = "SPOOL_TEST_ROLE" // "writer" or "drainer"
	helperDir   = "SPOOL_TEST_DIR"
	helperName  = "SPOOL_TEST_NAME"
	helperCount = "SPOOL_TEST_COUNT"
	helperOut   = "SPOOL_TEST_OUT"  // drainer: file receiving the delivered ids
	helperStop  = "SPOOL_TEST_STOP" // drainer: stops once this file exists
)

// TestHelperProcess is not a test: it is the body of the writer and drainer
// processes that TestProcesses starts. Run directly, it skips.
func TestHelperProcess(t *testing.T) {
	switch os.Getenv(helperRole) {
	case "writer":
		if err := helperWriter(); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(3)
		}
	case "drainer":
		if err := helperDrainer(); err != nil {
			fmt.Fprintln(os.Stderr, "drainer:", err)
			os.Exit(3)
		}
	default:
		t.Skip("the body of TestProcesses' helper processes")
	}
}

// helperWriter appends records like the hook does: a new Spool for every
// Append; every fifth Append carries three records.
func helperWriter() error {
	dir, name := os.Getenv(helperDir), os.Getenv(helperName)
	n, err := strconv.Atoi(os.Getenv(helperCount))
	if err != nil {
		return err
	}
	for op, i := 0, 0; i < n; op++ {
		s, err := Open(dir, Options{})
		if err != nil {
			return err
		}
		size := 1
		if op%5 == 4 {
			size = 3
		}
		var batch [][]byte
		for ; i < n && len(batch) < size; i++ {
			batch = append(batch, rec(fmt.Sprintf("%s-%d", name, i)))
		}
		if err := s.Append(batch...); err != nil {
			return err
		}
	}
	return nil
}

// helperDrainer drains until the stop file exists, failing one delivery in
// five as a flaky collector would, and writes the ids of every batch it
// delivered successfully to its output file.
func helperDrainer() error {
	s, err := Open(os.Getenv(helperDir), Options{})
	if err != nil {
		return err
	}
	out, err := os.Create(os.Getenv(helperOut))
	if err != nil {
		return err
	}
	defer out.Close()
	w := bufio.NewWriter(out)
	errFlaky := errors.New("flaky collector")
	for {
		_, stopErr := os.Stat(os.Getenv(helperStop))
		n, err := s.Drain(context.Background(), 7, func(records [][]byte) error {
			if rand.IntN(5) == 0 {
				return errFlaky
			}
			for _, r := range records {
				fmt.Fprintf(w, "%s\n", r)
			}
			return w.Flush()
		})
		if err != nil && !errors.Is(err, errFlaky) {
			return err
		}
		if stopErr == nil {
			return w.Flush()
		}
		if n == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

func startHelper(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestProcesses runs 16 writer processes, each appending records with its own
// ids, while two drainer processes and a goroutine following the spool with a
// Tail deliver them
// through a collector that fails one batch in five. Afterwards every id must
// have been delivered at least once, and nothing dropped or corrupt.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 18 processes")
	}
	const writers, perWriter = 16, 150
	work := t.TempDir()
	dir := filepath.Join(work, "spool")
	stop := filepath.Join(work, "stop")

	var drainers []*exec.Cmd
	var outs []string
	for d := range 2 {
		out := filepath.Join(work, fmt.Sprintf("delivered-%d.jsonl", d))
		outs = append(outs, out)
		drainers = append(drainers, startHelper(t, helperRole+"=drainer", helperDir+"="+dir, helperOut+"="+out, helperStop+"="+stop))
	}

	var mu sync.Mutex
	delivered := map[string]int{}
	collect := func(records [][]byte) {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range records {
			delivered[idOf(t, r)]++
		}
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	// The goroutine is the consumer, as the collector is: it follows the
	// active segment with a Tail, rotated often, while the other drainers
	// claim it under its feet.
	tail := s.Tail()
	tail.rotateAt = 4096
	defer tail.close()
	wg.Go(func() {
		for ctx.Err() == nil {
			n, err := tail.Drain(ctx, 5, func(records [][]byte) error {
				if rand.IntN(5) == 0 {
					return errCollectorDown
				}
				collect(records)
				return nil
			})
			if err != nil && !errors.Is(err, errCollectorDown) && !errors.Is(err, context.Canceled) {
				t.Errorf("Drain: %v", err)
				return
			}
			if n == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	})

	var procs []*exec.Cmd
	for w := range writers {
		procs = append(procs, startHelper(t, helperRole+"=writer", helperDir+"="+dir,
			helperName+"="+fmt.Sprintf("w%d", w), helperCount+"="+strconv.Itoa(perWriter)))
	}
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Errorf("writer: %v", err)
		}
	}
	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range drainers {
		if err := p.Wait(); err != nil {
			t.Errorf("drainer: %v", err)
		}
	}
	cancel()
	wg.Wait()

	// Whatever the drainers left (a failed last batch) goes now.
	if _, err := s.Drain(context.Background(), 0, func(records [][]byte) error {
		collect(records)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, out := range outs {
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			collect([][]byte{[]byte(strings.TrimSuffix(line, "\n"))})
		}
	}

	missing, dups := 0, 0
	for w := range writers {
		for i := range perWriter {
			switch n := delivered[fmt.Sprintf("w%d-%d", w, i)]; {
			case n == 0:
				missing++
				if missing <= 10 {
					t.Errorf("record w%d-%d was never delivered", w, i)
				}
			case n > 1:
				dups += n - 1
			}
		}
	}
	if len(delivered) != writers*perWriter {
		t.Errorf("delivered %d distinct ids, want %d", len(delivered), writers*perWriter)
	}
	if missing > 0 {
		t.Fatalf("%d of %d records lost", missing, writers*perWriter)
	}
	st := mustStats(t, s)
	if st.Dropped != 0 || st.Corrupt != 0 || st.PendingBytes != 0 {
		t.Fatalf("Stats after the run = %+v, want nothing dropped, corrupt or pending", st)
	}
	t.Logf("%d records from %d processes delivered; %d re-deliveries", writers*perWriter, writers, dups)
}
