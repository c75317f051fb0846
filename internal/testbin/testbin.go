// Package testbin builds hookwatch's binaries and runs its collector for
// tests that exercise the real processes: the hook as agents run it, and
// `hookwatch serve` as users start it.
package testbin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/deadport"
	"github.com/hookwatch/hookwatch/internal/freeport"
	"github.com/hookwatch/hookwatch/internal/lockfile"
	"github.com/hookwatch/hookwatch/internal/serveproc"
)

var (
	mu    sync.Mutex
	built = map[string]string{} // package → binary, once per test process
	dir   string                // this process's directory (Dir)
	held  *lockfile.Lock        // its lock, held until the process ends
)

// dirPrefix names the directories of binaries in the system's temporary
// directory; lockName is the lock file in each.
const (
	dirPrefix = "hookwatch-testbin-"
	lockName  = "lock"
)

// Build compiles pkg (e.g. "./cmd/hookwatch-hook", relative to the module
// root) as a static binary, once per test process, into Dir, and returns
// its path.
func Build(tb testing.TB, pkg string) string {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if bin, ok := built[pkg]; ok {
		return bin
	}
	d, err := processDir()
	if err != nil {
		tb.Fatal(err)
	}
	bin := filepath.Join(d, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = ModuleRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("cannot build %s: %v\n%s", pkg, err, out)
	}
	built[pkg] = bin
	return bin
}

// Dir is a directory for the files a test process builds once and shares
// between its tests (binaries, mostly). It lives as long as the process:
// no test may remove it, and a later process that asks for one removes it
// (see sweep). A test binary cannot clean up after its last test without
// a TestMain in every package; this bounds what is left to the processes
// of one run, crashed and killed ones included.
func Dir(tb testing.TB) string {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	d, err := processDir()
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// processDir makes the process's directory on first use, after sweeping
// the ones of processes that have ended; mu is held.
func processDir() (string, error) {
	if dir != "" {
		return dir, nil
	}
	sweep(os.TempDir(), time.Minute)
	d, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return "", err
	}
	l, err := lockfile.Take(filepath.Join(d, lockName), []byte(strconv.Itoa(os.Getpid())+"\n"))
	if err != nil {
		os.RemoveAll(d)
		return "", fmt.Errorf("cannot lock %s: %w", d, err)
	}
	dir, held = d, l
	return dir, nil
}

// sweep removes the directories of binaries in tmp whose process has
// ended: their lock is held by no one. A directory changed in the last
// grace may be one being made, whose lock is not yet taken: it stays.
// Sweeping is best effort: what cannot be removed stays for the next
// process.
func sweep(tmp string, grace time.Duration) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, dirPrefix+"*"))
	for _, d := range dirs {
		if _, busy := lockfile.Holder(filepath.Join(d, lockName)); busy {
			continue
		}
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < grace {
			continue
		}
		os.RemoveAll(d)
	}
}

// ModuleRoot is the directory of the module's go.mod.
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// DeadURL returns a loopback URL on which connections are refused until the
// test ends: a collector that is down. Its port is held (deadport), so no
// server of a parallel test can take the requests meant to fail.
func DeadURL(tb testing.TB) string {
	tb.Helper()
	p, err := deadport.Open()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	return p.URL()
}

// FreeAddr returns a loopback address nothing listens on right now, which
// no ":0" listener can be handed (see freeport).
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	addr, err := freeport.Addr()
	if err != nil {
		tb.Fatal(err)
	}
	return addr
}

// Collector is a running `hookwatch serve` process.
type Collector struct {
	Bin, Home, Addr string
	// Env is added to the process's environment. Codex's rollouts are
	// not followed unless it says HOOKWATCH_CODEX_ROLLOUTS: the machine's
	// own Codex sessions are no test's.
	Env  []string
	proc *serveproc.Proc
	log  bytes.Buffer
}

// URL is the collector's base URL.
func (c *Collector) URL() string { return "http://" + c.Addr }

// StartCollector runs `hookwatch serve` on addr with HOOKWATCH_HOME=home and
// waits until it answers /healthz. It is stopped when the test ends. An
// empty addr picks a free loopback port when the process starts, and
// another if that one was taken meanwhile (serveproc): prefer it to
// FreeAddr unless the address must be known before the start. A restart
// (Start after Stop) keeps the address.
func StartCollector(tb testing.TB, bin, home, addr string, env ...string) *Collector {
	tb.Helper()
	c := &Collector{Bin: bin, Home: home, Addr: addr, Env: env}
	c.Start(tb)
	tb.Cleanup(func() {
		if c.proc != nil {
			c.Stop(tb)
		}
	})
	return c
}

// Start (re)starts the process.
func (c *Collector) Start(tb testing.TB) {
	tb.Helper()
	p, err := serveproc.Start(serveproc.Options{
		Bin: c.Bin, Addr: c.Addr, Stdout: &c.log, Stderr: &c.log,
		Env: append(append(os.Environ(), "HOOKWATCH_HOME="+c.Home, "HOOKWATCH_TOKEN=", "HOOKWATCH_DB=", "HOOKWATCH_CODEX_ROLLOUTS=off"), c.Env...),
	})
	if err != nil {
		tb.Fatalf("%v:\n%s", err, c.log.String())
	}
	c.proc = p
	if c.Addr == "" { // a restart keeps it, and tests read it meanwhile
		c.Addr = p.Addr
	}
}

// Stop sends SIGTERM and waits for a clean exit.
func (c *Collector) Stop(tb testing.TB) {
	tb.Helper()
	if c.proc == nil {
		return
	}
	err := c.proc.Stop(time.Minute)
	c.proc = nil
	if err != nil {
		tb.Errorf("collector did not exit cleanly: %v\n%s", err, c.log.String())
	}
}

// Kill ends the process with SIGKILL, as a crash would.
func (c *Collector) Kill(tb testing.TB) {
	tb.Helper()
	if c.proc != nil {
		c.proc.Kill()
		c.proc = nil
	}
}

// Log returns what the collector printed.
func (c *Collector) Log() string { return c.log.String() }

// CollectorPIDs finds the running `hookwatch serve --addr addr` processes,
// such as the one a hook started in the background.
func CollectorPIDs(addr string) []int {
	files, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) >= 4 && filepath.Base(args[0]) == "hookwatch" && args[1] == "serve" && args[3] == addr {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// StopCollectorsAt ends the test by stopping every collector on addr, and
// waits until they are gone: a collector still stopping writes into its
// home (its spool's offset, its lock), which the test's temporary
// directory may be, removed by a cleanup registered before this one. One
// still running after 10 s is killed.
func StopCollectorsAt(tb testing.TB, addr string) {
	tb.Cleanup(func() {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
			pids := CollectorPIDs(addr)
			for _, pid := range pids {
				_ = syscall.Kill(pid, sig)
			}
			for deadline := time.Now().Add(10 * time.Second); len(pids) > 0 && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
				pids = CollectorPIDs(addr) // an exited one has no command line
			}
			if len(pids) == 0 {
				return
			}
		}
		tb.Errorf("collectors on %s still running after SIGKILL", addr)
	})
}

// Client returns the path of a real agent client that end-to-end tests
// drive: $env, else rel under the module root. When it is missing the test
// is skipped, saying how to get it (how), but fails when $CI is set: in CI
// those tests must run.
func Client(tb testing.TB, env, rel, how string) string {
	tb.Helper()
	path := os.Getenv(env)
	if path == "" {
		path = filepath.Join(ModuleRoot(), rel)
	}
	st, err := os.Stat(path)
	if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		Missing(tb, fmt.Sprintf("no client binary at %s (%s or set %s)", path, how, env))
	}
	return path
}

// Missing skips tb for why, something an end-to-end test needs and this
// machine lacks — but fails it when $CI is set: in CI those tests must run.
func Missing(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s; in CI the end-to-end tests must run", why)
	}
	tb.Skip(why)
}

// GetJSON GETs url and, when the answer is 200, decodes its JSON body into
// v (unless v is nil); it returns the status code and fails tb when the
// request, the read or the decoding fails.
func GetJSON(tb testing.TB, url string, v any) int {
	tb.Helper()
	res, err := http.Get(url)
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	if res.StatusCode == http.StatusOK && v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			tb.Fatalf("GET %s: %v in %s", url, err, body)
		}
	}
	return res.StatusCode
}
