package jsonstr

import (
	"errors"
	"math"
	"strconv"
)

// ErrFloat is AppendFloat's error for a number JSON cannot write.
var ErrFloat = errors.New("unsupported value: NaN or infinite number")

// AppendFloat appends f, a float of bits bits (32 or 64), as encoding/json
// writes it: no exponent between 1e-6 and 1e21, the shortest form that
// reads back the same, an exponent without a leading zero (e-9, not
// e-09). NaN and the infinities, which JSON has no form for, are
// ErrFloat, with dst as it was.
func AppendFloat(dst []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, ErrFloat
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}
