package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TestOtherURL: a URL that is not PostgreSQL's is told apart from a path
// and from PostgreSQL's, by its scheme alone.
func TestOtherURL(t *testing.T) {
	for dsn, want := range map[string]string{
		"mysql://hw:s3cr3t@127.0.0.1/hw": "mysql",
		"sqlite:///var/lib/hw.db":        "sqlite",
		"Postgres://hw@db/hw":            "Postgres",
		"git+ssh://host/x":               "git+ssh",
		"postgres://hw@db/hw":            "",
		"postgresql://hw@db/hw":          "",
		"/var/lib/hookwatch/hw.db":       "",
		"hw.db":                          "",
		"./a://b.db":                     "",
		"1db://x":                        "",
		"://x":                           "",
		"":                               "",
	} {
		scheme, ok := OtherURL(dsn)
		if scheme != want || ok != (want != "") {
			t.Errorf("OtherURL(%q) = %q, %v; want %q", dsn, scheme, ok, want)
		}
	}
}

// TestKeywordString: libpq's key=value connection string, which hookwatch
// would otherwise take for a SQLite file's path, is told apart from a path
// by a keyword of libpq's that starts one of its words.
func TestKeywordString(t *testing.T) {
	for dsn, want := range map[string]bool{
		"host=db.internal port=5432 user=hw password=s3cr3t dbname=hw": true,
		"dbname=hookwatch":                    true,
		"  host = 127.0.0.1 dbname = hw":      true,
		"sslmode=verify-full service=hw":      true,
		"/var/lib/hookwatch/hw.db":            false,
		"hw.db":                               false,
		"./host=x.db":                         false,
		"/srv/data/user=ann.db":               false,
		"hostname=x.db":                       false,
		"postgres://hw@db/hw?sslmode=disable": false,
		"":                                    false,
	} {
		if got := KeywordString(dsn); got != want {
			t.Errorf("KeywordString(%q) = %v, want %v", dsn, got, want)
		}
	}
}

// TestOpenAmbiguousURL: a password holding a reserved character that is not
// percent-encoded makes pgx read part of it as the host or the database,
// which the errors would then show; Open refuses such a URL before
// connecting, naming none of its parts, and says how to write it. The same
// password percent-encoded is read as meant.
func TestOpenAmbiguousURL(t *testing.T) {
	for _, url := range []string{
		"postgres://hw:pw@zq9@127.0.0.1:1/hw",
		"postgres://hw:pw@zq9/vk#xj@127.0.0.1:1/hw",
		"postgresql://hw:pw/vk7@127.0.0.1:1/hw",
	} {
		_, err := Open(context.Background(), url)
		if err == nil {
			t.Fatalf("Open(%q): no error", url)
		}
		msg := err.Error()
		for _, part := range []string{"zq9", "vk", "xj"} {
			if strings.Contains(msg, part) {
				t.Errorf("Open(%q): the error shows %q, a part of the password: %s", url, part, msg)
			}
		}
		if !strings.Contains(msg, "percent-encode") {
			t.Errorf("Open(%q): %s, want it to say to percent-encode", url, msg)
		}
	}
	// pgx reads a # in a password as meant: no part of it is shown.
	if _, err := Open(context.Background(), "postgres://hw:pw#vk7@127.0.0.1:1/hw"); err == nil || strings.Contains(err.Error(), "vk7") {
		t.Errorf("Open with a # in the password: %v", err)
	}
	cfg, err := pgxpool.ParseConfig("postgres://hw:p%40ss%2Fw%23rd@127.0.0.1:1/hw")
	if err != nil {
		t.Fatal(err)
	}
	if ambiguous("postgres://hw:p%40ss%2Fw%23rd@127.0.0.1:1/hw", cfg.ConnConfig) || cfg.ConnConfig.Password != "p@ss/w#rd" {
		t.Errorf("the percent-encoded password: ambiguous, or read as %q", cfg.ConnConfig.Password)
	}
}

// TestOpenBadParameter: a URL whose parameters pgx refuses (a misspelt
// sslmode) is refused naming the parameters to check, not with the advice
// to percent-encode a password that needs none, and without the password.
func TestOpenBadParameter(t *testing.T) {
	for _, url := range []string{
		"postgres://hw:s3cr3t@127.0.0.1:1/hw?sslmode=bogus",
		"postgres://hw:s3cr3t@127.0.0.1:1/hw?connect_timeout=soon&sslmode=disable",
	} {
		_, err := Open(context.Background(), url)
		if err == nil {
			t.Fatalf("Open(%q): no error", url)
		}
		msg := err.Error()
		if strings.Contains(msg, "percent-encode") || strings.Contains(msg, "s3cr3t") || !strings.Contains(msg, "parameters") ||
			!strings.Contains(msg, "sslmode") {
			t.Errorf("Open(%q): %s, want it to name the parameters, not the password", url, msg)
		}
	}
}

// TestNeedsTLS: which URLs get sslmode=require: a host beyond this machine
// (any of several) without an sslmode of their own, nor PGSSLMODE.
func TestNeedsTLS(t *testing.T) {
	for dsn, want := range map[string]bool{
		"postgres://hw@db.internal/hw":                         true,
		"postgres://hw@10.0.0.5:5432/hw?connect_timeout=5":     true,
		"postgres://hw@127.0.0.1:1,db.internal:2/hw":           true,
		"postgres://hw@db.internal/hw?sslmode=disable":         false,
		"postgres://hw@db.internal/hw?sslmode=prefer":          false,
		"postgres://hw@db.internal/hw?ssl=true":                false,
		"postgres://hw@127.0.0.1/hw":                           false,
		"postgres://hw@[::1]:5432/hw":                          false,
		"postgres://hw@localhost/hw":                           false,
		"postgres:///hw?host=/var/run/postgresql":              false,
		"postgres://hw@127.0.0.1:1,localhost:2/hw":             false,
		"host=db.internal dbname=hw":                           true,
		"host=db.internal dbname=hw sslmode=verify-full":       false,
		"postgres://hw@db.internal/hw?application_name=x#frag": true,
	} {
		cfg, err := pgxpool.ParseConfig(dsn)
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		if got := needsTLS(dsn, cfg.ConnConfig, func(string) string { return "" }); got != want {
			t.Errorf("needsTLS(%q) = %v, want %v", dsn, got, want)
		}
		if want {
			// The URL with sslmode=require parses, and requires TLS of
			// every host: no fallback in clear text.
			cfg, err := pgxpool.ParseConfig(withParameter(dsn, "sslmode", "require"))
			if err != nil {
				t.Fatalf("%s with sslmode=require: %v", dsn, err)
			}
			for _, fb := range append([]*pgconn.FallbackConfig{{Host: cfg.ConnConfig.Host, TLSConfig: cfg.ConnConfig.TLSConfig}}, cfg.ConnConfig.Fallbacks...) {
				if fb.TLSConfig == nil {
					t.Errorf("%s with sslmode=require: %s in clear text", dsn, fb.Host)
				}
			}
		}
	}
	if needsTLS("postgres://hw@db.internal/hw", mustConfig(t, "postgres://hw@db.internal/hw"), func(k string) string {
		if k == "PGSSLMODE" {
			return "disable"
		}
		return ""
	}) {
		t.Error("needsTLS with PGSSLMODE set: true, want PGSSLMODE kept")
	}
}

func mustConfig(t *testing.T, dsn string) *pgx.ConnConfig {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.ConnConfig
}

// FuzzRequireTLS: whatever URL pgx takes, when needsTLS asks for
// sslmode=require, the URL with it added parses and leaves no host of it
// in clear text, and names the same hosts, user and database.
func FuzzRequireTLS(f *testing.F) {
	for _, s := range []string{"postgres://hw@db.internal/hw", "postgres://hw:p%3Fw@db:1,db2:2/hw?application_name=x#y",
		"postgresql://db/hw?", "postgres:///hw?host=/tmp", "host=db dbname=hw"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		cfg, err := pgxpool.ParseConfig(dsn)
		if err != nil || !needsTLS(dsn, cfg.ConnConfig, func(string) string { return "" }) {
			return
		}
		req, err := pgxpool.ParseConfig(withParameter(dsn, "sslmode", "require"))
		if err != nil {
			t.Fatalf("%q with sslmode=require: %v", dsn, err)
		}
		c, r := cfg.ConnConfig, req.ConnConfig
		if c.Host != r.Host || c.Port != r.Port || c.User != r.User || c.Database != r.Database {
			t.Fatalf("%q with sslmode=require names %s@%s:%d/%s, want %s@%s:%d/%s", dsn, r.User, r.Host, r.Port, r.Database, c.User, c.Host, c.Port, c.Database)
		}
		if r.TLSConfig == nil && !strings.HasPrefix(r.Host, "/") {
			t.Fatalf("%q with sslmode=require: %s in clear text", dsn, r.Host)
		}
		for _, fb := range r.Fallbacks {
			if fb.TLSConfig == nil && !strings.HasPrefix(fb.Host, "/") {
				t.Fatalf("%q with sslmode=require: %s in clear text", dsn, fb.Host)
			}
		}
	})
}
