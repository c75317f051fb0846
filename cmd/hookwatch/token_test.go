package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/store"
)

// TestTokenCommands creates, lists and revokes tokens with the commands,
// then serves beyond loopback with them: a token in the database is what
// lets serve listen there, and what every request then needs.
func TestTokenCommands(t *testing.T) {
	dir, cmd := tokenHome(t)
	for _, args := range [][]string{{"create"}, {"create", "--user", "a", "--role", "root"}, {"create", "--user", "a", "--role", "team"}, {"revoke"}, {"nope"},
		{"create", "--user", "ann\nroot"}, {"create", "--user", " ann"}, {"create", "--user", "ann\x1b[2J"}, {"create", "--user", "ann", "--team", "a\tb"}} {
		if _, _, err := cmd(args...); err == nil {
			t.Errorf("token %v: no error", args)
		}
	}
	for args, want := range map[string]string{"": "missing token subcommand", "nope": `unknown token subcommand "nope" (want create, list or revoke)`} {
		if _, _, err := cmd(strings.Fields(args)...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("token %s: %v, want an error with %q", args, err, want)
		}
	}
	if out, _, err := cmd("help"); err != nil || !strings.Contains(out, "Usage: hookwatch token <subcommand>") {
		t.Errorf("token help: %v\n%s", err, out)
	}
	// Without a database: none, and where it looked.
	if out, _, err := cmd("list"); err != nil || !strings.Contains(out, "No tokens: no database at "+filepath.Join(dir, "hookwatch.db")) ||
		!strings.Contains(out, ". Make one with: hookwatch token create --user NAME") {
		t.Errorf("list of no tokens: %v\n%s", err, out)
	}
	if out, _, err := cmd("list", "--json"); err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("list --json of no tokens: %v\n%s", err, out)
	}
	if _, _, err := cmd("revoke", "tok_x"); err == nil || !strings.Contains(err.Error(), "no database at "+filepath.Join(dir, "hookwatch.db")) {
		t.Errorf("revoke without a database: %v", err)
	}
	// Listing or revoking made no database: only create does.
	if _, err := os.Stat(filepath.Join(dir, "hookwatch.db")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the database after list and revoke: %v, want none", err)
	}
	secret, _, err := cmd("create", "--user", "ann", "--team", "red")
	if err != nil {
		t.Fatal(err)
	}
	secret = strings.TrimSpace(secret)
	if !strings.HasPrefix(secret, store.TokenPrefix) || len(secret) != len(store.TokenPrefix)+64 {
		t.Fatalf("create printed %q, want one secret", secret)
	}
	other, _, err := cmd("create", "--user", "bob", "--role", "admin")
	if err != nil {
		t.Fatal(err)
	}
	other = strings.TrimSpace(other)

	table, _, err := cmd("list")
	if err != nil || !strings.Contains(table, " ann ") || !strings.Contains(table, " red ") || !strings.Contains(table, "admin") {
		t.Fatalf("list: %v\n%s", err, table)
	}
	js, _, err := cmd("list", "--json")
	var list []store.Token
	if err != nil || json.Unmarshal([]byte(js), &list) != nil || len(list) != 2 {
		t.Fatalf("list --json: %v\n%s", err, js)
	}
	for _, out := range []string{table, js} {
		for _, s := range []string{secret, other, store.HashToken(secret)} {
			if strings.Contains(out, s) {
				t.Errorf("token list shows a secret or its hash:\n%s", out)
			}
		}
	}
	if _, _, err := cmd("revoke", "nope"); err == nil || !strings.Contains(err.Error(), "no token") {
		t.Errorf("revoke of an unknown id: %v", err)
	}
	if out, _, err := cmd("revoke", list[1].ID); err != nil || !strings.Contains(out, list[1].ID) || strings.Contains(out, "already") {
		t.Fatalf("revoke: %v %s", err, out)
	}
	// Revoked again: said so, and the first time is kept.
	if out, _, err := cmd("revoke", list[1].ID); err != nil || !strings.Contains(out, list[1].ID+" (user bob) was revoked already, at ") {
		t.Errorf("revoke of a revoked token: %v %s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "hookwatch.db"))
	if err != nil || bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(other)) {
		t.Errorf("the database holds a secret (read: %v)", err)
	}

	// With tokens in its database serve listens beyond loopback, and
	// requires a valid one.
	ctx, cancel := context.WithCancel(context.Background())
	line, done := startServe(t, ctx, "--addr", "0.0.0.0:0")
	defer func() { cancel(); <-done }()
	url := strings.Replace(line[strings.Index(line, "http://"):strings.Index(line, " (")], "0.0.0.0", "127.0.0.1", 1)
	get := func(secret string, want int) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url+"/v1/sessions", nil)
		if secret != "" {
			req.Header.Set("Authorization", "Bearer "+secret)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET /v1/sessions with %.8s…: %d, want %d", secret, res.StatusCode, want)
		}
	}
	get(secret, 200)
	get("", 401)
	get(other, 401) // revoked
}

// TestTokenCreateUnopenableDatabase: a database that cannot be opened is an
// error saying why, for create as for list and revoke, not a crash.
func TestTokenCreateUnopenableDatabase(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", dir)
	t.Setenv("HOOKWATCH_TOKEN", "")
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A database under a regular file: its directory cannot be made.
	t.Setenv("HOOKWATCH_DB", filepath.Join(file, "hookwatch.db"))
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"token", "create", "--user", "ann"}, nil, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "cannot open the database") || stdout.Len() != 0 {
		t.Errorf("token create on a database that cannot be opened: %v, stdout %q", err, stdout.String())
	}
}

// TestTokenCreateOutAndNote: --out writes the secret to a new file only its
// owner may read, refusing one that exists (it may hold another token's
// secret), and prints nothing on stdout; the note that a collector running
// open now requires tokens comes with the database's first token only.
func TestTokenCreateOutAndNote(t *testing.T) {
	dir, cmd := tokenHome(t)
	const note = "ran open"
	file := filepath.Join(dir, "ann.token")
	out, errOut, err := cmd("create", "--user", "ann", "--out", file)
	if err != nil || out != "" || !strings.Contains(errOut, note) || !strings.Contains(errOut, file) {
		t.Fatalf("create --out: %v, stdout %q, stderr %q", err, out, errOut)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the --out file: %v, mode %v, want 0600", err, fi.Mode())
	}
	secret, _ := os.ReadFile(file)
	if s := strings.TrimSpace(string(secret)); !strings.HasPrefix(s, store.TokenPrefix) || len(s) != len(store.TokenPrefix)+64 {
		t.Fatalf("the --out file holds %q, want one secret", secret)
	}
	// An existing file is kept, and no token is made.
	if _, _, err := cmd("create", "--user", "bob", "--out", file); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("create --out an existing file: %v, want an error saying it exists", err)
	}
	if b, _ := os.ReadFile(file); !bytes.Equal(b, secret) {
		t.Errorf("create --out an existing file replaced it")
	}
	// The second token: no note.
	if out, errOut, err := cmd("create", "--user", "lee"); err != nil || strings.Contains(errOut, note) || !strings.HasPrefix(out, store.TokenPrefix) {
		t.Errorf("second create: %v, stdout %q, stderr %q, want no note", err, out, errOut)
	}
	js, _, _ := cmd("list", "--json")
	var list []store.Token
	if json.Unmarshal([]byte(js), &list) != nil || len(list) != 2 {
		t.Errorf("tokens after create --out of an existing file: %s, want ann's and lee's", js)
	}
}

// TestTokenListAligned: a plain name is listed bare, so that its text starts
// where the column's "-" (none) does; a name that needs them (a space, a
// quote, or "-" itself, which would read as none) keeps its quotes.
func TestTokenListAligned(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", dir)
	t.Setenv("HOOKWATCH_TOKEN", "")
	t.Setenv("HOOKWATCH_DB", "")
	for _, args := range [][]string{{"--user", "ann", "--team", "payments"}, {"--user", "lee"}, {"--user", "Lee Ray", "--team", "-"}} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), append([]string{"token", "create"}, args...), nil, &stdout, &stderr); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"token", "list"}, nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("list:\n%s", stdout.String())
	}
	user, team := strings.Index(lines[0], "USER"), strings.Index(lines[0], "TEAM")
	for i, want := range [][2]string{{"ann ", "payments "}, {"lee ", "- "}, {`"Lee Ray" `, `"-" `}} {
		l := lines[i+1]
		if !strings.HasPrefix(l[user:], want[0]) || !strings.HasPrefix(l[team:], want[1]) {
			t.Errorf("line %q: want user %q and team %q at the columns' start:\n%s", l, want[0], want[1], stdout.String())
		}
	}
}

// tokenHome makes a home of its own for the token commands, with the
// default database, and returns it with a function that runs
// `hookwatch token ARGS…` and gives its stdout and stderr.
func tokenHome(t *testing.T) (dir string, cmd func(args ...string) (string, string, error)) {
	dir = t.TempDir()
	t.Setenv("HOOKWATCH_HOME", dir)
	t.Setenv("HOOKWATCH_TOKEN", "")
	t.Setenv("HOOKWATCH_DB", "")
	return dir, func(args ...string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"token"}, args...), nil, &stdout, &stderr)
		return stdout.String(), stderr.String(), err
	}
}

// TestTokenRevokePrefix revokes tokens by the start of their ids, in a
// SQLite file and in PostgreSQL: the one id that starts so is revoked and
// named whole, a start several ids share is refused naming them all and
// revoking none, an unknown one or one too short to look for says so, and
// a token revoked already is said to be, its first time kept.
func TestTokenRevokePrefix(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			dir, cmd := tokenHome(t)
			dsn := filepath.Join(dir, "hookwatch.db")
			if backend == "postgres" {
				dsn = pgtest.NewDatabase(t)
				t.Setenv("HOOKWATCH_DB", dsn)
			}
			ctx := context.Background()
			db, _, err := openStore(ctx, dsn, dir)
			if err != nil {
				t.Fatal(err)
			}
			created := time.Now().Add(-time.Hour)
			for _, id := range []string{"abcd1234ef01", "abcd1234ef02", "5e5e5e5e0001"} {
				tok, _ := store.NewToken("ann", "", store.RoleUser, created)
				tok.ID = id
				if err := db.(store.TokenStore).CreateToken(ctx, tok); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()
			revoked := func() map[string]time.Time {
				t.Helper()
				js, _, err := cmd("list", "--json")
				var list []store.Token
				if err != nil || json.Unmarshal([]byte(js), &list) != nil {
					t.Fatalf("list --json: %v\n%s", err, js)
				}
				m := map[string]time.Time{}
				for _, tok := range list {
					if !tok.RevokedAt.IsZero() {
						m[tok.ID] = tok.RevokedAt
					}
				}
				return m
			}

			if _, _, err := cmd("revoke", "abcd1234"); err == nil || !errors.Is(err, errUsage) ||
				!strings.Contains(err.Error(), "2 tokens start with abcd1234: abcd1234ef01, abcd1234ef02; give more of its id") {
				t.Errorf("revoke of a start two ids share: %v", err)
			}
			for _, id := range []string{"abcd1234ff", "0000000000000000"} {
				if _, _, err := cmd("revoke", id); err == nil || !strings.Contains(err.Error(), `no token "`+id+`"`) {
					t.Errorf("revoke %s: %v, want no such token", id, err)
				}
			}
			if _, _, err := cmd("revoke", "5e5e5e"); err == nil || !strings.Contains(err.Error(), "first 8 characters or more") {
				t.Errorf("revoke of a start shorter than 8 characters: %v, want it named too short", err)
			}
			if r := revoked(); len(r) != 0 {
				t.Fatalf("revoked after refusals: %v, want none", r)
			}

			out, _, err := cmd("revoke", "5e5e5e5e")
			if err != nil || !strings.Contains(out, "revoked 5e5e5e5e0001 (user ann, role user)") {
				t.Fatalf("revoke by a start of 8: %v %s", err, out)
			}
			first := revoked()
			if _, ok := first["5e5e5e5e0001"]; len(first) != 1 || !ok {
				t.Fatalf("revoked: %v, want 5e5e5e5e0001 alone", first)
			}
			out, _, err = cmd("revoke", "abcd1234ef0")
			if err == nil {
				t.Fatalf("revoke of a start two ids share: %s", out)
			}
			if out, _, err = cmd("revoke", "abcd1234ef02"); err != nil || !strings.Contains(out, "revoked abcd1234ef02") {
				t.Fatalf("revoke by the whole id: %v %s", err, out)
			}
			// Again, by its start: said so, and the first time is kept.
			out, _, err = cmd("revoke", "5e5e5e5e00")
			if err != nil || !strings.Contains(out, "5e5e5e5e0001 (user ann) was revoked already, at ") || !strings.Contains(out, "nothing changed") {
				t.Errorf("revoke of a revoked token: %v %s", err, out)
			}
			if r := revoked(); !r["5e5e5e5e0001"].Equal(first["5e5e5e5e0001"]) || len(r) != 2 {
				t.Errorf("revoked: %v, want the first time kept and abcd1234ef02 besides", r)
			}
		})
	}
}
