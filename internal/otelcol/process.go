package otelcol

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// process is a receiver's process: started with its output in a log
// file, ready once its health URL answers 200, stopped with SIGTERM and,
// failing that, SIGKILL.
type process struct {
	what    string   // "the collector", for errors
	args    []string // the binary and its arguments
	env     []string // added to the test's environment
	health  string   // the URL that answers 200 once it is ready
	logPath string
	cmd     *exec.Cmd
	exited  chan error
}

// run starts the process and returns once it is ready, or with its log
// when it exits first or is not ready within 15 s.
func (p *process) run() error {
	p.exited = make(chan error, 1)
	log, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	p.cmd = exec.Command(p.args[0], p.args[1:]...)
	p.cmd.Env = append(os.Environ(), p.env...)
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("cannot start %s: %w", p.what, err)
	}
	exited := p.exited
	cmd := p.cmd
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.exited:
			p.exited <- err
			return fmt.Errorf("%s exited before it was ready (%v):\n%s", p.what, err, p.log())
		default:
		}
		if res, err := http.Get(p.health); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.stop()
	return fmt.Errorf("%s was not ready within 15 s:\n%s", p.what, p.log())
}

// log returns what the process wrote to stdout and stderr.
func (p *process) log() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// stop ends the process: SIGTERM, then SIGKILL after 5 s.
func (p *process) stop() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil // ended by the signal
		}
		return err
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		return fmt.Errorf("%s did not stop within 5 s of SIGTERM", p.what)
	}
}

// onFreePorts runs start, which picks free ports and starts a process on
// them, up to three times: another process may take a port between
// freePorts' answer and the start binding it.
func onFreePorts[T any](start func() (T, error)) (T, error) {
	for try := 0; ; try++ {
		v, err := start()
		if err == nil || try == 2 {
			return v, err
		}
	}
}
