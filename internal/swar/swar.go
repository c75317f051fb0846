// Package swar tests eight bytes at once, as the bytes of one 64-bit word
// (SIMD within a register), for the scans of long JSON strings: tool output
// is mostly plain text, and a word with no byte of interest is skipped whole.
//
// Each test returns a word that is zero if and only if no byte of x passes
// it; the tests of one scan are ORed together and the result compared with
// zero. A nonzero result says only that some byte passed, not which one (a
// borrow can mark the byte after it): the caller finds it byte by byte.
package swar

import "encoding/binary"

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// Load returns the eight bytes of b from i (i+8 ≤ len(b)), the first the
// lowest.
func Load(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }

// LoadString is Load of a string, without copying it.
func LoadString(s string, i int) uint64 {
	w := s[i : i+8]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// Has is nonzero when a byte of x is c: x^c has a zero byte there, the only
// place subtracting one from each byte borrows into a clear high bit.
func Has(x uint64, c byte) uint64 {
	y := x ^ ones*uint64(c)
	return (y - ones) &^ y & highs
}

// Below is nonzero when a byte of x is below n, for n ≤ 0x80 (Below(x, 0x20):
// a control character).
func Below(x uint64, n byte) uint64 { return (x - ones*uint64(n)) &^ x & highs }

// NonASCII is nonzero when a byte of x is 0x80 or above.
func NonASCII(x uint64) uint64 { return x & highs }
