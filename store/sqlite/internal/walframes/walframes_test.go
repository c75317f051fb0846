package walframes_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/hookwatch/hookwatch/store/sqlite/internal/walframes"
)

const pageSize, frameSize = 4096, 4096 + 24

// open opens the database at path in WAL mode, through the VFS when vfs
// is set, else through SQLite's own: one connection, as the store's
// writer is.
func open(t testing.TB, path string, vfs bool, pragmas ...string) *sql.DB {
	t.Helper()
	q := url.Values{}
	if vfs {
		if err := walframes.Register(); err != nil {
			t.Fatal(err)
		}
		q.Set("vfs", walframes.Name)
	}
	for _, p := range append([]string{"journal_mode(WAL)", "synchronous(NORMAL)", "busy_timeout(10000)"}, pragmas...) {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path}).String()+"?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, b BLOB NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db
}

// writeCalls is the number of write system calls the process has made
// (Linux's /proc/self/io), or the test is skipped where none is told.
func writeCalls(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skip("no /proc/self/io here:", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("/proc/self/io tells no syscw")
	return 0
}

// TestCommitInFewWrites: a commit of many frames costs SQLite's own VFS
// two writes a frame, and this one a write per maxHeld bytes of them.
func TestCommitInFewWrites(t *testing.T) {
	for _, vfs := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "w.db")
		db := open(t, path, vfs, fmt.Sprintf("page_size(%d)", pageSize))
		// A first commit writes the WAL's header; the one measured
		// appends frames only.
		if _, err := db.Exec(`INSERT INTO t (b) VALUES (randomblob(10))`); err != nil {
			t.Fatal(err)
		}
		wal0 := fileSize(t, path+"-wal")
		calls0 := writeCalls(t)
		// 60 rows of 3,000 bytes: ~45 pages, past maxHeld.
		if _, err := db.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60) INSERT INTO t (b) SELECT randomblob(3000) FROM n`); err != nil {
			t.Fatal(err)
		}
		calls := writeCalls(t) - calls0
		frames := int((fileSize(t, path+"-wal") - wal0) / frameSize)
		if frames < 40 {
			t.Fatalf("the commit wrote %d frames; the test wants more than maxHeld's worth", frames)
		}
		if !vfs {
			if calls < 2*frames {
				t.Errorf("SQLite's own VFS wrote %d frames in %d calls; want two a frame", frames, calls)
			}
			continue
		}
		// Whole frames, as many as maxHeld bytes hold, a write.
		perCall := (1<<17 - 1) / frameSize
		if want := (frames + perCall - 1) / perCall; calls > want {
			t.Errorf("the VFS wrote %d frames (%d bytes) in %d calls; want at most %d", frames, frames*frameSize, calls, want)
		}
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// state is what a database's table holds, told the same way by every
// reader: its rows, their bytes, and a digest of both.
type state struct{ rows, bytes, digest int64 }

func stateOf(t *testing.T, db *sql.DB) state {
	t.Helper()
	var s state
	if err := db.QueryRow(`SELECT count(*), coalesce(sum(length(b)), 0), coalesce(sum(id * length(b) + unicode(substr(hex(b), 1, 1))), 0) FROM t`).Scan(&s.rows, &s.bytes, &s.digest); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSameDatabase: a random mix of commits large and small, updates,
// deletions, rollbacks and transactions that spill pages to the WAL
// before they end, written through the VFS. After every commit a reader
// of SQLite's own VFS sees it whole, and so does SQLite opening a copy
// of the files as a crash would leave them (no -shm: recovery from the
// WAL alone, which stops at the first frame whose checksum is wrong),
// after every fifth; at the end the database passes its integrity check.
func TestSameDatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.db")
	// A small page cache makes larger transactions spill.
	w := open(t, path, os.Getenv("PLAIN") == "", "cache_size(20)", "wal_autocheckpoint(200)")
	r := open(t, path, false)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		tx, err := w.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for range 1 + rng.IntN(8) {
			var q string
			switch rng.IntN(4) {
			case 0:
				q = fmt.Sprintf(`UPDATE t SET b = randomblob(%d) WHERE id %% 7 = %d`, 1+rng.IntN(5000), rng.IntN(7))
			case 1:
				q = fmt.Sprintf(`DELETE FROM t WHERE id %% 11 = %d`, rng.IntN(11))
			default:
				// Rows of a few bytes to 300 KB (overflow pages: commits
				// past maxHeld).
				size := 1 + rng.IntN(2000)
				if rng.IntN(10) == 0 {
					size = rng.IntN(300_000)
				}
				q = fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d) INSERT INTO t (b) SELECT randomblob(%d) FROM n`, 1+rng.IntN(20), size)
			}
			if _, err := tx.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		if rng.IntN(5) == 0 {
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
		} else if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		want := stateOf(t, w)
		if got := stateOf(t, r); got != want {
			t.Fatalf("after transaction %d, a reader sees %+v; the writer %+v", i, got, want)
		}
		if i%5 != 0 {
			continue
		}
		if got := stateOf(t, crashCopy(t, path)); got != want {
			t.Fatalf("after transaction %d, a copy of the files holds %+v; the writer %+v", i, got, want)
		}
	}
	var check string
	if err := r.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q, %v", check, err)
	}
}

// crashCopy copies the database at path and its WAL as a crash would
// leave them, and opens the copy with SQLite's own VFS.
func crashCopy(t *testing.T, path string) *sql.DB {
	t.Helper()
	to := filepath.Join(t.TempDir(), "copy.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return open(t, to, false)
}

// TestWriteErrorFailsCommit: when the file system refuses the write of a
// commit's frames (here: a file size limit), the commit fails, and the
// database holds every commit that succeeded and nothing else.
func TestWriteErrorFailsCommit(t *testing.T) {
	if dir := os.Getenv("WALFRAMES_LIMITED"); dir != "" {
		limitedWriter(t, dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteErrorFailsCommit$")
	cmd.Env = append(os.Environ(), "WALFRAMES_LIMITED="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the writer under a file size limit: %v\n%s", err, out.Bytes())
	}
	b, err := os.ReadFile(filepath.Join(dir, "committed"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out.Bytes())
	}
	committed, _ := strconv.Atoi(string(b))
	if committed < 5 {
		t.Fatalf("only %d commits before the limit: the test wants several", committed)
	}
	db := open(t, filepath.Join(dir, "w.db"), false)
	if got := stateOf(t, db); got.rows != int64(committed) || got.bytes != int64(committed)*50_000 {
		t.Errorf("the database holds %+v; want the %d rows committed, 50,000 bytes each", got, committed)
	}
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q, %v", check, err)
	}
}

// limitedWriter, in a process of its own, commits rows of 50,000 bytes
// through the VFS until a file size limit of 1 MiB fails one, and
// records how many succeeded.
func limitedWriter(t *testing.T, dir string) {
	signal.Ignore(syscall.SIGXFSZ)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = 1 << 20
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	db := open(t, filepath.Join(dir, "w.db"), true, "wal_autocheckpoint(0)")
	committed := 0
	for ; committed < 1000; committed++ {
		if _, err := db.Exec(`INSERT INTO t (b) VALUES (randomblob(50000))`); err != nil {
			t.Logf("commit %d failed, as it must: %v", committed, err)
			break
		}
	}
	if committed == 1000 {
		t.Fatal("no commit failed under the file size limit")
	}
	db.Close()
	f, err := os.Create(filepath.Join(dir, "committed"))
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, strconv.Itoa(committed))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
