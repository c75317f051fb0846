package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"syscall"
	"time"
)

// PagesOptions configures Pages.
type PagesOptions struct {
	// MiB is how much memory the process grows to; 0 = 4096.
	MiB int
}

// pagesChunk is the memory Pages maps and writes at a time.
const pagesChunk = 64 << 20

// Pages measures what the kernel of this machine charges for the first
// write to each page of fresh anonymous memory as a process grows to
// o.MiB, per chunk of 64 MiB: the system time the writes cost over the
// page faults they took. It is what to read the model benchmark's kernel
// figures by. On a virtual machine whose host backs the guest's memory
// only when it is first touched, and takes back what the guest frees, a
// page the guest has not used lately costs several times one it has: the
// late slices of a run whose heap grows into such pages spend more in the
// kernel at the same faults per event. The memory is unmapped at the end.
func Pages(ctx context.Context, w io.Writer, o PagesOptions) error {
	if o.MiB <= 0 {
		o.MiB = 4096
	}
	fmt.Fprintf(w, "pages: the first write to each page of %d MiB of fresh memory, %d MiB at a time\n", chunksOf(o.MiB)*(pagesChunk>>20), pagesChunk>>20)
	perFault, err := touchFresh(ctx, o.MiB)
	if err != nil {
		return err
	}
	// By stretches of 512 MiB: where the cost changes is the point of the
	// figure, not one median.
	const per = 512 / (pagesChunk >> 20)
	fmt.Fprintf(w, "  µs of system time per page fault, median per %d MiB:", per*(pagesChunk>>20))
	for i := 0; i < len(perFault); i += per {
		fmt.Fprintf(w, " %.1f", median(perFault[i:min(i+per, len(perFault))]))
	}
	lo, hi := slices.Min(perFault), slices.Max(perFault)
	fmt.Fprintf(w, "\n  cheapest %d MiB %.1f µs per fault, dearest %.1f (%.1f×)\n", pagesChunk>>20, lo, hi, hi/lo)
	return nil
}

// chunksOf is the number of chunks touchFresh writes for mib MiB.
func chunksOf(mib int) int { return max(mib/(pagesChunk>>20), 1) }

// touchFresh maps mib MiB of anonymous memory, 64 MiB at a time, writes a
// byte to each page, and unmaps it all, which gives the pages back to the
// kernel: the next process to grow gets pages used lately (the model
// benchmark's warm-up). It returns the system time per page fault of each
// chunk, in µs.
func touchFresh(ctx context.Context, mib int) ([]float64, error) {
	chunks := chunksOf(mib)
	pageSize := syscall.Getpagesize()
	var mapped [][]byte
	defer func() {
		for _, b := range mapped {
			syscall.Munmap(b)
		}
	}()
	perFault := make([]float64, 0, chunks)
	for range chunks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := syscall.Mmap(-1, 0, pagesChunk, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			return nil, fmt.Errorf("cannot map %d MiB more after %d: %w", pagesChunk>>20, len(mapped)*(pagesChunk>>20), err)
		}
		mapped = append(mapped, b)
		sys0, faults0 := selfFaults()
		for i := 0; i < len(b); i += pageSize {
			b[i] = 1
		}
		sys1, faults1 := selfFaults()
		if faults1 > faults0 {
			perFault = append(perFault, float64((sys1-sys0).Nanoseconds())/1e3/float64(faults1-faults0))
		}
	}
	if len(perFault) == 0 {
		return nil, fmt.Errorf("the writes took no page faults")
	}
	return perFault, nil
}

// selfFaults returns the process's system time and minor page faults so
// far.
func selfFaults() (time.Duration, int64) {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return 0, 0
	}
	return time.Duration(r.Stime.Nano()), int64(r.Minflt)
}
