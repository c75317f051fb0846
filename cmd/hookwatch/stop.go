package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/spool"
)

func init() {
	register(command{
		name:    "stop",
		summary: "stop the collector (or the forwarder) running for this HOOKWATCH_HOME",
		run:     runStop,
	})
}

// stopWait bounds how long stop waits for the collector to exit: serve
// itself gives in-flight requests collector.DefaultShutdownTimeout.
const stopWait = collector.DefaultShutdownTimeout + 5*time.Second

// stopFlagSet defines stop's flags, none: the one definition runStop parses
// and the docs' command lines are checked against.
func stopFlagSet(stdout, stderr io.Writer) *flag.FlagSet {
	return newFlagSet("stop", "stop\n\n"+
		"Stops the collector, or the forwarder (hookwatch forward), that runs for this\n"+
		"HOOKWATCH_HOME (the one holding $HOOKWATCH_HOME/spool/consumer.lock, whether a\n"+
		"hook started it or you did) with SIGTERM, and waits until it has exited: what it\n"+
		"accepted is committed first. One that 'hookwatch service install' runs exits\n"+
		"cleanly, so the service manager leaves it stopped, but starts it again at the\n"+
		"next login: to stop it for good, systemctl --user disable --now hookwatch\n"+
		"(launchd: launchctl unload -w <its plist>).", stdout, stderr)
}

// runStop is `hookwatch stop`.
func runStop(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := stopFlagSet(stdout, stderr)
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	home := hook.Home(os.Getenv)
	c, err := stopCollector(ctx, home, stopWait)
	switch {
	case errors.Is(err, errNotRunning):
		fmt.Fprintf(stdout, "hookwatch stop: no collector is running for %s\n", home)
		if base, _, err := collectorURL(); err == nil && healthy(ctx, base, time.Second) {
			fmt.Fprintf(stdout, "(a collector answers at %s, but for another HOOKWATCH_HOME, or it is too old to say: stop it where it runs)\n", base)
		}
		return nil
	case err != nil:
		return err
	}
	if url, ok := strings.CutPrefix(c.Addr, hook.ForwarderAddr("")); ok {
		fmt.Fprintf(stdout, "hookwatch stop: stopped the forwarder to %s (pid %d)\n", url, c.PID)
		return nil
	}
	fmt.Fprintf(stdout, "hookwatch stop: stopped the collector at http://%s (pid %d)\n", c.Addr, c.PID)
	return nil
}

// stopCollector sends SIGTERM to the collector attached to home's spool and
// waits up to wait for its process to end. It returns errNotRunning when
// no collector holds the lock.
func stopCollector(ctx context.Context, home string, wait time.Duration) (spool.ConsumerInfo, error) {
	c, ok := runningCollector(home)
	if !ok {
		return c, errNotRunning
	}
	if c.PID <= 0 {
		return c, fmt.Errorf("cannot stop the collector at %s: its lock does not name its process (it predates hookwatch stop); stop it where it runs", c.Addr)
	}
	if !isConsumer(c.PID) {
		return c, fmt.Errorf("cannot stop the collector at %s: process %d is not hookwatch serve or forward", c.Addr, c.PID)
	}
	if err := syscall.Kill(c.PID, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return c, nil // it ended in the meantime
		}
		return c, fmt.Errorf("cannot stop the collector (pid %d): %w", c.PID, err)
	}
	deadline := time.Now().Add(wait)
	for !exited(c.PID) {
		if time.Now().After(deadline) {
			return c, fmt.Errorf("the collector (pid %d) is still running %v after SIGTERM", c.PID, wait)
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return c, nil
}

// isConsumer reports whether process pid runs `hookwatch serve` or
// `hookwatch forward`, the two that hold a spool's lock, where the system
// says (Linux's /proc): a lock left by a process whose pid was since
// reused must not make stop signal another program. Elsewhere it trusts
// the lock, which only the collector or the forwarder itself writes.
func isConsumer(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return true
	}
	args := bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0})
	for _, a := range args[min(1, len(args)):] {
		if string(a) == "serve" || string(a) == "forward" {
			return true
		}
	}
	return false
}

// exited reports whether process pid has ended: it no longer exists, or it
// is a zombie (its parent, the process that started it, has not reaped it
// yet; Linux's /proc tells).
func exited(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state …: comm may hold spaces and parentheses.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] == 'Z'
	}
	return false
}
