// Package walframes registers with SQLite a VFS that is its own "unix"
// VFS but for one thing: it writes the frames a commit appends to a WAL
// file in one write, where SQLite makes two for each frame.
//
// A commit in WAL mode appends a frame per page it changed, and SQLite
// writes each frame as two pwrite calls, its 24-byte header and then its
// page right after it (walWriteOneFrame). Each system call is dear in a
// virtual machine, and the collector's commits write one to two frames
// per event it stores: a commit of twenty frames is forty calls where one
// write of the same bytes would do.
//
// The VFS holds back what SQLite writes to a WAL file from a frame's
// header on, as long as each write starts where the last one ended, and
// writes it all at once when the page of a commit's frame comes (the
// frame whose header gives the database's size after the commit: the
// last of the commit). That write answers for all of them, so an error
// fails the commit as SQLite's own writes would, before the commit is
// published to readers (which SQLite does after writing the frames). A
// header that does not start where the last write ended is written at
// once: SQLite rewrites the headers of frames a transaction wrote over
// with new checksums (walRewriteChecksums) after its commit's frame, and
// no page follows those. Any other call on the file (a read, a sync, a
// truncation, its size, a file control, its close), a write elsewhere,
// and more than maxHeld bytes held write what is held first, so no call
// ever sees the file without it. The bytes and their offsets are
// SQLite's; only the number of calls that write them changes. Every
// other file (the database, its journals) is the unix VFS's own.
package walframes

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Name is the VFS's name, for a connection's "vfs" parameter.
const Name = "hookwatch-walframes"

// frameHeader is the size of a WAL frame's header (WAL_FRAME_HDRSIZE).
const frameHeader = 24

var (
	registerOnce sync.Once
	registerErr  error
	// unixVFS is the VFS wrapped, set once by Register.
	unixVFS *sqlite3.Tsqlite3_vfs
	// stateAt is where a file's state lies in the memory SQLite gives a
	// file of this VFS: past the unix VFS's own, 8-byte aligned.
	stateAt uintptr
)

// Register registers the VFS (not as the default), once per process;
// a connection uses it with vfs=Name.
func Register() error {
	registerOnce.Do(func() { registerErr = register() })
	return registerErr
}

func register() error {
	tls := libc.NewTLS()
	defer tls.Close()
	name := cString(tls, "unix")
	if name == 0 {
		return errors.New("walframes: out of memory")
	}
	unix := sqlite3.Xsqlite3_vfs_find(tls, name)
	sqlite3.Xsqlite3_free(tls, name)
	if unix == 0 {
		return errors.New("walframes: SQLite has no unix VFS")
	}
	unixVFS = (*sqlite3.Tsqlite3_vfs)(ptr(unix))
	if unixVFS.FiVersion < 1 || unixVFS.FszOsFile <= 0 {
		return fmt.Errorf("walframes: the unix VFS is of version %d", unixVFS.FiVersion)
	}
	stateAt = (uintptr(unixVFS.FszOsFile) + 7) &^ 7
	p := sqlite3.Xsqlite3_malloc64(tls, uint64(unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})))
	if p == 0 {
		return errors.New("walframes: out of memory")
	}
	v := (*sqlite3.Tsqlite3_vfs)(ptr(p))
	*v = *unixVFS
	v.FpNext = 0
	if v.FzName = cString(tls, Name); v.FzName == 0 {
		return errors.New("walframes: out of memory")
	}
	v.FszOsFile = int32(stateAt + unsafe.Sizeof(fileState{}))
	v.FxOpen = cFuncPointer(xOpen)
	if rc := sqlite3.Xsqlite3_vfs_register(tls, p, 0); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("walframes: sqlite3_vfs_register: %d", rc)
	}
	return nil
}

// maxHeld bounds what a file holds back: a commit of more (a large
// round of the model's) is written in writes of at most this size, the
// most the unix VFS writes in one call (its seekAndWrite keeps the low
// 17 bits of a write's size).
const maxHeld = 1<<17 - 1

// fileState is what the VFS keeps for a WAL file, in the memory SQLite
// gives the file, which it zeroes.
type fileState struct {
	// methods are the file's own (the unix VFS's) io methods.
	methods uintptr
	// buf is memory of SQLite's allocator, bufCap bytes, whose first
	// held bytes are held back, to be written at heldAt.
	buf    uintptr
	bufCap int64
	held   int64
	heldAt int64
	// commit says the last header held is a commit's last frame's.
	commit bool
	// end is where the last write ended, and page the size of the last
	// write that was not a frame's header.
	end, page int64
}

func stateOf(file uintptr) *fileState { return (*fileState)(ptr(file + stateAt)) }

// xOpen opens the file as the unix VFS does, and gives a WAL file the
// methods that join its frames' writes.
func xOpen(tls *libc.TLS, vfs, name, file uintptr, flags int32, outFlags uintptr) int32 {
	rc := callOpen(unixVFS.FxOpen, tls, uintptr(unsafe.Pointer(unixVFS)), name, file, flags, outFlags)
	f := (*sqlite3.Tsqlite3_file)(ptr(file))
	if rc != sqlite3.SQLITE_OK || flags&sqlite3.SQLITE_OPEN_WAL == 0 || f.FpMethods == 0 {
		return rc
	}
	st := stateOf(file)
	*st = fileState{methods: f.FpMethods}
	f.FpMethods = walMethods(tls, f.FpMethods)
	return rc
}

var (
	methodsMu sync.Mutex
	// ours are the io methods made for each set of the unix VFS's.
	ours = map[uintptr]uintptr{}
)

// walMethods are the io methods of a WAL file whose own are own: a copy
// of them with the calls that write, or must see what was written,
// wrapped.
func walMethods(tls *libc.TLS, own uintptr) uintptr {
	methodsMu.Lock()
	defer methodsMu.Unlock()
	if m, ok := ours[own]; ok {
		return m
	}
	p := sqlite3.Xsqlite3_malloc64(tls, uint64(unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{})))
	if p == 0 {
		return own
	}
	m := (*sqlite3.Tsqlite3_io_methods)(ptr(p))
	*m = *(*sqlite3.Tsqlite3_io_methods)(ptr(own))
	m.FxClose = cFuncPointer(xClose)
	m.FxRead = cFuncPointer(xRead)
	m.FxWrite = cFuncPointer(xWrite)
	m.FxTruncate = cFuncPointer(xTruncate)
	m.FxSync = cFuncPointer(xSync)
	m.FxFileSize = cFuncPointer(xFileSize)
	m.FxFileControl = cFuncPointer(xFileControl)
	ours[own] = p
	return p
}

func methodsOf(st *fileState) *sqlite3.Tsqlite3_io_methods {
	return (*sqlite3.Tsqlite3_io_methods)(ptr(st.methods))
}

// flush writes what st holds back, if anything.
func flush(tls *libc.TLS, file uintptr, st *fileState) int32 {
	if st.held == 0 {
		return sqlite3.SQLITE_OK
	}
	n := st.held
	st.held, st.commit = 0, false
	return callWrite(methodsOf(st).FxWrite, tls, file, st.buf, int32(n), st.heldAt)
}

func xWrite(tls *libc.TLS, file, data uintptr, n int32, at int64) int32 {
	st := stateOf(file)
	header := n == frameHeader
	follows := at == st.end
	st.end = at + int64(n)
	if !header {
		st.page = int64(n)
	}
	// What is held is written first when this write does not follow it,
	// or would take it past maxHeld; a frame's header is not held when
	// its page would not fit beside it, so that no frame is split.
	if st.held > 0 && (!follows || st.held+int64(n) > maxHeld || header && st.held+frameHeader+st.page > maxHeld) {
		if rc := flush(tls, file, st); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	// Held: a frame's header that follows the last write, and what
	// follows it. The rest is written as SQLite wrote it, and so is all
	// of it when no memory is left to hold it in.
	if !(follows && (header || st.held > 0)) || !grow(tls, st, st.held+int64(n)) {
		if rc := flush(tls, file, st); rc != sqlite3.SQLITE_OK {
			return rc
		}
		return callWrite(methodsOf(st).FxWrite, tls, file, data, n, at)
	}
	if st.held == 0 {
		st.heldAt = at
	}
	copy(unsafe.Slice((*byte)(ptr(st.buf+uintptr(st.held))), n), unsafe.Slice((*byte)(ptr(data)), n))
	st.held += int64(n)
	if header {
		// Bytes 4 to 7 of a frame's header are the database's size in
		// pages after the commit on its commit's last frame, 0 on the
		// others.
		h := unsafe.Slice((*byte)(ptr(data)), n)
		st.commit = h[4]|h[5]|h[6]|h[7] != 0
		return sqlite3.SQLITE_OK
	}
	if st.commit {
		return flush(tls, file, st)
	}
	return sqlite3.SQLITE_OK
}

// grow makes st's buffer hold n bytes, at most maxHeld, and says
// whether it does.
func grow(tls *libc.TLS, st *fileState, n int64) bool {
	if st.bufCap >= n {
		return true
	}
	if n > maxHeld {
		return false
	}
	c := min(max(n, 2*st.bufCap, 64<<10), maxHeld)
	p := sqlite3.Xsqlite3_realloc64(tls, st.buf, uint64(c))
	if p == 0 {
		return false
	}
	st.buf, st.bufCap = p, c
	return true
}

func xClose(tls *libc.TLS, file uintptr) int32 {
	st := stateOf(file)
	rc := flush(tls, file, st)
	closing := methodsOf(st).FxClose
	if st.buf != 0 {
		sqlite3.Xsqlite3_free(tls, st.buf)
		st.buf, st.bufCap = 0, 0
	}
	if rc2 := callClose(closing, tls, file); rc == sqlite3.SQLITE_OK {
		rc = rc2
	}
	return rc
}

func xRead(tls *libc.TLS, file, data uintptr, n int32, at int64) int32 {
	st := stateOf(file)
	if rc := flush(tls, file, st); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callRead(methodsOf(st).FxRead, tls, file, data, n, at)
}

func xTruncate(tls *libc.TLS, file uintptr, size int64) int32 {
	st := stateOf(file)
	if rc := flush(tls, file, st); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callTruncate(methodsOf(st).FxTruncate, tls, file, size)
}

func xSync(tls *libc.TLS, file uintptr, flags int32) int32 {
	st := stateOf(file)
	if rc := flush(tls, file, st); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callSync(methodsOf(st).FxSync, tls, file, flags)
}

func xFileSize(tls *libc.TLS, file, size uintptr) int32 {
	st := stateOf(file)
	if rc := flush(tls, file, st); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callFileSize(methodsOf(st).FxFileSize, tls, file, size)
}

func xFileControl(tls *libc.TLS, file uintptr, op int32, arg uintptr) int32 {
	st := stateOf(file)
	if rc := flush(tls, file, st); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callFileControl(methodsOf(st).FxFileControl, tls, file, op, arg)
}

// The calls of C function pointers, as the code SQLite is translated to
// makes them.

func callOpen(fp uintptr, tls *libc.TLS, vfs, name, file uintptr, flags int32, outFlags uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{fp})))(tls, vfs, name, file, flags, outFlags)
}

func callWrite(fp uintptr, tls *libc.TLS, file, data uintptr, n int32, at int64) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&struct{ uintptr }{fp})))(tls, file, data, n, at)
}

func callRead(fp uintptr, tls *libc.TLS, file, data uintptr, n int32, at int64) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&struct{ uintptr }{fp})))(tls, file, data, n, at)
}

func callClose(fp uintptr, tls *libc.TLS, file uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{fp})))(tls, file)
}

func callTruncate(fp uintptr, tls *libc.TLS, file uintptr, size int64) int32 {
	return (*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&struct{ uintptr }{fp})))(tls, file, size)
}

func callSync(fp uintptr, tls *libc.TLS, file uintptr, flags int32) int32 {
	return (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&struct{ uintptr }{fp})))(tls, file, flags)
}

func callFileSize(fp uintptr, tls *libc.TLS, file, size uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{fp})))(tls, file, size)
}

func callFileControl(fp uintptr, tls *libc.TLS, file uintptr, op int32, arg uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{fp})))(tls, file, op, arg)
}

// cFuncPointer is f as a C function pointer (f a function declared, not
// a closure), as modernc.org/sqlite makes one.
func cFuncPointer[T any](f T) uintptr { return *(*uintptr)(unsafe.Pointer(&struct{ f T }{f})) }

// ptr is the address p, of memory SQLite allocated, as a pointer.
func ptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// cString is s as a NUL-terminated string in memory of SQLite's
// allocator (0 when none is left).
func cString(tls *libc.TLS, s string) uintptr {
	p := sqlite3.Xsqlite3_malloc64(tls, uint64(len(s)+1))
	if p == 0 {
		return 0
	}
	b := unsafe.Slice((*byte)(ptr(p)), len(s)+1)
	copy(b, s)
	b[len(s)] = 0
	return p
}
