package sqlite

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/hookwatch/hookwatch/internal/lockfile"
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
	l, err := lockfile.Take(db.path+claimSuffix, []byte(strconv.Itoa(os.Getpid())+"\n"))
	var held *lockfile.HeldError
	if errors.As(err, &held) {
		return &ClaimedError{Path: db.path, PID: pidOf(held.Desc)}
	}
	if err != nil {
		return fmt.Errorf("cannot claim %s: %w", db.path, err)
	}
	db.claim = l
	return nil
}

// claimHolder reports whether a process holds the claim on the database
// at path (Claim), and its process id when it said; it takes nothing.
func claimHolder(path string) (pid int, held bool) {
	desc, held := lockfile.Holder(path + claimSuffix)
	return pidOf(desc), held
}

// pidOf reads the process id a claim holds; 0 when it holds none.
func pidOf(desc []byte) int {
	pid, _ := strconv.Atoi(strings.TrimSpace(string(desc)))
	return pid
}

// release gives the claim up: its file is emptied, then closed, which
// drops the lock.
func (db *DB) release() error {
	if db.claim == nil {
		return nil
	}
	err := db.claim.Release()
	db.claim = nil
	return err
}
