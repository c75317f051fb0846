package bench

import "testing"

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
