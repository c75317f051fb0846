package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/audit"
	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/internal/patherr"
	"github.com/hookwatch/hookwatch/pricing"
	"github.com/hookwatch/hookwatch/privacy"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/stale"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/postgres"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/web"
)

func init() {
	register(command{
		name:    "serve",
		summary: "run the collector: ingest events, serve the API, the stream and the metrics",
		run:     runServe,
	})
}

// serveSynopsis groups serve's flags by what they set: where it listens and
// stores, what it keeps, what it follows, where it exports, the signals.
const serveSynopsis = `serve [--addr HOST:PORT] [--db PATH|URL] [--tls-cert FILE --tls-key FILE] [--insecure-no-token]
                       [--retain AGE] [--retain-size SIZE] [--model-cache-mb N] [--prices FILE]
                       [--watch-transcripts auto|off|DIR] [--codex-rollouts auto|off|DIR]
                       [--audit-dir DIR [--audit-max-bytes N] [--audit-retain AGE]]
                       [--otlp-endpoint URL [--otlp-header k=v]… [--otlp-ca-file FILE]]
                       [--signal-failed-repeats N] [--signal-read-repeats N] [--signal-thrash-switches N]
                       [--signal-outlier-factor X] [--signal-outlier-siblings N] [--signal-outlier-calls N]
                       [--signal-outlier-duration D] [--signal-stalled-after D]`

// serveFlags are serve's flags, as serveFlagSet defines them, and what
// check made of them.
type serveFlags struct {
	addr, db, tlsCert, tlsKey, auditDir, rollouts, transcripts, prices *string
	retain, auditRetain                                                duration
	retainSize                                                         byteSize
	auditMax                                                           *int64
	insecure                                                           *bool
	traces                                                             *otlpFlags
	failedRepeats, readRepeats, thrashSwitches                         *int
	outlierSiblings, outlierCalls, modelCache                          *int
	outlierFactor                                                      *float64
	outlierDuration, stalledAfter                                      *time.Duration

	// Set by check: the directories followed, the price table read.
	rolloutsDir, transcriptsDir string
	priceTable                  *pricing.Table
}

// serveFlagSet defines serve's flags: the one definition runServe parses
// and doctor checks the environment with (settingRefusals).
func serveFlagSet(stdout, stderr io.Writer) (*flag.FlagSet, *serveFlags) {
	fs := newFlagSet("serve", serveSynopsis, stdout, stderr)
	f := &serveFlags{}
	f.addr = fs.String("addr", defaultServeAddr, "listen address")
	f.db = dbFlagVar(fs)
	fs.Var(&f.retain, "retain", "delete sessions whose latest event is older than this, and their compaction archive, in the background (90d, 2w; at least 1h: m is minutes; default: keep all)")
	fs.Var(&f.retainSize, "retain-size", "delete the least recently active sessions while the SQLite database holds more than this (10GB)")
	f.tlsCert = fs.String("tls-cert", "", "PEM certificate file: serve HTTPS (with --tls-key)")
	f.tlsKey = fs.String("tls-key", "", "PEM private key file of --tls-cert")
	f.auditDir = fs.String("audit-dir", "", "write the continuous audit trail here: one directory per session, hash-chained JSONL, see docs/audit.md")
	f.auditMax = fs.Int64("audit-max-bytes", audit.DefaultMaxFileBytes, "rotate an audit file before a write would take it past this size")
	fs.Var(&f.auditRetain, "audit-retain", "delete, at start and hourly, the audit trail's session directories and rotated segments last written longer ago than this (90d, 26w; at least 1h); what is left still verifies (docs/audit.md); default: keep all, which --retain leaves alone")
	f.insecure = fs.Bool("insecure-no-token", false, "allow listening on a non-loopback address without a token")
	f.rollouts = fs.String("codex-rollouts", "auto", "follow Codex's rollout files for what its hooks miss: auto (Codex's sessions directory, once it exists), off, or the sessions directory")
	f.transcripts = fs.String("watch-transcripts", "auto", "follow Claude Code's transcripts as they grow, for the tokens of every agent and turn and what its hooks miss: auto (Claude Code's projects directory, once it exists), off, or the projects directory")
	f.prices = fs.String("prices", "", "price table (JSON: {\"date\":…,\"models\":{\"<model>\":{\"input\":…,\"output\":…,\"cache_read\":…,\"cache_write_5m\":…,\"cache_write_1h\":…}}}, USD per million tokens) replacing the built-in one")
	f.traces = addOTLPFlags(fs)
	f.failedRepeats = fs.Int("signal-failed-repeats", attribution.DefaultThresholds.FailedRepeats, "failures of the same call that make a loop signal (docs/policy.md)")
	f.readRepeats = fs.Int("signal-read-repeats", attribution.DefaultThresholds.ReadRepeats, "reads of the same file that make a loop signal")
	f.thrashSwitches = fs.Int("signal-thrash-switches", attribution.DefaultThresholds.ThrashSwitches, "changes of the agent writing a file that make a thrash signal")
	f.outlierFactor = fs.Float64("signal-outlier-factor", attribution.DefaultThresholds.OutlierFactor, "how many times its stopped siblings' median of calls or duration makes a subagent an outlier (1 to 1000)")
	f.outlierSiblings = fs.Int("signal-outlier-siblings", attribution.DefaultThresholds.OutlierSiblings, "stopped siblings (same parent, same agent type) a subagent needs to be compared with")
	f.outlierCalls = fs.Int("signal-outlier-calls", attribution.DefaultThresholds.OutlierCalls, "calls below which no subagent is an outlier by calls")
	f.outlierDuration = fs.Duration("signal-outlier-duration", attribution.DefaultThresholds.OutlierDuration, "duration below which no subagent is an outlier by duration (1s to 720h)")
	f.stalledAfter = fs.Duration("signal-stalled-after", attribution.DefaultThresholds.StalledAfter, "how long a session waiting on a pending call with no event is stalled after (1s to 720h)")
	f.modelCache = fs.Int("model-cache-mb", collector.DefaultModelCacheBytes>>20, "memory the session model keeps between rounds for idle sessions, in MiB (the sessions with events in the last 10 s are kept beside it, up to 16 times as much); an idle session dropped is read again from the database at its next event")
	usageTrailer(fs, serveEnvHelp)
	return fs, f
}

// serveEnvFlags are serve's flags whose variables set their defaults
// (flagsFromEnv), the shell's or the service's, before the command line.
func serveEnvFlags() []string { return append(serveFlagsOwnEnv[:], serveFlagsFromEnv...) }

// check refuses what serve refuses of its flags' values once parsed, each
// refusal a *flagRefusal naming the flag it is about; it reads the price
// table and resolves the directories followed.
func (f *serveFlags) check() error {
	if f.retain > 0 {
		if err := f.retain.retention("retain", "every session"); err != nil {
			return err
		}
	}
	if f.auditRetain > 0 {
		if err := f.auditRetain.retention("audit-retain", "the audit trail's files"); err != nil {
			return err
		}
		if *f.auditDir == "" {
			return refuse("audit-retain", "--audit-retain prunes the continuous audit trail: give its directory, --audit-dir (or HOOKWATCH_AUDIT_DIR)")
		}
	}
	if err := checkListenAddr(*f.addr); err != nil {
		return refuse("addr", fmt.Sprintf("--addr %q (or HOOKWATCH_ADDR): %v", *f.addr, err))
	}
	if *f.modelCache < 1 || *f.modelCache > 1<<20 {
		return refuse("model-cache-mb", "--model-cache-mb must be between 1 and 1048576")
	}
	if (*f.tlsCert == "") != (*f.tlsKey == "") {
		given := "tls-cert"
		if *f.tlsKey != "" {
			given = "tls-key"
		}
		return refuse(given, "--tls-cert and --tls-key go together")
	}
	for _, c := range []struct {
		flag string
		n    int
	}{{"signal-failed-repeats", *f.failedRepeats}, {"signal-read-repeats", *f.readRepeats}, {"signal-thrash-switches", *f.thrashSwitches},
		{"signal-outlier-siblings", *f.outlierSiblings}, {"signal-outlier-calls", *f.outlierCalls}} {
		if c.n < 1 || c.n > 1000 {
			return refuse(c.flag, fmt.Sprintf("--%s %d: the --signal-* flags take a count from 1 to 1000", c.flag, c.n))
		}
	}
	if !(*f.outlierFactor >= 1 && *f.outlierFactor <= 1000) {
		return refuse("signal-outlier-factor", "--signal-outlier-factor takes a number from 1 to 1000")
	}
	for _, c := range []struct {
		flag string
		d    time.Duration
	}{{"signal-outlier-duration", *f.outlierDuration}, {"signal-stalled-after", *f.stalledAfter}} {
		if c.d < time.Second || c.d > 30*24*time.Hour {
			return refuse(c.flag, fmt.Sprintf("--%s %v: --signal-outlier-duration and --signal-stalled-after take a duration from 1s to 720h", c.flag, c.d))
		}
	}
	var err error
	if f.rolloutsDir, err = serveRolloutsDir(*f.rollouts); err != nil {
		return refused("codex-rollouts", err)
	}
	if f.transcriptsDir, err = serveTranscriptsDir(*f.transcripts); err != nil {
		return refused("watch-transcripts", err)
	}
	if *f.prices != "" {
		if f.priceTable, err = pricing.Load(*f.prices); err != nil {
			return refused("prices", err)
		}
	}
	return nil
}

// runServe is `hookwatch serve`. It returns nil after a clean shutdown on
// SIGINT/SIGTERM (ctx canceled).
func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, f := serveFlagSet(stdout, stderr)
	// The flags' defaults are the built-in ones, which --help shows; the
	// variables, the shell's or the service's, set them before the command
	// line.
	if err := parseEnvFlags(fs, serveEnvFlags(), args, os.Getenv, f.check); err != nil {
		return err
	}
	addr, dbFlag, tlsCert, tlsKey, auditDir, auditMax := f.addr, f.db, f.tlsCert, f.tlsKey, f.auditDir, f.auditMax
	retain, retainSize, auditRetain, insecure, traces := f.retain, f.retainSize, f.auditRetain, f.insecure, f.traces
	rollouts, transcripts, rolloutsDir, transcriptsDir := f.rollouts, f.transcripts, f.rolloutsDir, f.transcriptsDir
	serveGC(os.Getenv, int64(*f.modelCache)<<20)
	stopProfile, err := startCPUProfile(os.Getenv(envCPUProfile))
	if err != nil {
		return err
	}
	defer stopProfile()
	// The token comes from the environment only: a flag would show it to
	// every user of the machine in ps.
	token := os.Getenv("HOOKWATCH_TOKEN")
	if f.priceTable != nil {
		pricing.SetDefault(f.priceTable)
	}

	home, err := serveHome()
	if err != nil {
		return err
	}
	// A collector runs for months: its log, when it is the home's (a hook
	// or the launchd agent started it), is rotated while it runs.
	logCtx, stopLog := context.WithCancel(ctx)
	defer stopLog()
	go hook.RotateOwnLog(logCtx, home, hook.ServeLog)
	db, dbName, err := openServeStore(ctx, *dbFlag, home, stderr)
	if err != nil {
		return err
	}
	if s, ok := db.(*sqlite.DB); ok {
		if err := s.Claim(); err != nil {
			db.Close()
			return claimed(home, dbName, err)
		}
	}
	// Tokens in the database (hookwatch token create) make every request
	// need one, on loopback too: whoever made them wants them checked.
	hasTokens, err := serveHasTokens(ctx, db)
	if err != nil {
		db.Close()
		return err
	}
	if token == "" && !hasTokens && !*insecure && !serveIsLoopback(*addr) {
		db.Close()
		return fmt.Errorf("%w: refusing to listen on %s without authentication: anyone who can reach it could read every prompt and command; create tokens (hookwatch token create), set HOOKWATCH_TOKEN, listen on 127.0.0.1, or pass --insecure-no-token", errUsage, *addr)
	}
	if token != "" && len(token) < minAdminToken && !serveIsLoopback(*addr) {
		db.Close()
		return fmt.Errorf("%w: refusing to listen on %s with a HOOKWATCH_TOKEN of %d characters: anyone who can reach it could guess it; set one of %d or more (such as: head -c 32 /dev/urandom | base64), or create users' tokens (hookwatch token create)", errUsage, *addr, len(token), minAdminToken)
	}
	if _, ok := db.(store.Sizer); retainSize > 0 && !ok {
		db.Close()
		return fmt.Errorf("--retain-size needs a SQLite database: PostgreSQL keeps the space deleted rows free in its files, so its size is its operator's to manage; use --retain")
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if m, ok := db.(store.Migrated); ok {
		// An upgrade's only trace otherwise: the log is where a user
		// looks when the first start after one is slow.
		if from, to, took := m.Migrated(); from > 0 && to > from {
			log.Info("brought the database's schema up to date", "from_version", from, "to_version", to, "took", took.Round(time.Millisecond))
		}
	}
	for _, f := range []struct{ flag, setting, dir string }{{"--watch-transcripts", *transcripts, transcriptsDir}, {"--codex-rollouts", *rollouts, rolloutsDir}} {
		if f.dir != "" && f.setting != "auto" {
			if _, err := os.Stat(f.dir); err != nil {
				// Followed all the same, once it appears: say so, as it may be a typo.
				log.Warn(f.flag+" names a directory that is not there (yet); it is followed once it appears", "dir", f.dir, "err", err)
			}
		}
	}
	priv, err := privacy.OptionsFromEnv(os.Getenv)
	if err != nil {
		log.Warn("bad privacy setting; using the strictest capture", "err", err)
	}
	guard, warn := stale.ConfigFromEnv(os.Getenv)
	for _, w := range warn {
		log.Warn(w)
	}
	cfg := collector.Config{Store: db, Version: version, Token: token, RequireAuth: hasTokens, Logger: log, Privacy: priv,
		Retain: time.Duration(retain), RetainBytes: int64(retainSize), NoFileStates: guard.Off,
		AuditDir: *auditDir, AuditMaxFileBytes: *auditMax, AuditRetain: time.Duration(auditRetain),
		Signals: attribution.Thresholds{FailedRepeats: *f.failedRepeats, ReadRepeats: *f.readRepeats, ThrashSwitches: *f.thrashSwitches,
			OutlierFactor: *f.outlierFactor, OutlierSiblings: *f.outlierSiblings, OutlierCalls: *f.outlierCalls, OutlierDuration: *f.outlierDuration,
			StalledAfter: *f.stalledAfter},
		ModelCacheBytes: *f.modelCache << 20}
	if exp, set, err := traces.exporter(ctx, log, db, home); err != nil {
		db.Close()
		return err
	} else if exp != nil {
		cfg.ModelSinks, cfg.MetricSets = append(cfg.ModelSinks, exp), append(cfg.MetricSets, set)
	}
	o := collector.Options{
		Config:  cfg,
		Addr:    *addr,
		Home:    home,
		TLSCert: *tlsCert,
		TLSKey:  *tlsKey,
		Assets:  web.Handler(),
	}
	o.Rollouts.Dir = rolloutsDir
	origin := ingest.LocalOrigin(version) // the hooks', so the calls join their sessions
	o.Rollouts.Host, o.Rollouts.User = origin.Host, origin.User
	o.Transcripts.Dir = transcriptsDir
	o.Transcripts.Host, o.Transcripts.User = origin.Host, origin.User
	err = collector.Run(ctx, o, func(c *collector.Collector) {
		scheme := "http"
		if *tlsCert != "" {
			scheme = "https"
		}
		fmt.Fprintf(stdout, "hookwatch serve: listening on %s://%s (database %s)\n", scheme, listenAddr(*addr, c.Addr()), dbName)
	})
	if errors.Is(err, syscall.EADDRINUSE) {
		return addrInUse(ctx, home, *addr, err)
	}
	return err
}

// addrInUse explains a listen address that is taken. The usual case is a
// collector already running for this home — started by serve in another
// shell, or in the background by a hook or by `hookwatch demo` — and the
// user then needs no second one, only its address; otherwise it names the
// ways out.
func addrInUse(ctx context.Context, home, addr string, err error) error {
	if c, ok := runningCollector(home); ok && c.Addr == addr {
		return alreadyRuns(home, c)
	}
	if healthy(ctx, "http://"+addr, time.Second) {
		return fmt.Errorf("cannot listen on %s: a hookwatch collector of another HOOKWATCH_HOME answers there; stop it where it runs, or listen elsewhere with --addr (and point the hooks at it: hookwatch install --url http://HOST:PORT)", addr)
	}
	return fmt.Errorf("%w; another program holds that address: listen elsewhere with --addr HOST:PORT or HOOKWATCH_ADDR (and point the hooks at it: hookwatch install --url http://HOST:PORT)", err)
}

// alreadyRuns is the error of a serve that finds c, the collector of
// home, running.
func alreadyRuns(home string, c spool.ConsumerInfo) error {
	pid := ""
	if c.PID > 0 {
		pid = fmt.Sprintf(" (pid %d)", c.PID)
	}
	hw := selfName()
	return fmt.Errorf("a collector already runs for %s at http://%s%s, started by a hookwatch serve in another shell, by a hook, hookwatch demo or a service; its dashboard is there. To run one in the foreground instead: %s stop, then %s serve", home, c.Addr, pid, hw, hw)
}

// claimed explains a database another collector serves (sqlite.Claim): the
// collector of this home, whatever its address, or another one.
func claimed(home, dbName string, err error) error {
	var ce *sqlite.ClaimedError
	if !errors.As(err, &ce) {
		return fmt.Errorf("cannot serve %s: %w", dbName, err)
	}
	if c, ok := runningCollector(home); ok && ce.PID > 0 && c.PID == ce.PID {
		return alreadyRuns(home, c)
	}
	who, stop := "another collector", "stop it where it runs"
	if ce.PID > 0 {
		who, stop = fmt.Sprintf("another collector (pid %d)", ce.PID), fmt.Sprintf("stop it (kill %d)", ce.PID)
	}
	return fmt.Errorf("cannot serve %s: %s serves it, for another HOOKWATCH_HOME; a database has one collector: %s, or serve another database with --db", dbName, who, stop)
}

// dbFlagVar defines --db, the store of every command that opens one
// (openStore).
func dbFlagVar(fs *flag.FlagSet) *string {
	return fs.String("db", "", "SQLite database path or postgres:// URL (env HOOKWATCH_DB; default $HOOKWATCH_HOME/hookwatch.db); a URL's password here shows in ps to every user of the machine: put such a URL in HOOKWATCH_DB")
}

// dbDSN is what the --db value flag names: itself, else HOOKWATCH_DB.
func dbDSN(flag string) string {
	if flag == "" {
		return os.Getenv("HOOKWATCH_DB")
	}
	return flag
}

// dbFile is the SQLite file dsn, not a PostgreSQL URL, names: hookwatch.db
// in home for "".
func dbFile(dsn, home string) string {
	if dsn == "" {
		return filepath.Join(home, "hookwatch.db")
	}
	return dsn
}

// dbWaitEvery is how often serve tries again to reach a PostgreSQL server
// that is not up (openServeStore), dbWaitSay how often it says it still
// waits, and dbWaitFor how long it waits at most.
var dbWaitEvery, dbWaitSay, dbWaitFor = time.Second, 30 * time.Second, 2 * time.Minute

// openServeStore is openStore for serve, which waits up to dbWaitFor for a
// PostgreSQL server that is not up yet (postgres.Unreachable) rather than
// exit at once: started at boot or beside the database, the collector would
// otherwise die before it, and a service manager that restarts it gives up
// after a few quick failures. The hooks keep their events in the spool
// meanwhile. It says on stderr that it waits, and again every dbWaitSay.
// Past dbWaitFor, or on any other error (a wrong password), it returns the
// error: a database that does not come up stops serve.
func openServeStore(ctx context.Context, flag, home string, stderr io.Writer) (store.Store, string, error) {
	db, name, err := openStore(ctx, flag, home)
	start := time.Now()
	var said time.Time
	for err != nil && postgres.Unreachable(err) && time.Since(start) < dbWaitFor {
		if time.Since(said) >= dbWaitSay {
			fmt.Fprintf(stderr, "hookwatch serve: waiting for PostgreSQL (%s so far, %s at most; Ctrl-C stops): %v\n",
				time.Since(start).Round(time.Second), dbWaitFor, err)
			said = time.Now()
		}
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-time.After(dbWaitEvery):
		}
		db, name, err = openStore(ctx, flag, home)
	}
	return db, name, err
}

// openStore opens the store the --db value names (dbDSN): a postgres:// or
// postgresql:// URL is a PostgreSQL database, anything else a SQLite file
// (dbFile). It returns the store and how to name it to the user (never a
// password).
func openStore(ctx context.Context, flag, home string) (store.Store, string, error) {
	dsn := dbDSN(flag)
	if err := checkDSN(dsn); err != nil {
		return nil, "", err
	}
	st, name, err := openDSN(ctx, dsn, home)
	if err != nil {
		return nil, "", fmt.Errorf("cannot open the database: %w", err)
	}
	return st, name, nil
}

// checkDSN refuses a URL of a database hookwatch does not speak
// (postgres.OtherURL): taken for a SQLite path, it would become an empty
// database in a directory named after the scheme, and the collector would
// start on it as if it were the one meant. So for libpq's key=value string
// (postgres.KeywordString), whose file would be named after its password.
func checkDSN(dsn string) error {
	if postgres.KeywordString(dsn) {
		return fmt.Errorf("%w: --db (or HOOKWATCH_DB) is a PostgreSQL key=value connection string; hookwatch names PostgreSQL by a URL: postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=… (percent-encode @, /, #, :, ? and %% in the password)",
			errUsage)
	}
	scheme, ok := postgres.OtherURL(dsn)
	if !ok {
		return nil
	}
	return fmt.Errorf("%w: --db (or HOOKWATCH_DB) is a %s:// URL; hookwatch stores in SQLite, named by a file path, or in PostgreSQL, named by a postgres:// URL",
		errUsage, scheme)
}

// errNoDatabase is what a command that reads or deletes returns when the
// SQLite file it names is not there (openExistingStore).
var errNoDatabase = errors.New("no database")

// hasWAL reports whether the SQLite database at path has a write-ahead log
// that holds something.
func hasWAL(path string) bool {
	fi, err := os.Stat(path + "-wal")
	return err == nil && fi.Size() > 0
}

// openExistingStore is openStore for a command that reads or deletes
// (export, prune, token list and revoke): opening a SQLite file that is not
// there would create an empty one, and report nothing or delete nothing as
// if that were the user's database, so it returns errNoDatabase, naming
// the file; so for an empty file (with no write-ahead log beside it, which
// would hold the database), which opening would make a database.
// A PostgreSQL URL is opened as openStore opens it.
func openExistingStore(ctx context.Context, flag, home string) (store.Store, string, error) {
	dsn := dbDSN(flag)
	if err := checkDSN(dsn); err != nil {
		return nil, "", err
	}
	if !postgres.IsURL(dsn) {
		path := dbFile(dsn, home)
		fi, err := os.Stat(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, "", fmt.Errorf("%w at %s (set --db or HOOKWATCH_DB)", errNoDatabase, path)
		}
		if err == nil && fi.Mode().IsRegular() && fi.Size() == 0 && !hasWAL(path) {
			return nil, "", fmt.Errorf("%w at %s, an empty file (set --db or HOOKWATCH_DB)", errNoDatabase, path)
		}
	}
	return openStore(ctx, flag, home)
}

func openDSN(ctx context.Context, dsn, home string) (store.Store, string, error) {
	if postgres.IsURL(dsn) {
		db, err := postgres.Open(ctx, dsn)
		if err != nil {
			return nil, "", err
		}
		return db, "postgres " + db.Where(), nil
	}
	// The directory of a file named is made; home is the caller's.
	if dsn != "" {
		if err := os.MkdirAll(filepath.Dir(dsn), 0o700); err != nil {
			return nil, "", fmt.Errorf("cannot create the database directory: %w", err)
		}
	}
	db, err := sqlite.Open(dbFile(dsn, home))
	if err != nil {
		return nil, "", err
	}
	return db, db.Path(), nil
}

// serveEnv are the variables serve reads, its flags' defaults and the
// settings no flag has (TestServeEnvListed holds it to serve --help).
var serveEnv = append([]string{
	"HOOKWATCH_ADDR", "HOOKWATCH_AUDIT_DIR", "HOOKWATCH_CODEX_ROLLOUTS", envCPUProfile, "HOOKWATCH_DB", "HOOKWATCH_HOME",
	"HOOKWATCH_OTLP_CA_FILE", "HOOKWATCH_OTLP_ENDPOINT", "HOOKWATCH_OTLP_HEADERS", "HOOKWATCH_STALE_FRESH_ABOVE", "HOOKWATCH_STALE_GUARD",
	"HOOKWATCH_STALE_MAX_LISTED", "HOOKWATCH_TOKEN", "HOOKWATCH_WATCH_TRANSCRIPTS", privacy.EnvCapture, privacy.EnvRedact,
	"GOGC", "GOMEMLIMIT",
}, flagEnvs(serveFlagsFromEnv)...)

// serveFlagsOwnEnv are serve's flags with a variable of their own, named
// as flagEnv names it (HOOKWATCH_ADDR for --addr), which sets the flag's
// default as for serveFlagsFromEnv.
var serveFlagsOwnEnv = [...]string{"addr", "audit-dir", "codex-rollouts", "watch-transcripts"}

// serveFlagsFromEnv are serve's flags that have no variable of their own
// otherwise: each takes its default from flagEnv's variable
// (HOOKWATCH_RETAIN for --retain), so that the user service, which passes
// serve the environment and no flag (service install), can set them all.
// --insecure-no-token has none: listening open without a token is asked
// for where serve is started, never inherited from a shell.
var serveFlagsFromEnv = []string{
	"retain", "retain-size", "model-cache-mb", "prices", "tls-cert", "tls-key", "audit-max-bytes", "audit-retain",
	"signal-failed-repeats", "signal-read-repeats", "signal-thrash-switches", "signal-outlier-factor",
	"signal-outlier-siblings", "signal-outlier-calls", "signal-outlier-duration", "signal-stalled-after",
}

// flagEnv is the variable that sets the flag name's default:
// HOOKWATCH_ and the name in capitals, '-' as '_'.
func flagEnv(name string) string {
	return "HOOKWATCH_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// flagEnvs are the variables of the flags names (flagEnv).
func flagEnvs(names []string) []string {
	envs := make([]string, len(names))
	for i, name := range names {
		envs[i] = flagEnv(name)
	}
	return envs
}

// flagsFromEnv sets each flag of names (of fs) whose variable (flagEnv)
// getenv gives a value other than "", before the command line is parsed:
// a flag given there overrides it. Each flag's usage names its variable.
// A value the flag refuses is a usage error naming the variable, a
// *flagRefusal.
func flagsFromEnv(fs *flag.FlagSet, names []string, getenv func(string) string) error {
	for _, name := range names {
		f, env := fs.Lookup(name), flagEnv(name)
		f.Usage += " (env " + env + ")"
		v := getenv(env)
		if v == "" {
			continue
		}
		if err := fs.Set(name, v); err != nil {
			return &flagRefusal{flag: name, env: env, value: v, err: fmt.Errorf("%w: %v", errUsage, err)}
		}
	}
	return nil
}

// serveEnvHelp ends `serve --help`: what the environment sets that no flag does.
const serveEnvHelp = `
Environment:
  HOOKWATCH_TOKEN    admin bearer token every endpoint but /healthz requires (or a token of
                     'hookwatch token create'); a token is mandatory to listen beyond loopback,
                     and there this one must have 16 characters or more
                     (read from the environment only: a flag would show it in ps)
  HOOKWATCH_HOME     data directory: database, spool, logs (default ~/.hookwatch)
  HOOKWATCH_ADDR     listen address when --addr is not given (default 127.0.0.1:7421); the
                     collector a hook, demo, import or doctor --start starts listens at the
                     address of the hooks' URL instead ('hookwatch doctor' says which): to
                     move both, hookwatch install --url http://ADDR
  HOOKWATCH_DB       SQLite path (default $HOOKWATCH_HOME/hookwatch.db), or a postgres:// URL
                     for a team server: several collectors may share one PostgreSQL database
  HOOKWATCH_AUDIT_DIR  the continuous audit trail's directory (default: none)
  HOOKWATCH_CAPTURE  tool output kept of every event stored: none, preview, full (default preview)
  HOOKWATCH_REDACT   0 to store secrets unredacted (default: redact on every path)
  HOOKWATCH_STALE_GUARD  0: http hooks record no state of the files tools read and write
                     (the stale-context guard, see README)
  HOOKWATCH_STALE_MAX_LISTED, HOOKWATCH_STALE_FRESH_ABOVE
                     changed files a resume's context names at most (20); above how many it
                     recommends starting fresh (10)
  HOOKWATCH_OTLP_ENDPOINT  OTLP/HTTP receiver the traces are pushed to (as --otlp-endpoint)
  HOOKWATCH_OTLP_HEADERS   its headers, k=v,k=v with percent-encoded values (authentication)
  HOOKWATCH_OTLP_CA_FILE   PEM certificates it may be signed by besides the system's (as --otlp-ca-file)
  HOOKWATCH_RETAIN, HOOKWATCH_RETAIN_SIZE, HOOKWATCH_MODEL_CACHE_MB, HOOKWATCH_PRICES,
  HOOKWATCH_TLS_CERT, HOOKWATCH_TLS_KEY, HOOKWATCH_AUDIT_MAX_BYTES, HOOKWATCH_AUDIT_RETAIN,
  and one for each --signal-* flag
                     (its name in capitals, - as _, after HOOKWATCH_): the defaults of
                     those flags, which the user service (hookwatch service install) passes
                     on as it does every variable listed here; a flag given overrides its
                     variable
  GOGC, GOMEMLIMIT   the garbage collector's, as for any Go program (serve's defaults: 200,
                     and a limit of 17 times --model-cache-mb plus 1 GiB)
  HOOKWATCH_CPU_PROFILE  a file serve writes its CPU profile to, from its start to its exit
                     (go tool pprof reads it): where a busy collector spends its time

Codex: once Codex's sessions directory exists ($CODEX_HOME/sessions, default ~/.codex/sessions),
serve follows its rollout files (sessions/YYYY/MM/DD/rollout-*.jsonl, those written in the
last 24 hours and on, and those it had read part of) for what Codex's hooks miss; each call
is counted once. It keeps its offsets in $HOOKWATCH_HOME/import-state.json, so a restarted
serve reads on from them. --codex-rollouts=off turns it off; older sessions: hookwatch
import --codex.

Claude Code: once its projects directory exists ($CLAUDE_CONFIG_DIR/projects, default
~/.claude/projects, made by the first session), serve follows its transcripts (those written
in the last 24 hours and on, at most a look every 2 seconds) and imports what they gain as
hookwatch import would: the tokens of every API response per agent and turn, and the
prompts, calls and subagents no hook reported (a session without hooks appears from its
transcripts alone; transcripts record no end, so such a session stays running). What the
hooks also report is counted once. The offsets are hookwatch import's
($HOOKWATCH_HOME/import-state.json). --watch-transcripts=off turns it off; older sessions:
hookwatch import.

Stop it with Ctrl-C, or 'hookwatch stop' when it runs in the background.
`

// listenAddr is the address to tell the user: the host they asked for (the
// listener reports 0.0.0.0 as [::] on a dual-stack system) with the port the
// listener got (they may have asked for port 0).
func listenAddr(asked string, addr net.Addr) string {
	host, _, err := net.SplitHostPort(asked)
	tcp, ok := addr.(*net.TCPAddr)
	if err != nil || !ok || host == "" {
		return addr.String()
	}
	return net.JoinHostPort(host, fmt.Sprint(tcp.Port))
}

// minAdminToken is the shortest HOOKWATCH_TOKEN serve accepts beyond
// loopback: one that cannot be guessed by trying (the tokens of
// hookwatch token create are 43 characters).
const minAdminToken = 16

// defaultServeAddr is where serve listens unless told otherwise: where
// the hook's default URL (hook.DefaultURL) reaches it.
const defaultServeAddr = "127.0.0.1:7421"

func serveEnvOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// serveRolloutsDir returns the Codex sessions directory the collector
// follows for setting ("" for none): "auto" follows $CODEX_HOME/sessions
// (default ~/.codex/sessions) when Codex's home exists — Codex on this
// machine, whose hooks miss exit codes and the calls they did not see —,
// "off" nothing, anything else is the directory itself.
func serveRolloutsDir(setting string) (string, error) {
	return serveFollowDir("--codex-rollouts", setting, func() (string, error) { return codex.SessionsDir(os.Getenv) })
}

// serveTranscriptsDir returns the Claude Code projects directory the
// collector follows for setting ("" for none): "auto" follows
// claudecode.ProjectsDir, from the moment it exists (a collector a hook
// started may well start first: Claude Code makes the directory when its
// first session writes its transcript), "off" nothing, anything else is
// the directory itself.
func serveTranscriptsDir(setting string) (string, error) {
	return serveFollowDir("--watch-transcripts", setting, func() (string, error) {
		return claudecode.ProjectsDir(os.Getenv)
	})
}

// serveFollowDir reads the setting of a flag naming a directory the
// collector follows: auto (what auto finds, "" when it finds nothing or
// fails), off, or the directory.
func serveFollowDir(flag, setting string, auto func() (string, error)) (string, error) {
	switch strings.ToLower(setting) {
	case "off":
		return "", nil
	case "auto":
		dir, _ := auto()
		return dir, nil
	case "":
		return "", fmt.Errorf("%w: %s is auto, off or a directory", errUsage, flag)
	}
	dir, err := filepath.Abs(setting)
	if err != nil {
		return "", err
	}
	// One that is not there yet is followed once it appears (serve warns);
	// one that is something else never will be.
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return "", fmt.Errorf("%w: %s is auto, off or a directory, and %s is not a directory", errUsage, flag, dir)
	}
	return dir, nil
}

// serveHome returns hookwatch's data directory, the same one the hook uses
// (hook.Home), created 0700: it holds prompts and commands. The collector
// writes there whatever its database (the spool's lock, the hooks' socket),
// so a directory it cannot write in is refused at once, saying which one
// and how to name another, not with an error of the database or the spool.
func serveHome() (string, error) {
	home := hook.Home(os.Getenv)
	if err := makeHome(home); err != nil {
		return "", err
	}
	return home, nil
}

// makeHome creates the data directory home, 0700, and checks that it can
// be written in; its error names the directory and how to name another.
// It is what serve checks first, and what a command that starts a
// collector for home checks before starting it.
func makeHome(home string) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return errHomeUnmade(home, err)
	}
	f, err := os.CreateTemp(home, ".hookwatch-probe-*")
	if err != nil {
		return fmt.Errorf("cannot write in the data directory %s (HOOKWATCH_HOME): %v; %s", home, patherr.Strip(err, home), homeFix)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// checkHome returns the error makeHome would return for a data directory
// home that cannot be created, and creates nothing: for a command that
// only reads what home keeps (import --dry-run), where a home that does
// not exist yet keeps nothing to read. A home that exists as a directory
// passes, whether or not it can be written in.
func checkHome(home string) error {
	fi, err := os.Stat(home)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		return errHomeUnmade(home, nil)
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return errHomeUnmade(home, err)
	}
	// MkdirAll would create the missing directories below the nearest
	// that exists, and fail on a file there as this says.
	for dir := filepath.Dir(home); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		switch {
		case err == nil && fi.IsDir():
			return nil
		case err == nil:
			return errHomeUnmade(home, &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR})
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return errHomeUnmade(home, err)
		case dir == filepath.Dir(dir):
			return nil
		}
	}
}

// homeFix is how the errors of an unusable data directory end.
const homeFix = "set HOOKWATCH_HOME to a directory you can write in (default ~/.hookwatch)"

// errHomeUnmade is the error of the data directory home that cannot be
// created, err saying why: a file in its place is said to be one.
func errHomeUnmade(home string, err error) error {
	if fi, serr := os.Stat(home); serr == nil && !fi.IsDir() {
		return fmt.Errorf("the data directory %s (HOOKWATCH_HOME) is a file: move it away, or %s", home, homeFix)
	}
	return fmt.Errorf("cannot create the data directory %s (HOOKWATCH_HOME): %v; %s", home, patherr.Strip(err, home), homeFix)
}

// serveHasTokens reports whether db keeps any access token, revoked ones
// included: a database that ever had tokens stays one that requires them.
func serveHasTokens(ctx context.Context, db store.Store) (bool, error) {
	t, ok := db.(store.TokenStore)
	if !ok {
		return false, nil
	}
	list, err := t.Tokens(ctx)
	if err != nil {
		return false, fmt.Errorf("cannot read the tokens: %w", err)
	}
	return len(list) > 0, nil
}

// serveIsLoopback reports whether addr listens only on the loopback
// interface. An empty host listens on every interface; a host name other
// than localhost is not trusted to resolve to loopback.
// checkListenAddr says what is wrong with addr as a listen address, before
// anything is decided by its host: HOST:PORT, the host empty (every
// interface), a name, or an IP address, the port a number up to 65535.
func checkListenAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want HOST:PORT, such as 127.0.0.1:7421 (%v)", err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("the port %q is not a number from 0 to 65535", port)
	}
	if host != "" && net.ParseIP(host) == nil && strings.Trim(host, "0123456789.") == "" {
		return fmt.Errorf("%q is not an IP address", host)
	}
	return nil
}

func serveIsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
