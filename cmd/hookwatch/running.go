package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hookwatch/hookwatch/doctor"
	"github.com/hookwatch/hookwatch/forward"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/spool"
)

// collectorURL is the collector the hook sends to, and the token it sends,
// read exactly as the hook reads them (hook.ConfigFromEnv: HOOKWATCH_URL
// or the URL install kept, HOOKWATCH_TOKEN or the home's token file). It
// fails when that URL is no collector URL (hook.CheckURL), saying why and
// where it came from: asked there, the collector would seem down.
func collectorURL() (base, token string, err error) {
	cfg, _ := hook.ConfigFromEnv(os.Getenv)
	if err := hook.CheckURL(cfg.URL); err != nil {
		return "", "", fmt.Errorf("%s: %w", cfg.URLSource, err)
	}
	return cfg.Base(), cfg.Token, nil
}

// collectorClient is the client the commands ask the collector with. It
// trusts what the forwarder trusts (forward.CAFile: HOOKWATCH_CA_FILE, else
// the ca.pem 'install --ca-file' kept in the home) besides the system's
// roots, so that an https:// team server whose certificate a team's own
// authority signed answers the commands as it answers the forwarder,
// rather than seem down. A CA file it cannot use is an error naming it. The
// callers' contexts bound its requests.
func collectorClient() (*http.Client, error) {
	ca := forward.CAFile(os.Getenv, hook.Home(os.Getenv))
	if ca == "" {
		return systemRootsClient(), nil
	}
	c, err := forward.NewClient(ca)
	if err != nil {
		return nil, fmt.Errorf("%w (HOOKWATCH_CA_FILE, else %s in HOOKWATCH_HOME)", err, forward.CAFileName)
	}
	c.Timeout = 0
	return c, nil
}

// systemRootsClient is collectorClient's client when no CA file is set:
// one for the process, so that its requests share their connections (a
// command waiting for the collector it started asks every 50 ms) rather
// than each build a transport and leave its connection idle.
var systemRootsClient = sync.OnceValue(func() *http.Client {
	c, _ := forward.NewClient("") // no file to read: no error
	c.Timeout = 0
	return c
})

// runningCollector returns the collector attached to the spool of home, as
// its lock names it.
func runningCollector(home string) (spool.ConsumerInfo, bool) {
	return spool.Consumer(filepath.Join(home, "spool"))
}

// healthy reports whether a collector answers /healthz at base within
// timeout.
func healthy(ctx context.Context, base string, timeout time.Duration) bool {
	ok, _ := health(ctx, base, "", timeout)
	return ok
}

// health asks /healthz at base within timeout, sending token when not "":
// whether a collector answers OK, and whether it says it drains a spool —
// which a collector tells only a caller its token admits (or any caller,
// when it requires none).
func health(ctx context.Context, base, token string, timeout time.Duration) (ok, drainsSpool bool) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
	if err != nil {
		return false, false
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client, err := collectorClient()
	if err != nil {
		return false, false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, false
	}
	defer resp.Body.Close()
	var h doctor.Health
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&h)
	return resp.StatusCode == http.StatusOK, h.DrainsSpool()
}

// startCollector starts `hookwatch serve` in the background for home,
// listening at base's address, the way a hook's autostart does, and waits
// until it answers. Its callers found none answering at base: for a base
// that is not on this machine it starts nothing, and its error says that
// none answers there and what to check. Before it starts one, it writes
// to w the line addrIgnored says, if any: the address is base's, whatever
// HOOKWATCH_ADDR says.
func startCollector(ctx context.Context, home, base string, w io.Writer) error {
	if err := errHomeCollectorElsewhere(base); err != nil {
		// serve would exit at once, saying that this home's collector
		// runs: what is wrong is the URL, not a collector missing.
		return err
	}
	addr, err := localListenAddr(base)
	if err != nil {
		// What the user lacks is the collector at base (a team server
		// down, a wrong URL), not one started here.
		return fmt.Errorf("no collector answers at %s (%s), and only one at http://<loopback address>:<port> can be started here: %s", base, urlSource(), startHint(base))
	}
	if teamTunnel() {
		// As the hooks start none there: one would answer at the team
		// server's address with a database of its own, and keep the
		// events the spool keeps for the server.
		return fmt.Errorf("no collector answers at %s (%s), and none is started there: %s", base, urlSource(), startHint(base))
	}
	self, _, err := binaries()
	if err != nil {
		return err
	}
	// serve would refuse a home it cannot write in, but only in its log,
	// which lives there.
	if err := makeHome(home); err != nil {
		return err
	}
	if line := addrIgnored(addr); line != "" {
		fmt.Fprintln(w, line)
	}
	logPath := filepath.Join(home, hook.ServeLog)
	var logStart int64
	if fi, err := os.Stat(logPath); err == nil {
		logStart = fi.Size()
	}
	p, err := hook.StartServeProcess(self, home, addr)
	if err != nil {
		return fmt.Errorf("cannot start hookwatch serve: %w", err)
	}
	// A collector that cannot run exits at once, saying why in its log:
	// waiting for it to answer would only delay that.
	exited := make(chan struct{})
	go func() { p.Wait(); close(exited) }()
	deadline := time.Now().Add(10 * time.Second)
	for !healthy(ctx, base, time.Second) {
		select {
		case <-exited:
			if why := lastLogLine(logPath, logStart); why != "" {
				return fmt.Errorf("started hookwatch serve, but it exited: %s", why)
			}
			return fmt.Errorf("started hookwatch serve, but it exited: see %s", logPath)
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("started hookwatch serve, but it does not answer at %s: see %s", base, logPath)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// addrIgnored is what a command that starts a collector for the hooks,
// listening on addr, the address of their URL, says of a HOOKWATCH_ADDR
// set to another address: that it is not used, and how to use it. The
// hooks send to a collector on that port of every address too
// (install.ListensAt), which serve started by hand gives; to another, the
// hooks are pointed there. HOOKWATCH_ADDR is serve's listen address only
// when serve is run without --addr; a collector started for the hooks is
// started with --addr, or the hooks could not reach it. "" when
// HOOKWATCH_ADDR is unset or addr.
func addrIgnored(addr string) string {
	set := os.Getenv("HOOKWATCH_ADDR")
	switch {
	case set == "" || set == addr:
		return ""
	case install.ListensAt(set, addr):
		return fmt.Sprintf("HOOKWATCH_ADDR=%s is not used: the collector started for the hooks listens on %s only, the address of their URL (%s); to listen on %s: hookwatch stop, then hookwatch serve",
			set, addr, urlSource(), set)
	}
	return fmt.Sprintf("HOOKWATCH_ADDR=%s is not used: the collector started for the hooks listens on %s, the address of their URL (%s); to have them send to %s instead: %s, or unset HOOKWATCH_ADDR",
		set, addr, urlSource(), set, doctor.PointFix(urlSource(), "http://"+set))
}

// lastLogLine is the last line written to the log at path from offset on
// (what a collector that exited said last: its error), without the
// "hookwatch: " its errors start with; "" when it wrote none.
func lastLogLine(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const maxTail = 4 << 10 // an error is one line; more is not read
	if fi, err := f.Stat(); err == nil {
		if offset > fi.Size() {
			offset = 0 // rotated by the start (hook.StartServeProcess): all of it is new
		}
		if fi.Size()-offset > maxTail {
			offset = fi.Size() - maxTail
		}
	}
	b, err := io.ReadAll(io.NewSectionReader(f, offset, maxTail))
	if err != nil && len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimPrefix(strings.TrimSpace(lines[len(lines)-1]), "hookwatch: ")
}

// errHomeCollectorElsewhere is the error of a command that found no
// collector answering at base, the URL the hooks send to, while this home's
// collector runs at another address (hook.AttachedElsewhere: HOOKWATCH_URL
// mistyped, or serve started with another --addr): where it runs, and how
// to point the hooks and the commands at it, since no other collector of
// the home can start beside it. nil when the home's collector is not
// running elsewhere.
func errHomeCollectorElsewhere(base string) error {
	c, ok := hook.AttachedElsewhere(hook.Home(os.Getenv), base)
	if !ok {
		return nil
	}
	at := "http://" + c.Addr
	pid := ""
	if c.PID > 0 {
		pid = fmt.Sprintf(" (pid %d)", c.PID)
	}
	return fmt.Errorf("%w at %s (%s), but this home's collector runs at %s%s, and no other can start beside it: %s, or 'hookwatch stop' and start it at %s",
		errUnreachable, base, urlSource(), at, pid, doctor.PointFix(urlSource(), at), base)
}

// localListenAddr is the address a collector on this machine listens on
// to answer at base, an http:// URL of a loopback host with a port.
func localListenAddr(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" || u.Port() == "" {
		return "", errors.New("want http://<loopback address>:<port>")
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", errors.New("it is not on this machine")
	}
	return u.Host, nil
}

// startHint says how to start the collector at base, collectorURL's:
// serve with the address base names (serve listens on HOOKWATCH_ADDR, not
// on the URL's), or, for a collector on another machine, or the team
// server's a tunnel reaches (teamTunnel), to check it and where the URL
// comes from.
func startHint(base string) string {
	addr, err := localListenAddr(base)
	switch {
	case err != nil:
		return "check that the collector at that URL runs, and that the URL is right: " + pointHint
	case teamTunnel():
		return "this home holds a team server's token, so that address is the team server's on this machine (an SSH tunnel, say): open the tunnel to the server, or " + pointHint
	case addr == serveEnvOr("HOOKWATCH_ADDR", defaultServeAddr):
		return "start one with 'hookwatch serve'"
	}
	return "start one with 'hookwatch serve --addr " + addr + "'"
}

// teamTunnel reports whether the hooks hold a team server's token
// (hook.ForTeamServer, the rule the hooks follow): then a collector URL on
// this machine is the server's, reached through a tunnel, and no collector
// is started there, by the hooks or by a command.
func teamTunnel() bool {
	cfg, _ := hook.ConfigFromEnv(os.Getenv)
	return hook.ForTeamServer(cfg.TokenSource, cfg.Token, cfg.Home)
}

// urlSource is where collectorURL found the collector's URL, as the hooks
// find it (hook.LookupURL), for the errors that name it.
func urlSource() hook.URLSource {
	_, src := hook.LookupURL(os.Getenv, hook.Home(os.Getenv))
	return src
}

// pointHint says how to point the hooks, and the commands that ask the
// collector, at another collector: HOOKWATCH_URL wins over the URL kept.
const pointHint = "point the hooks at another with 'hookwatch install --url URL' (or HOOKWATCH_URL, which wins over it)"

// errNotRunning is returned by stopCollector when no collector holds the
// spool lock of the home.
var errNotRunning = errors.New("no collector is running")

// maxAPIBody bounds an answer of the collector the CLI reads.
const maxAPIBody = 64 << 20

// errUnreachable is apiGet's error when no collector answers.
var errUnreachable = errors.New("cannot reach the collector")

// unreachable is the error of a request no collector at base answered
// (err): where base comes from, and what starts one or points the
// commands at another.
func unreachable(base string, err error) error {
	if err := errHomeCollectorElsewhere(base); err != nil {
		return err
	}
	return fmt.Errorf("%w at %s (%s): %v: start it with hookwatch serve, or %s", errUnreachable, base, urlSource(), err, pointHint)
}

// apiGet GETs u from the collector at base and returns the body of a 200;
// any other answer is an error that says what the collector said.
func apiGet(ctx context.Context, base, token, u string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client, err := collectorClient()
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, unreachable(base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIBody))
	if err != nil {
		return nil, fmt.Errorf("cannot read the answer of %s: %w", base, err)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		return body, nil
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, errTokenRefused(base, body)
	}
	msg := hook.Refusal(body, "")
	if msg == "" {
		msg = fmt.Sprintf("the collector at %s answered HTTP %d", base, resp.StatusCode)
	}
	return nil, &apiError{Status: resp.StatusCode, Message: msg}
}

// errTokenRefused is the error of a request the collector at base refused
// for the token collectorURL read (HTTP 401), with the answer's body (nil
// when not read), naming where that token came from and what fixes it
// (hook.RefusedToken).
func errTokenRefused(base string, body []byte) error {
	home := hook.Home(os.Getenv)
	token, src := hook.LookupToken(os.Getenv, home)
	what, fix := hook.RefusedToken(src, token, home, hook.Refusal(body, token))
	return fmt.Errorf("the collector at %s %s (HTTP 401): %s", base, what, fix)
}

// apiError is the collector's answer to a request it refused: its HTTP
// status and the message of its {"error": …} body.
type apiError struct {
	Status  int
	Message string
}

func (e *apiError) Error() string { return e.Message }
