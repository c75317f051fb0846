package swar

import (
	"math/rand/v2"
	"testing"
)

// TestAgainstBytes holds each test to the byte-by-byte answer, for every
// byte value at every position among random neighbours, and random words.
func TestAgainstBytes(t *testing.T) {
	stops := []byte{0, '"', '\\', '<', '>', '&', 0x1f, 0x20, 0x7f, 0x80, 0xe2, 0xff}
	check := func(b []byte) {
		t.Helper()
		x := Load(b, 0)
		if y := LoadString(string(b), 0); y != x {
			t.Fatalf("LoadString(%q) = %#x, Load %#x", b, y, x)
		}
		for _, c := range stops {
			if got, want := Has(x, c) != 0, bytesAny(b, func(d byte) bool { return d == c }); got != want {
				t.Fatalf("Has(%q, %#x) = %v, want %v", b, c, got, want)
			}
		}
		for _, n := range []byte{1, 0x20, 0x21, 0x80} {
			if got, want := Below(x, n) != 0, bytesAny(b, func(d byte) bool { return d < n }); got != want {
				t.Fatalf("Below(%q, %#x) = %v, want %v", b, n, got, want)
			}
		}
		if got, want := NonASCII(x) != 0, bytesAny(b, func(d byte) bool { return d >= 0x80 }); got != want {
			t.Fatalf("NonASCII(%q) = %v, want %v", b, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 8)
	for pos := 0; pos < 8; pos++ {
		for v := 0; v < 256; v++ {
			for k := 0; k < 20; k++ {
				for i := range b {
					b[i] = stops[r.IntN(len(stops))] + byte(r.IntN(3)) - 1
				}
				b[pos] = byte(v)
				check(b)
			}
		}
	}
	for k := 0; k < 200000; k++ {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		check(b)
	}
}

func bytesAny(b []byte, f func(byte) bool) bool {
	for _, c := range b {
		if f(c) {
			return true
		}
	}
	return false
}
