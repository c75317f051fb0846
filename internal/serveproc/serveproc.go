// Package serveproc runs `hookwatch serve` as a child process, for the
// tests and benchmarks that need a real collector: it starts the binary,
// waits until it answers /healthz (or has exited), and stops it with SIGTERM
// as a service manager would. It does not import testing, so the bench
// command can use it.
package serveproc

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"syscall"
	"time"

	"github.com/hookwatch/hookwatch/internal/freeport"
)

// Options describe a collector process.
type Options struct {
	Bin  string   // the hookwatch binary
	Addr string   // the listen address; "" picks a free loopback port
	Env  []string // the whole environment of the process
	Args []string // more flags of serve
	// Stdout and Stderr receive the process's output; nil discards it.
	Stdout, Stderr io.Writer
	// Healthy bounds the wait for /healthz; default 30 s.
	Healthy time.Duration
}

// Proc is a running collector.
type Proc struct {
	Addr string
	cmd  *exec.Cmd
	// exited is closed once the process has exited, and exitErr is then
	// what Wait said: Stop and Kill may each come after the other.
	exited  chan struct{}
	exitErr error
}

// Pid is the collector's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// URL is the collector's base URL.
func (p *Proc) URL() string { return "http://" + p.Addr }

// Start runs the collector and returns once it answers /healthz. With no
// Addr it picks a free loopback port, and tries another (three times in
// all) when the process exits before answering: the port may have been
// taken between the pick and the start.
func Start(o Options) (*Proc, error) {
	if o.Healthy <= 0 {
		o.Healthy = 30 * time.Second
	}
	attempts := 1
	if o.Addr == "" {
		attempts = 3
	}
	var err error
	for range attempts {
		addr := o.Addr
		if addr == "" {
			if addr, err = freeport.Addr(); err != nil {
				return nil, err
			}
		}
		var p *Proc
		if p, err = start(o, addr); err == nil {
			return p, nil
		}
	}
	return nil, err
}

func start(o Options, addr string) (*Proc, error) {
	cmd := exec.Command(o.Bin, append([]string{"serve", "--addr", addr}, o.Args...)...)
	cmd.Env = o.Env
	cmd.Stdout, cmd.Stderr = o.Stdout, o.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s serve: %w", o.Bin, err)
	}
	p := &Proc{Addr: addr, cmd: cmd, exited: make(chan struct{})}
	go func() { p.exitErr = cmd.Wait(); close(p.exited) }()
	for deadline := time.Now().Add(o.Healthy); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-p.exited:
			return nil, fmt.Errorf("%s serve exited before answering /healthz: %v", o.Bin, p.exitErr)
		default:
		}
		if res, err := http.Get(p.URL() + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p, nil
			}
		}
	}
	p.cmd.Process.Kill()
	<-p.exited
	return nil, fmt.Errorf("%s serve did not answer /healthz on %s within %v", o.Bin, addr, o.Healthy)
}

// Stop sends SIGTERM and waits up to wait for the process to exit (then
// kills it). It returns why the exit was not clean, if it was not.
func (p *Proc) Stop(wait time.Duration) error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		if p.exitErr != nil {
			return fmt.Errorf("hookwatch serve exited with %w", p.exitErr)
		}
		return nil
	case <-time.After(wait):
		p.cmd.Process.Kill()
		<-p.exited
		return errors.New("hookwatch serve did not stop on SIGTERM")
	}
}

// Kill ends the process with SIGKILL, as a crash would, and waits for it;
// after Stop it returns at once.
func (p *Proc) Kill() {
	p.cmd.Process.Kill()
	<-p.exited
}
