package envflag

import "testing"

func TestOff(t *testing.T) {
	f := func(v string, want bool) {
		t.Helper()
		if got := Off(v); got != want {
			t.Errorf("Off(%q) = %v, want %v", v, got, want)
		}
	}
	for _, v := range []string{"0", "false", "off", "no", "OFF", " No ", "False\n"} {
		f(v, true)
	}
	for _, v := range []string{"", "1", "true", "on", "yes", "nope", "00"} {
		f(v, false)
	}
}
