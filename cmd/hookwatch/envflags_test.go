package main

import (
	"testing"
)

// TestServeNamesRefusedVariable: a value serve refuses once its flags are
// parsed (an age under an hour) names the variable that set it, as a value
// the flag itself refuses does; given on the command line, it names none.
func TestServeNamesRefusedVariable(t *testing.T) {
	freshHome(t)
	t.Setenv("HOOKWATCH_RETAIN", "1m")
	_, _, err := hw(t, "", "serve", "--addr", "127.0.0.1:0")
	if want := `usage error: HOOKWATCH_RETAIN="1m", the default of --retain: --retain 1m0s deletes every session older than 1m0s: refused under 1h0m0s (a month is 30d; m is minutes)`; err == nil || err.Error() != want {
		t.Errorf("serve with HOOKWATCH_RETAIN=1m: %v; want %q", err, want)
	}
	t.Setenv("HOOKWATCH_RETAIN", "90d")
	_, _, err = hw(t, "", "serve", "--addr", "127.0.0.1:0", "--retain", "1m")
	if want := "usage error: --retain 1m0s deletes every session older than 1m0s: refused under 1h0m0s (a month is 30d; m is minutes)"; err == nil || err.Error() != want {
		t.Errorf("serve --retain 1m with HOOKWATCH_RETAIN=90d: %v; want %q", err, want)
	}
	t.Setenv("HOOKWATCH_RETAIN", "")
	t.Setenv("HOOKWATCH_ARCHIVE_RETAIN", "1m")
	_, _, err = hw(t, "", "forward", "--url", "https://collector.invalid")
	if want := `usage error: HOOKWATCH_ARCHIVE_RETAIN="1m", the default of --archive-retain: --archive-retain 1m0s deletes the compaction archive of every session older than 1m0s: refused under 1h0m0s (a month is 30d; m is minutes)`; err == nil || err.Error() != want {
		t.Errorf("forward with HOOKWATCH_ARCHIVE_RETAIN=1m: %v; want %q", err, want)
	}
}
