package install

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hookwatch/hookwatch/hook"
)

// ServiceLabel is the launchd label of the collector's agent on macOS.
const ServiceLabel = "io.github.hookwatch.serve"

// serviceMark begins the comment every unit ServiceUnit and ForwarderUnit
// write carries: ReadServiceUnit reads back no unit without it.
const serviceMark = "Written by hookwatch service install"

// ServiceUnit returns the service definition that runs "<binary> serve" for
// the current user: a systemd user unit on Linux, a launchd agent on macOS.
// path is relative to the user's home directory
// (.config/systemd/user/hookwatch.service or
// Library/LaunchAgents/io.github.hookwatch.serve.plist); env becomes the
// service's environment (HOOKWATCH_ADDR, HOOKWATCH_DB …), sorted by name.
// Names that are not valid environment variable names are left out. The
// launchd agent's output is appended to hook.ServeLog in the home env
// names (HOOKWATCH_HOME, else ~/.hookwatch), as that of a collector a hook
// starts: launchd keeps none itself; systemd's goes to the journal. For
// other systems ServiceUnit returns "" and nil.
func ServiceUnit(goos, binary string, env map[string]string) (path string, content []byte) {
	return serviceUnit(goos, binary, "serve", "hookwatch collector: Claude Code hook events, dashboard and API", env)
}

// ForwarderUnit is ServiceUnit for a machine whose hooks send to a remote
// collector through a forwarder: the service runs "<binary> forward", at
// the same path (a machine's spool has one consumer: a collector or a
// forwarder). The launchd agent's output goes to hook.ForwardLog.
func ForwarderUnit(goos, binary string, env map[string]string) (path string, content []byte) {
	return serviceUnit(goos, binary, "forward", "hookwatch forwarder: this machine's hook events to a remote collector", env)
}

func serviceUnit(goos, binary, command, description string, env map[string]string) (path string, content []byte) {
	var names []string
	for k := range env {
		if validEnvName(k) {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	switch goos {
	case "linux":
		return systemdUnit(binary, command, description, names, env)
	case "darwin":
		logName := hook.ServeLog
		if command == "forward" {
			logName = hook.ForwardLog
		}
		// launchd gives the agent the user's HOME, which the home
		// defaults under.
		home := hook.Home(func(k string) string { return cmp.Or(env[k], os.Getenv(k)) })
		return launchdPlist(binary, command, filepath.Join(home, logName), names, env)
	}
	return "", nil
}

// validEnvName reports whether s is a portable environment variable name.
func validEnvName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func systemdUnit(binary, command, description string, names []string, env map[string]string) (string, []byte) {
	var b strings.Builder
	b.WriteString("# " + serviceMark + ".\n")
	b.WriteString("[Unit]\n")
	b.WriteString("Description=" + description + "\n")
	b.WriteString("Documentation=https://github.com/hookwatch/hookwatch\n")
	b.WriteString("\n[Service]\n")
	b.WriteString("Type=simple\n")
	fmt.Fprintf(&b, "ExecStart=%s %s\n", systemdQuote(binary, true), command)
	for _, k := range names {
		fmt.Fprintf(&b, "Environment=%s\n", systemdQuote(k+"="+env[k], false))
	}
	b.WriteString("Restart=on-failure\n")
	b.WriteString("RestartSec=2s\n")
	b.WriteString("\n[Install]\n")
	b.WriteString("WantedBy=default.target\n")
	return path.Join(".config", "systemd", "user", "hookwatch.service"), []byte(b.String())
}

// systemdQuote quotes s as one word of a unit file: double quotes with C
// escapes, "%" doubled (specifiers) and, in ExecStart, "$" doubled
// (variable expansion).
func systemdQuote(s string, exec bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '%':
			b.WriteString("%%")
		case '$':
			if exec {
				b.WriteString("$$")
			} else {
				b.WriteRune(r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func launchdPlist(binary, command, logPath string, names []string, env map[string]string) (string, []byte) {
	esc := func(s string) string {
		var b strings.Builder
		_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder never fails
		return b.String()
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- ` + serviceMark + `. -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + ServiceLabel + `</string>
	<key>ProgramArguments</key>
	<array>
		<string>` + esc(binary) + `</string>
		<string>` + command + `</string>
	</array>
`)
	if len(names) > 0 {
		b.WriteString("\t<key>EnvironmentVariables</key>\n\t<dict>\n")
		for _, k := range names {
			fmt.Fprintf(&b, "\t\t<key>%s</key>\n\t\t<string>%s</string>\n", esc(k), esc(env[k]))
		}
		b.WriteString("\t</dict>\n")
	}
	// launchd opens both for appending, as a hook opens the log of what
	// it starts, so the log's rotation by copy and truncation is safe; the
	// process rotates it itself while it runs (hook.RotateOwnLog), since
	// launchd never does.
	for _, k := range []string{"StandardOutPath", "StandardErrorPath"} {
		fmt.Fprintf(&b, "\t<key>%s</key>\n\t<string>%s</string>\n", k, esc(logPath))
	}
	// KeepAlive/SuccessfulExit=false restarts a crashed collector but not
	// one that was stopped cleanly.
	b.WriteString(`	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>ProcessType</key>
	<string>Background</string>
</dict>
</plist>
`)
	return path.Join("Library", "LaunchAgents", ServiceLabel+".plist"), []byte(b.String())
}
