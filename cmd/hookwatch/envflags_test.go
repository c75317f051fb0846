package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/doctor"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// refusedSettings are values serve and forward refuse to start on, each
// with the args a hook starts the command with and what it says.
var refusedSettings = []struct {
	command string
	args    []string
	env     map[string]string
	want    doctor.Refusal
}{
	{"serve", []string{"--addr", "127.0.0.1:0"}, map[string]string{"HOOKWATCH_RETAIN": "90 days"}, doctor.Refusal{Var: "HOOKWATCH_RETAIN", Value: "90 days", Example: "90d",
		Says: `hookwatch: usage error: HOOKWATCH_RETAIN="90 days", the default of --retain: "90 days": not a positive duration (90d, 2w, 36h)`}},
	{"serve", []string{"--addr", "127.0.0.1:0"}, map[string]string{"HOOKWATCH_RETAIN": "1m"}, doctor.Refusal{Var: "HOOKWATCH_RETAIN", Value: "1m", Example: "90d",
		Says: `hookwatch: usage error: HOOKWATCH_RETAIN="1m", the default of --retain: --retain 1m0s deletes every session older than 1m0s: refused under 1h0m0s (a month is 30d; m is minutes)`}},
	{"serve", []string{"--addr", "127.0.0.1:0"}, map[string]string{"HOOKWATCH_RETAIN_SIZE": "lots"}, doctor.Refusal{Var: "HOOKWATCH_RETAIN_SIZE", Value: "lots", Example: "10GB",
		Says: `hookwatch: usage error: HOOKWATCH_RETAIN_SIZE="lots", the default of --retain-size: not a positive size (500MB, 10GB, 1GiB)`}},
	{"serve", []string{"--addr", "127.0.0.1:0"}, map[string]string{"HOOKWATCH_SIGNAL_READ_REPEATS": "0"}, doctor.Refusal{Var: "HOOKWATCH_SIGNAL_READ_REPEATS", Value: "0", Example: "5",
		Says: `hookwatch: usage error: HOOKWATCH_SIGNAL_READ_REPEATS="0", the default of --signal-read-repeats: --signal-read-repeats 0: the --signal-* flags take a count from 1 to 1000`}},
	{"serve", []string{"--addr", "127.0.0.1:0"}, map[string]string{"HOOKWATCH_SIGNAL_STALLED_AFTER": "10"}, doctor.Refusal{Var: "HOOKWATCH_SIGNAL_STALLED_AFTER", Value: "10", Example: "5m0s",
		Says: `hookwatch: usage error: HOOKWATCH_SIGNAL_STALLED_AFTER="10", the default of --signal-stalled-after: parse error`}},
	{"forward", []string{"--url", "https://collector.invalid"}, map[string]string{"HOOKWATCH_ARCHIVE_RETAIN": "1m"}, doctor.Refusal{Var: "HOOKWATCH_ARCHIVE_RETAIN", Value: "1m", Example: "30d",
		Says: `hookwatch: usage error: HOOKWATCH_ARCHIVE_RETAIN="1m", the default of --archive-retain: --archive-retain 1m0s deletes the compaction archive of every session older than 1m0s: refused under 1h0m0s (a month is 30d; m is minutes)`}},
}

// TestSettingRefusals: doctor's reading of serve's and forward's settings
// (settingRefusals) names each value the command refuses, with the line
// the real command prints as it refuses to start on it; the value it
// gives as an example is one the command takes.
func TestSettingRefusals(t *testing.T) {
	bin := testbin.Build(t, "./cmd/hookwatch")
	for _, c := range refusedSettings {
		got := settingRefusals(c.command, c.args, func(k string) string { return c.env[k] })
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%s with %v:\n got %+v\nwant %+v", c.command, c.env, got, []doctor.Refusal{c.want})
			continue
		}
		// The command itself, started as a hook starts it.
		cmd := exec.Command(bin, append([]string{c.command}, c.args...)...)
		cmd.Env = append(os.Environ(), "HOOKWATCH_HOME="+filepath.Join(t.TempDir(), "home"), "HOOKWATCH_DB=", "HOOKWATCH_TOKEN=")
		for k, v := range c.env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		var ee *exec.ExitError
		if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 2 || stderr.String() != c.want.Says+"\n" {
			t.Errorf("hookwatch %s with %v: %v, stderr %q; want exit status 2 and %q", c.command, c.env, err, stderr.String(), c.want.Says)
		}
		ok := map[string]string{c.want.Var: c.want.Example}
		if got := settingRefusals(c.command, c.args, func(k string) string { return ok[k] }); len(got) != 0 {
			t.Errorf("%s with its example %v: %+v", c.command, ok, got)
		}
	}
}

// TestSettingRefusalsGoodAndMany: values the commands take are no
// refusal; several refused are each named; a flag the starter passes
// overrides its variable, which is then no refusal.
func TestSettingRefusalsGoodAndMany(t *testing.T) {
	good := map[string]string{"HOOKWATCH_RETAIN": "90d", "HOOKWATCH_RETAIN_SIZE": "10GB", "HOOKWATCH_SIGNAL_READ_REPEATS": "3",
		"HOOKWATCH_SIGNAL_STALLED_AFTER": "2m", "HOOKWATCH_ARCHIVE_RETAIN": "off", "HOOKWATCH_AUDIT_RETAIN": "26w", "HOOKWATCH_AUDIT_DIR": t.TempDir()}
	for _, command := range []string{"serve", "forward"} {
		if got := settingRefusals(command, nil, func(k string) string { return good[k] }); len(got) != 0 {
			t.Errorf("%s with %v: %+v", command, good, got)
		}
	}
	bad := map[string]string{"HOOKWATCH_RETAIN": "1m", "HOOKWATCH_RETAIN_SIZE": "lots", "HOOKWATCH_SIGNAL_OUTLIER_FACTOR": "0.5", "HOOKWATCH_ADDR": "7421"}
	var vars []string
	for _, r := range settingRefusals("serve", nil, func(k string) string { return bad[k] }) {
		vars = append(vars, r.Var)
	}
	slices.Sort(vars)
	if want := []string{"HOOKWATCH_ADDR", "HOOKWATCH_RETAIN", "HOOKWATCH_RETAIN_SIZE", "HOOKWATCH_SIGNAL_OUTLIER_FACTOR"}; !slices.Equal(vars, want) {
		t.Errorf("serve with %v refuses %v, want %v", bad, vars, want)
	}
	// As a hook starts it: its --addr wins over HOOKWATCH_ADDR.
	onlyAddr := func(k string) string { return map[string]string{"HOOKWATCH_ADDR": "7421"}[k] }
	if got := settingRefusals("serve", []string{"--addr", "127.0.0.1:7421"}, onlyAddr); len(got) != 0 {
		t.Errorf("serve --addr with HOOKWATCH_ADDR=7421: %+v", got)
	}

}

// TestDoctorStartSettings: doctor fails on each setting of this
// environment the collector or the forwarder the hooks start refuses,
// quoting what the command says and naming the fix; on one of the user
// service's unit, with the fix that rewrites the unit; and, the
// environment fine, on the refusal a start of the collector left last in
// serve.log (the agent's environment may differ).
func TestDoctorStartSettings(t *testing.T) {
	bin := testbin.Build(t, "./cmd/hookwatch") // before newTestEnv takes go off PATH
	e := newTestEnv(t)
	mustHW(t, "install")
	hookURL := os.Getenv("HOOKWATCH_URL")
	for _, c := range refusedSettings {
		name, who := "collector settings", "the collector this home's hooks start (with the agent's environment)"
		if c.command == "forward" {
			name, who = "forwarder settings", "the forwarder this home's hooks start (with the agent's environment)"
			t.Setenv("HOOKWATCH_URL", "https://collector.invalid")
		}
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		r, err := runDoctorJSON(t, "--no-round-trip")
		wantExit1(t, err)
		got := check(t, r, name)
		want := doctor.Check{Name: name, Status: doctor.Fail,
			Message: fmt.Sprintf("%s=%q in this environment: %s refuses to start on it, and the events wait in the spool", c.want.Var, c.want.Value, who),
			Details: []string{c.command + " says: " + c.want.Says},
			Fix:     "unset " + c.want.Var + ", or set a value it takes, such as " + c.want.Var + "=" + c.want.Example + ", where the agents start (their profile too)"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("doctor with %v:\n got %+v\nwant %+v", c.env, got, want)
		}
		// The collector check does not promise the start that refuses.
		if col := check(t, r, "collector"); c.command == "serve" && (col.Status != doctor.Fail || !strings.Contains(col.Message, "the collector the next hook event starts refuses a setting of this environment (collector settings says which)")) {
			t.Errorf("doctor with %v: collector check %+v", c.env, col)
		}
		for k := range c.env {
			t.Setenv(k, "")
		}
		t.Setenv("HOOKWATCH_URL", hookURL)
	}
	r, _ := runDoctorJSON(t, "--no-round-trip")
	wantCheck(t, r, "collector settings", doctor.OK, "the collector this home's hooks start (with the agent's environment) takes the HOOKWATCH_* settings of this environment")

	// The user service's unit for this home sets one serve refuses.
	unit, content := install.ServiceUnit(runtime.GOOS, e.self, map[string]string{"HOOKWATCH_RETAIN": "1m", "HOOKWATCH_HOME": e.hwHome})
	if unit != "" {
		unit = filepath.Join(e.home, unit)
		if err := os.MkdirAll(filepath.Dir(unit), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(unit, content, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := runDoctorJSON(t, "--no-round-trip")
		wantExit1(t, err)
		wantCheck(t, r, "service settings", doctor.Fail,
			`HOOKWATCH_RETAIN="1m" in the service's unit: the user service (`+unit+`, hookwatch serve) refuses to start on it, and the events wait in the spool`,
			`serve says: hookwatch: usage error: HOOKWATCH_RETAIN="1m", the default of --retain: --retain 1m0s`,
			"fix: HOOKWATCH_RETAIN=90d hookwatch service install   # or HOOKWATCH_RETAIN= hookwatch service install, which drops it from the unit")
		os.Remove(unit)
	}

	// A collector a hook started, in the agent's environment, refused its
	// setting: serve.log ends with what it said.
	t.Setenv("HOOKWATCH_RETAIN_SIZE", "lots")
	p, err := hook.StartServeProcess(bin, e.hwHome, testbin.FreeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := p.Wait(); err != nil || st.ExitCode() != 2 {
		t.Fatalf("serve with HOOKWATCH_RETAIN_SIZE=lots: %v %v; want exit status 2", st, err)
	}
	t.Setenv("HOOKWATCH_RETAIN_SIZE", "")
	r, err = runDoctorJSON(t, "--no-round-trip")
	wantExit1(t, err)
	log := filepath.Join(e.hwHome, hook.ServeLog)
	wantCheck(t, r, "collector's last start", doctor.Fail,
		"the last start of hookwatch serve refused its setting HOOKWATCH_RETAIN_SIZE ("+log+"), in the environment it was started with (the agent's, or the service's): none runs now, and the events wait in the spool",
		`serve said: hookwatch: usage error: HOOKWATCH_RETAIN_SIZE="lots", the default of --retain-size: not a positive size (500MB, 10GB, 1GiB)`,
		"fix: unset HOOKWATCH_RETAIN_SIZE where the agents start")
}

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
