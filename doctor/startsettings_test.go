package doctor

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/install"
)

// TestStartSettingsAsked: the settings are checked as the hooks start the
// process their URL needs — serve with the URL's address, forward with the
// URL — in this environment, and as the user service's unit for this home
// runs its command, with no flag, in the unit's; a last line of serve.log
// that is no refusal of a setting is no failure.
func TestStartSettingsAsked(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "hw")
	vars := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": home, "HOOKWATCH_RETAIN": "shell"}
	type asked struct {
		command string
		args    []string
		retain  string
	}
	var got []asked
	o := Options{Getenv: func(k string) string { return vars[k] }, Now: time.Now,
		CheckSettings: func(command string, args []string, getenv func(string) string) []Refusal {
			got = append(got, asked{command, args, getenv("HOOKWATCH_RETAIN")})
			return nil
		}}
	e := &env{Options: o, home: home, userHome: vars["HOME"], url: "http://127.0.0.1:7431"}
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "serve.log"), []byte("hookwatch serve: listening on http://127.0.0.1:7431\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := e.checkStartSettings()
	if want := []asked{{"serve", []string{"--addr", "127.0.0.1:7431"}, "shell"}}; !reflect.DeepEqual(got, want) || len(cs) != 1 || cs[0].Status != OK {
		t.Errorf("a local URL: asked %+v, checks %+v; want %+v and one ok", got, cs, want)
	}

	got, e.url = nil, "https://hookwatch.example.com"
	e.checkStartSettings()
	if want := []asked{{"forward", []string{"--url", "https://hookwatch.example.com"}, "shell"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("a URL a forwarder delivers to: asked %+v, want %+v", got, want)
	}

	unit, content := install.ForwarderUnit(runtime.GOOS, "/usr/local/bin/hookwatch", map[string]string{"HOOKWATCH_RETAIN": "unit", "HOOKWATCH_HOME": home})
	if unit == "" {
		t.Skip("no service manager on " + runtime.GOOS)
	}
	unit = writeUnit(t, vars["HOME"], unit, content)
	got = nil
	e.checkStartSettings()
	if want := []asked{{"forward", []string{"--url", "https://hookwatch.example.com"}, "shell"}, {"forward", nil, "unit"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("with the forwarder's unit: asked %+v, want %+v", got, want)
	}

	e.CheckSettings = nil
	if cs := e.checkStartSettings(); len(cs) != 0 {
		t.Errorf("no CheckSettings: %+v", cs)
	}
}
