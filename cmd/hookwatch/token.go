package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/store"
)

func init() {
	register(command{
		name:    "token",
		summary: "create, list and revoke the access tokens of a team server",
		run:     runToken,
	})
}

const tokenUsage = `Usage: hookwatch token <subcommand> [flags]

Subcommands:
  create --user NAME [--team TEAM] [--role user|team|admin] [--out FILE]
      make a token and print its secret, once (--out: to a new file of mode
      0600 instead of stdout): the database keeps only its hash
  list [--json]
      list the tokens, revoked ones included, never their secrets
  revoke ID
      revoke a token: the collectors refuse it from its next request; ID is
      its whole ID or its first 8 characters or more, as token list shows it

Each takes --db PATH|URL (env HOOKWATCH_DB) like 'hookwatch serve'. A user
token sees its user's sessions, a team token its team's, an admin token all.
See docs/team-server.md.
`

// runToken is `hookwatch token`: it dispatches to create, list and revoke,
// which work on the database directly, so that a collector need not run.
func runToken(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return runSubcommand("token", tokenUsage, args, stdout, stderr,
		subcommand{"create", func(args []string) error { return runTokenCreate(ctx, args, stdout, stderr) }},
		subcommand{"list", func(args []string) error { return runTokenList(ctx, args, stdout, stderr) }},
		subcommand{"revoke", func(args []string) error { return runTokenRevoke(ctx, args, stdout, stderr) }})
}

// openTokens opens the database --db names and its tokens; close closes it.
// Only create makes a SQLite file that is not there: list and revoke
// return errNoDatabase (openExistingStore).
func openTokens(ctx context.Context, dsn string, create bool) (tokens store.TokenStore, name string, close func() error, err error) {
	var db store.Store
	if create {
		// home is declared apart so that openStore's error is the
		// function's err, not one shadowed inside this block.
		var home string
		if home, err = serveHome(); err != nil {
			return nil, "", nil, err
		}
		db, name, err = openStore(ctx, dsn, home)
	} else {
		db, name, err = openExistingStore(ctx, dsn, hook.Home(os.Getenv))
	}
	if err != nil {
		return nil, "", nil, err
	}
	t, ok := db.(store.TokenStore)
	if !ok {
		db.Close()
		return nil, "", nil, fmt.Errorf("the database %s keeps no tokens", name)
	}
	return t, name, db.Close, nil
}

// tokenCreateFlags are the values of token create's flags.
type tokenCreateFlags struct{ user, team, role, out, db *string }

// tokenCreateFlagSet defines token create's flags: the one definition
// runTokenCreate parses and the docs' command lines are checked against.
func tokenCreateFlagSet(stdout, stderr io.Writer) (*flag.FlagSet, tokenCreateFlags) {
	fs := newFlagSet("token create", "token create --user NAME [--team TEAM] [--role user|team|admin] [--out FILE] [--db PATH|URL]", stdout, stderr)
	return fs, tokenCreateFlags{
		user: fs.String("user", "", "the user the token's events are recorded as (required)"),
		team: fs.String("team", "", "the team of the user: a team token sees the sessions of its team's users"),
		role: fs.String("role", store.RoleUser, "user: its own sessions; team: its team's; admin: everything, /metrics included"),
		out:  fs.String("out", "", "write the secret to this new `FILE`, readable by its owner only (0600), instead of to stdout"),
		db:   dbFlagVar(fs),
	}
}

func runTokenCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := tokenCreateFlagSet(stdout, stderr)
	user, team, role, out, dbFlag := f.user, f.team, f.role, f.out, f.db
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	switch {
	case *user == "":
		return fmt.Errorf("%w: --user is required", errUsage)
	case !printableName(*user):
		return fmt.Errorf("%w: --user must be printable text without surrounding spaces, got %q", errUsage, *user)
	case !printableName(*team) && *team != "":
		return fmt.Errorf("%w: --team must be printable text without surrounding spaces, got %q", errUsage, *team)
	case !store.ValidRole(*role):
		return fmt.Errorf("%w: --role must be user, team or admin, got %q", errUsage, *role)
	case *role == store.RoleTeam && *team == "":
		return fmt.Errorf("%w: a team token needs --team", errUsage)
	}
	tokens, name, closeDB, err := openTokens(ctx, *dbFlag, true)
	if err != nil {
		return err
	}
	defer closeDB()
	// The note that a collector running open closes is true of the
	// database's first token only: any token, revoked or not, closes it.
	prior, err := tokens.Tokens(ctx)
	if err != nil {
		return fmt.Errorf("cannot read the tokens of %s: %w", name, err)
	}
	// The file is made before the token, so that a file that cannot be
	// made leaves no token whose secret nobody holds; O_EXCL keeps a file
	// that exists, which may hold another token's secret.
	var file *os.File
	if *out != "" {
		if file, err = os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s exists: name a new file for --out (it may hold another token's secret)", *out)
		} else if err != nil {
			return fmt.Errorf("cannot make the --out file: %w", err)
		}
		defer file.Close()
	}
	t, secret := store.NewToken(*user, *team, *role, time.Now())
	if err := tokens.CreateToken(ctx, t); err != nil {
		if file != nil {
			os.Remove(*out)
		}
		return fmt.Errorf("cannot create the token in %s: %w", name, err)
	}
	where, secretFile := "printed below", "<file holding the secret>"
	if file != nil {
		where, secretFile = "in "+*out, *out
	}
	fmt.Fprintf(stderr, "hookwatch token: created token %s (user %s, role %s) in %s.\n"+
		"Its secret is %s, once; the database keeps only its hash. Give it to %s,\n"+
		"who points a laptop at the server with:\n"+
		"  hookwatch install --url <the server's URL: https://… when it serves --tls-cert> --token-file %s\n", t.ID, t.User, t.Role, name, where, t.User, secretFile)
	if len(prior) == 0 {
		fmt.Fprintf(stderr, "A collector of this database that ran open (no HOOKWATCH_TOKEN, no tokens) requires a\n"+
			"token of every request from now on, within a second, without a restart.\n")
	}
	if file == nil {
		fmt.Fprintln(stdout, secret)
		return nil
	}
	if _, err := fmt.Fprintln(file, secret); err != nil {
		return fmt.Errorf("cannot write the secret to %s: %w (revoke token %s: hookwatch token revoke %s)", *out, err, t.ID, t.ID)
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("cannot write the secret to %s: %w (revoke token %s: hookwatch token revoke %s)", *out, err, t.ID, t.ID)
	}
	return nil
}

// tokenListFlagSet defines token list's flags, --json and --db: the one
// definition runTokenList parses and the docs' command lines are checked
// against.
func tokenListFlagSet(stdout, stderr io.Writer) (fs *flag.FlagSet, asJSON *bool, db *string) {
	fs = newFlagSet("token list", "token list [--json] [--db PATH|URL]", stdout, stderr)
	return fs, fs.Bool("json", false, "print a JSON array"), dbFlagVar(fs)
}

func runTokenList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, asJSON, dbFlag := tokenListFlagSet(stdout, stderr)
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	var list []store.Token
	tokens, _, closeDB, err := openTokens(ctx, *dbFlag, false)
	var none string // why there are none, when the database is not there
	switch {
	case errors.Is(err, errNoDatabase):
		// No database, no tokens: said as for an empty one, with where
		// it looked (a --db that names the wrong file shows).
		none = ": " + err.Error()
	case err != nil:
		return err
	default:
		defer closeDB()
		if list, err = tokens.Tokens(ctx); err != nil {
			return err
		}
	}
	if *asJSON {
		if list == nil {
			list = []store.Token{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list) // Token's JSON has no hash
	}
	if len(list) == 0 {
		// A header alone reads as a failure; without tokens (nor
		// HOOKWATCH_TOKEN) serve stays on loopback: say what comes next.
		fmt.Fprintf(stdout, "No tokens%s. Make one with: hookwatch token create --user NAME\n", none)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUSER\tTEAM\tROLE\tCREATED\tREVOKED")
	for _, t := range list {
		revoked := "-"
		if !t.RevokedAt.IsZero() {
			revoked = t.RevokedAt.Local().Format(time.DateTime)
		}
		team := "-"
		if t.Team != "" {
			team = listName(t.Team)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, listName(t.User), team, t.Role, t.CreatedAt.Local().Format(time.DateTime), revoked)
	}
	return tw.Flush()
}

// listName is a user's or team's name as token list shows it: bare, so
// that its text starts where the column's "-" (none) does, and quoted only
// when it must be to read as one name: a space or a quote in it, or "-"
// itself, which would read as none. (printableName keeps control
// characters out of every name.)
func listName(name string) string {
	if name == "-" || strings.ContainsAny(name, " \"'\t") || strings.ContainsFunc(name, unicode.IsSpace) {
		return strconv.Quote(name)
	}
	return name
}

// tokenRevokeFlagSet defines token revoke's flag, --db: the one definition
// runTokenRevoke parses and the docs' command lines are checked against.
func tokenRevokeFlagSet(stdout, stderr io.Writer) (fs *flag.FlagSet, db *string) {
	fs = newFlagSet("token revoke", "token revoke [--db PATH|URL] ID", stdout, stderr)
	return fs, dbFlagVar(fs)
}

func runTokenRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dbFlag := tokenRevokeFlagSet(stdout, stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: token revoke takes one token ID, or its first %d characters or more (see hookwatch token list)", errUsage, minPrefix)
	}
	id := fs.Arg(0)
	tokens, name, closeDB, err := openTokens(ctx, *dbFlag, false)
	if errors.Is(err, errNoDatabase) {
		return fmt.Errorf("no token %q: %w", id, err)
	}
	if err != nil {
		return err
	}
	defer closeDB()
	all, err := tokens.Tokens(ctx)
	if err != nil {
		return err
	}
	t, found, err := tokenByID(all, id)
	if err != nil {
		return err
	}
	if !found {
		hint := ""
		if len(id) < minPrefix {
			hint = fmt.Sprintf(": give its whole ID, or its first %d characters or more", minPrefix)
		}
		return fmt.Errorf("no token %q in %s%s (see hookwatch token list)", id, name, hint)
	}
	if !t.RevokedAt.IsZero() {
		// Nothing to do, and not an error: the token is refused already.
		fmt.Fprintf(stdout, "hookwatch token: %s (user %s) was revoked already, at %s: nothing changed\n", t.ID, listName(t.User), t.RevokedAt.Local().Format(time.DateTime))
		return nil
	}
	if err := tokens.RevokeToken(ctx, t.ID, time.Now()); errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no token %q in %s (see hookwatch token list)", id, name)
	} else if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "hookwatch token: revoked %s (user %s, role %s)\n", t.ID, listName(t.User), t.Role)
	return nil
}

// tokenByID is the token of all whose ID is id, else the one whose ID
// starts with id when id is minPrefix characters or more (pickPrefixed):
// found is false when there is none, and several are an error naming them.
func tokenByID(all []store.Token, id string) (t store.Token, found bool, err error) {
	ids := make([]string, len(all))
	for i, t := range all {
		if t.ID == id {
			return t, true, nil
		}
		ids[i] = t.ID
	}
	if len(id) < minPrefix {
		return store.Token{}, false, nil
	}
	full, err := pickPrefixed("tokens", id, prefixed(ids, id))
	if err != nil {
		return store.Token{}, false, err
	}
	for _, t := range all {
		if t.ID == full {
			return t, true, nil
		}
	}
	return store.Token{}, false, nil
}

// printableName reports whether a user's or a team's name is one line of
// printable text without leading or trailing spaces: the name every
// session of the token's events is recorded under, shown in listings,
// logs and exports.
func printableName(s string) bool {
	if s == "" || strings.TrimSpace(s) != s || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
