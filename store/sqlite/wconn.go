package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"time"
)

// The writer's transactions (Insert, PutModel) run on the driver's
// connection and statements directly, through database/sql.Conn.Raw, not
// through database/sql's Tx and Stmt: a Tx started a goroutine of its own
// to watch its context and rebound each prepared statement to itself, and
// every statement run converted its arguments into a new slice and wrapped
// its result under locks, while the driver ran BEGIN IMMEDIATE and COMMIT
// through sqlite3_exec, which compiles them on every transaction. Here they
// are statements prepared once, and the arguments go to the driver in
// buffers kept from one statement to the next.

// wconn is the writer connection: database/sql's connection, held from Open
// to Close (the writer pool has no other), and what its transactions reuse.
// The DB's mutex serializes its use. The writer's rarer statements (tokens,
// pruning) run on conn through database/sql, Tx and all.
type wconn struct {
	conn                    *sql.Conn
	begin, commit, rollback wstmt
	args                    []any               // argBuf's array
	nv                      []driver.NamedValue // the arguments as the driver takes them
}

// driverConn is what wconn needs of the driver's connection
// (modernc.org/sqlite's has it).
type driverConn interface {
	driver.ConnPrepareContext
	driver.QueryerContext
}

// wstmt is a statement prepared on the writer's driver connection; it is
// only used within wconn.tx and closed within wconn.close.
type wstmt interface {
	driver.Stmt
	driver.StmtExecContext
}

// newWconn takes writer's one connection for good and prepares the
// statements of its transactions.
func newWconn(ctx context.Context, writer *sql.DB) (*wconn, error) {
	conn, err := writer.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot open the write connection: %w", err)
	}
	w := &wconn{conn: conn}
	err = conn.Raw(func(c any) error {
		dc, ok := c.(driverConn)
		if !ok {
			return fmt.Errorf("the driver's connection %T cannot prepare or query with a context", c)
		}
		// BEGIN IMMEDIATE takes the write lock up front, so that a
		// transaction never fails half-way on a lock upgrade; its wait
		// for a lock another process holds is busy_timeout's, as for any
		// statement.
		for q, dst := range map[string]*wstmt{"BEGIN IMMEDIATE": &w.begin, "COMMIT": &w.commit, "ROLLBACK": &w.rollback} {
			if *dst, err = prepareOn(ctx, dc, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

func prepareOn(ctx context.Context, dc driverConn, q string) (wstmt, error) {
	st, err := dc.PrepareContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("cannot prepare %q: %w", q, err)
	}
	ws, ok := st.(wstmt)
	if !ok {
		st.Close()
		return nil, fmt.Errorf("cannot prepare %q: the driver's statement %T cannot run with a context", q, st)
	}
	return ws, nil
}

// close closes the statements of the connection, those stmts names too,
// then releases the connection, which the writer pool's Close then closes.
// A statement left open would keep SQLite from closing the database
// (sqlite3_close_v2 leaves it a zombie), and with it the WAL.
func (w *wconn) close(stmts ...*wstmt) error {
	errS := w.conn.Raw(func(any) error {
		var errs []error
		for _, st := range append(stmts, &w.begin, &w.commit, &w.rollback) {
			if *st != nil {
				errs = append(errs, (*st).Close())
				*st = nil
			}
		}
		return errors.Join(errs...)
	})
	return errors.Join(errS, w.conn.Close())
}

// wtx is a transaction in progress on the writer connection, valid within
// the function given to wconn.tx.
type wtx struct {
	ctx context.Context
	w   *wconn
	dc  driverConn
}

// tx runs f in one IMMEDIATE transaction: it commits when f returns nil and
// rolls back otherwise, when ctx ended, or when the commit fails (then the
// transaction may still be open: SQLITE_BUSY). The connection is usable
// afterwards whatever happened. ctx is the context of every statement (the
// driver interrupts a statement running when a context ends, with a
// goroutine per statement for a context that can end); the rollback and
// the commit run whatever ctx says, as with database/sql.Tx.
func (w *wconn) tx(ctx context.Context, f func(*wtx) error) (err error) {
	defer func() { clear(w.args[:cap(w.args)]) }() // the batch's strings go with it
	// The transaction's error is not Raw's: Raw would close the connection
	// for good on one that wraps driver.ErrBadConn.
	if errRaw := w.conn.Raw(func(c any) error {
		err = w.run(ctx, &wtx{ctx: ctx, w: w, dc: c.(driverConn)}, f)
		return nil
	}); errRaw != nil {
		return errRaw
	}
	return err
}

func (w *wconn) run(ctx context.Context, t *wtx, f func(*wtx) error) error {
	if _, err := w.begin.ExecContext(ctx, nil); err != nil {
		return fmt.Errorf("cannot begin: %w", err)
	}
	err := f(t)
	if err == nil {
		err = ctx.Err() // as database/sql.Tx: a context that ended commits nothing
	}
	if err == nil {
		if _, err = w.commit.ExecContext(context.Background(), nil); err != nil {
			err = fmt.Errorf("cannot commit: %w", err)
		}
	}
	if err != nil {
		// An error is expected when the statement that failed ended the
		// transaction already (SQLITE_FULL, SQLITE_IOERR…): the point is
		// that none stays open.
		_, _ = w.rollback.ExecContext(context.Background(), nil)
	}
	return err
}

// prepare prepares q on the connection.
func (t *wtx) prepare(q string) (wstmt, error) { return prepareOn(t.ctx, t.dc, q) }

// exec runs st with args.
func (t *wtx) exec(st wstmt, args ...any) (driver.Result, error) {
	nv, err := t.named(args)
	if err != nil {
		return nil, err
	}
	defer clear(nv)
	return st.ExecContext(t.ctx, nv)
}

// query runs q, compiled for this call, with args, and calls row for each
// row of its result, with the values as the driver gives them (int64,
// float64, string, []byte, nil).
func (t *wtx) query(q string, args []any, row func([]driver.Value) error) error {
	nv, err := t.named(args)
	if err != nil {
		return err
	}
	defer clear(nv)
	rows, err := t.dc.QueryContext(t.ctx, q, nv)
	if err != nil {
		return err
	}
	dest := make([]driver.Value, len(rows.Columns()))
	for err == nil {
		if err = rows.Next(dest); err == nil {
			err = row(dest)
		}
	}
	if err == io.EOF {
		err = nil
	}
	return errors.Join(err, rows.Close())
}

// argBuf returns an empty slice to append a statement's arguments to,
// whose array the connection keeps: give it back with keepArgs.
func (t *wtx) argBuf() []any { return t.w.args[:0] }

// keepArgs keeps args's array for the next argBuf.
func (t *wtx) keepArgs(args []any) { t.w.args = args[:0] }

// named converts args as database/sql does (driver.DefaultParameterConverter:
// an int becomes an int64, a driver.Valuer its value) into the
// connection's buffer, which stays valid until the next call.
func (t *wtx) named(args []any) ([]driver.NamedValue, error) {
	nv := t.w.nv[:0]
	for i, a := range args {
		switch a.(type) {
		case nil, string, int64, []byte, float64, bool, time.Time:
		default:
			v, err := driver.DefaultParameterConverter.ConvertValue(a)
			if err != nil {
				return nil, fmt.Errorf("argument %d: %w", i+1, err)
			}
			a = v
		}
		nv = append(nv, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	t.w.nv = nv
	return nv, nil
}

// int64Of and stringOf read a value query gives.
func int64Of(v driver.Value) (int64, error) {
	if n, ok := v.(int64); ok {
		return n, nil
	}
	return 0, fmt.Errorf("%T is not an integer", v)
}

func stringOf(v driver.Value) (string, error) {
	switch s := v.(type) {
	case string:
		return s, nil
	case []byte:
		return string(s), nil
	}
	return "", fmt.Errorf("%T is not text", v)
}
