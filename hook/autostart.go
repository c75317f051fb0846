package hook

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// autostartGap is how long after one hook started a collector no other
// hook starts another: the first needs that long at most to listen.
const autostartGap = 10 * time.Second

// autostart starts `hookwatch serve` in the background for a hook that found
// no collector listening on its loopback URL, so that a user who installed
// the hooks sees the dashboard without running anything else. It is
// best-effort and returns why it did nothing, if it did nothing.
//
// One at most: the parallel hooks of a burst of subagents all find the
// collector down at once. Each takes a non-blocking lock; the one that gets
// it looks at the time of the last start (the lock file's mtime) and starts
// a collector only if none was started within autostartGap.
//
// Only the real binaries start one: `hookwatch hook` starts itself, and
// `hookwatch-hook` starts the `hookwatch` beside it. Anything else (a test
// binary) never spawns a server.
func (cfg Config) autostart(ep endpoint) error {
	if !cfg.Autostart {
		return errors.New("autostart is off (HOOKWATCH_AUTOSTART=0)")
	}
	if !ep.addr.IsLoopback() {
		return errors.New("the collector URL is not on this machine")
	}
	if ForTeamServer(cfg.TokenSource, cfg.Token, cfg.Home) {
		return errors.New("the collector URL names a team server (the home holds its token): the spool keeps the events for it")
	}
	return cfg.startOnce("autostart.lock", "collector", func(bin string) error { return StartServe(bin, cfg.Home, ep.addr.String()) })
}

// ForTeamServer reports whether the token LookupToken found, from src, is a
// team server user's: one that 'hookwatch install --token' put in home's
// TokenFile, read from there or from HOOKWATCH_TOKEN exported with the same
// token (as install tells http hooks' users to, from the file: the command
// hooks of the same profile then read it from the environment). A hook
// holding one starts no collector at a loopback URL it finds down (an SSH
// tunnel to the server, say, while it is closed): that collector would
// answer at the server's address with a database of its own, open to anyone
// on the machine, and the events would stay in it instead of waiting in the
// spool for the server. install and doctor ask it too, to say what the next
// hook does and to judge such a machine as the server's developer's. A
// HOOKWATCH_TOKEN of its own, another than the file's, is no team server's
// known to this home: a local collector may require it.
func ForTeamServer(src TokenSource, token, home string) bool {
	switch {
	case token == "":
		return false
	case src == TokenFromFile:
		return true
	}
	return src == TokenFromEnv && token == ReadToken(home)
}

// autostartForward starts `hookwatch forward` in the background for a hook
// whose URL only a forwarder can reach, one at most as autostart does.
func (cfg Config) autostartForward() error {
	if !cfg.Autostart {
		return errors.New("autostart is off (HOOKWATCH_AUTOSTART=0)")
	}
	return cfg.startOnce("forward.lock", "forwarder", func(bin string) error {
		return startDetached(bin, cfg.Home, ForwardLog, "forward", "--url", cfg.URL)
	})
}

// startOnce calls start with the full binary unless another hook holds the
// lock file lockName in the home or started something under it within
// autostartGap; what names what start starts, for the errors that say why
// it did not.
func (cfg Config) startOnce(lockName, what string, start func(bin string) error) error {
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		return err
	}
	lockPath := filepath.Join(cfg.Home, lockName)
	fd, err := syscall.Open(lockPath, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return comingUp("another hook is starting the " + what)
	}
	fi, err := os.Stat(lockPath)
	if err != nil {
		return err
	}
	if fi.Size() > 0 && cfg.now().Sub(fi.ModTime()) < autostartGap {
		stamp := make([]byte, len(stampFailed))
		if n, _ := syscall.Pread(fd, stamp, 0); string(stamp[:n]) == stampFailed {
			return errors.New("a " + what + " could not be started moments ago")
		}
		return comingUp("a " + what + " was started moments ago")
	}
	// Stamp the start before it happens: a failed start must not be retried
	// by every hook of the burst either.
	if err := stampStart(fd, lockPath, stampStarted, cfg.now()); err != nil {
		return err
	}
	bin, err := serveBinary()
	if err == nil {
		err = start(bin)
	}
	if err != nil {
		// The hooks of the gap say so too, rather than wait quietly for
		// what will not come up.
		_ = stampStart(fd, lockPath, stampFailed, cfg.now())
		return err
	}
	return nil
}

// The contents of a start's lock file: what the last start did.
const (
	stampStarted = "started\n"
	stampFailed  = "failed\n"
)

// stampStart writes stamp to the lock file open as fd at path and dates
// it now, the time autostartGap counts from.
func stampStart(fd int, path, stamp string, now time.Time) error {
	if err := syscall.Ftruncate(fd, 0); err != nil {
		return err
	}
	if _, err := syscall.Pwrite(fd, []byte(stamp), 0); err != nil {
		return err
	}
	_ = os.Chtimes(path, now, now)
	return nil
}

// comingUp is startOnce's answer when another hook started what it would
// start, or is starting it, moments ago: how a collector or forwarder
// normally comes up, and no failure (isComingUp).
type comingUp string

func (e comingUp) Error() string { return string(e) }

// isComingUp reports whether err, from autostart or autostartForward, only
// says that another hook's start is under way.
func isComingUp(err error) bool {
	var c comingUp
	return errors.As(err, &c)
}

// StartServe starts `bin serve --addr addr` in the background for the data
// directory home, its output appended to home/serve.log, and returns without
// waiting for it to listen. The collector runs in a session of its own: it
// outlives its starter, and the starter's Ctrl-C does not reach it.
func StartServe(bin, home, addr string) error {
	return startDetached(bin, home, ServeLog, "serve", "--addr", addr)
}

// StartServeProcess is StartServe for a starter that stays to watch the
// collector come up (a command of the CLI, not a hook): it returns the
// process, not released, so that the starter can Wait for it and tell at
// once that it exited — its address taken, a setting it refuses — rather
// than wait for an answer that will not come.
func StartServeProcess(bin, home, addr string) (*os.Process, error) {
	return spawnDetached(bin, home, ServeLog, "serve", "--addr", addr)
}

// startDetached starts bin with args in a session of its own, for the data
// directory home, its output appended to home/logName, and lets it go.
func startDetached(bin, home, logName string, args ...string) error {
	p, err := spawnDetached(bin, home, logName, args...)
	if err != nil {
		return err
	}
	return p.Release()
}

// spawnDetached is startDetached without letting the process go.
func spawnDetached(bin, home, logName string, args ...string) (*os.Process, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	// The process writes its log for as long as it runs: it is rotated
	// at each start, and while the process runs by the process itself
	// (RotateOwnLog: `hookwatch serve` and `hookwatch forward`), and opened
	// for appending, so that a copy and truncation while it runs
	// (logrotate's copytruncate) leaves no hole of the old size before the
	// next line.
	rotateLog(filepath.Join(home, logName))
	logf, err := os.OpenFile(filepath.Join(home, logName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	env := append(os.Environ(), "HOOKWATCH_HOME="+home)
	return os.StartProcess(bin, append([]string{bin}, args...), &os.ProcAttr{
		Env:   env,
		Files: []*os.File{devnull, logf, logf},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
}

// serveBinary returns the hookwatch binary that can run `serve`: this one
// if it is hookwatch, else the hookwatch beside this hookwatch-hook.
func serveBinary() (string, error) {
	if exe, err := os.Executable(); err == nil && filepath.Base(exe) == "hookwatch" {
		return exe, nil
	}
	return fullBinary()
}
