package sqlite

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ClaimedError is Claim's error when another process serves the database.
type ClaimedError struct {
	Path string // the database
	// PID is the process that holds the claim; 0 when it did not say.
	PID int
}

func (e *ClaimedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("another collector (pid %d) serves %s", e.PID, e.Path)
	}
	return "another collector serves " + e.Path
}

// claimSuffix names the lock file beside the database.
const claimSuffix = ".collector"

// Claim makes this process the database's one collector until Close. A
// collector keeps the model of its sessions in memory and writes it as
// rows, so two on one file would each keep a model of the same sessions
// and write both (a call listed twice, counts that disagree). Commands
// that read, or write a row or two (export, token create), do not claim.
//
// The claim is an exclusive lock on <path>.collector, holding the process
// id, which the kernel drops with the process: a collector that crashed
// leaves no claim. It returns a *ClaimedError when another open DB (in
// this process or another) holds it.
func (db *DB) Claim() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return ErrClosed
	}
	if db.claim != nil {
		return nil
	}
	path := db.path + claimSuffix
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("cannot claim %s: %w", db.path, err)
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
			return &ClaimedError{Path: db.path, PID: pid}
		}
		return fmt.Errorf("cannot claim %s: %w", db.path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("cannot claim %s: %w", db.path, err)
	}
	db.claim = f
	return nil
}

// claimHolder reports whether a process holds the claim on the database
// at path (Claim), and its process id when it said; it takes nothing.
func claimHolder(path string) (pid int, held bool) {
	f, err := os.Open(path + claimSuffix)
	if err != nil {
		return 0, false // no claim file: no collector ever claimed it
	}
	defer f.Close()
	if err := flock(f, syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		_ = flock(f, syscall.LOCK_UN)
		return 0, false
	} else if !errors.Is(err, syscall.EWOULDBLOCK) {
		return 0, false
	}
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, _ = strconv.Atoi(strings.TrimSpace(string(b[:n])))
	return pid, true
}

// release gives the claim up: its file is emptied, then closed, which
// drops the lock.
func (db *DB) release() error {
	if db.claim == nil {
		return nil
	}
	_ = db.claim.Truncate(0)
	err := db.claim.Close()
	db.claim = nil
	return err
}

func flock(f *os.File, how int) error {
	for {
		if err := syscall.Flock(int(f.Fd()), how); err != syscall.EINTR {
			return err
		}
	}
}
