package attribution

import (
	"testing"
	"unsafe"
)

// TestItemSize holds an item in the 144-byte size class: a group keeps an
// item for every envelope applied, so each byte past the class costs a
// whole next class (160) per event, in memory, page faults and marking
// (collector's BenchmarkModelHeap).
func TestItemSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are of 64-bit platforms")
	}
	if n := unsafe.Sizeof(item{}); n > 144 {
		t.Errorf("item is %d bytes, past the 144-byte size class", n)
	}
}

// TestToolCallSize holds a ToolCall in the 448-byte size class, and under
// the 512 bytes past which the garbage collector marks an object pointer
// by pointer rather than with its span: a group keeps one for every call,
// most of which leave its CallDetail empty.
func TestToolCallSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are of 64-bit platforms")
	}
	if n := unsafe.Sizeof(ToolCall{}); n > 448 {
		t.Errorf("ToolCall is %d bytes, past the 448-byte size class", n)
	}
}

// TestCallStateSize holds a callState in the 144-byte size class: a group
// keeps one for every call, most of which succeed and need none of its
// rare state (callRare), which is kept apart so that they pay nothing for
// it.
func TestCallStateSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are of 64-bit platforms")
	}
	if n := unsafe.Sizeof(callState{}); n > 144 {
		t.Errorf("callState is %d bytes, past the 144-byte size class", n)
	}
}
