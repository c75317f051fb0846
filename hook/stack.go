package hook

// growStackBytes is the stack the hook's deepest path needs: decoding,
// redaction, encoding and the spool go past 16 KiB but not past 32 KiB.
const growStackBytes = 32 << 10

// growStack grows the running goroutine's stack to hold growStackBytes at
// once, while the stack is still shallow. A goroutine starts with 2 KiB and
// grows by doubling; each growth copies the stack and walks every frame on
// it through the binary's function tables, which a process that just
// started has not touched yet. Four such growths cost the hook ~0.14 ms of
// its ~2.3 ms (interleaved medians of 400 runs: 1.25× the floor without,
// 1.18–1.20× with; 16 KiB gained half of it, 64 KiB less, since larger
// stacks come from the heap). CockroachDB's growstack package does the same
// for its storage paths.
//
//go:noinline
func growStack() {
	var buf [growStackBytes]byte
	useStack(buf[:])
}

// useStack keeps growStack's frame from being optimised away.
//
//go:noinline
func useStack([]byte) {}
