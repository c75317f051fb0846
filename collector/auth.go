package collector

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/store"
)

// A request is made by a principal: whom its bearer token names. The admin
// token of Config.Token, and every request to an open collector (no Token,
// no RequireAuth), is an admin that is no user: it sees everything, and the
// events it sends keep the user their envelopes name. A token the store
// keeps (store.TokenStore) names a user: the events sent with it are
// recorded as that user's whatever they claim, into that user's sessions
// only, and what it reads is limited by its role — its own sessions
// (store.RoleUser), its team's (store.RoleTeam) or everything
// (store.RoleAdmin).
type principal struct {
	// User is the token's user; "" for the admin token and an open
	// collector.
	User string
	Role string
	// Users are the users whose sessions the principal sees; nil for
	// every user.
	Users []string
}

type principalKey struct{}

// principalOf returns the principal of a request's context; ok is false
// for a context that no request made (the spool drain, Ingest from Go).
func principalOf(ctx context.Context) (p principal, ok bool) {
	p, ok = ctx.Value(principalKey{}).(principal)
	return p, ok
}

// sees reports whether p may read the sessions of user.
func (p principal) sees(user string) bool {
	return p.Users == nil || slices.Contains(p.Users, user)
}

// tokenStore returns st's tokens, nil when it keeps none.
func tokenStore(st store.Store) store.TokenStore {
	t, _ := st.(store.TokenStore)
	return t
}

// ErrForbidden is returned by Ingest when a request's token may not write
// into a session: it belongs to another user.
var ErrForbidden = errors.New("forbidden")

// authenticate finds the request's principal and refuses the request (401)
// without one.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, code, why := s.principal(r)
		if code != 0 {
			if code == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="hookwatch"`)
				writeError(w, code, why)
			} else {
				writeDatabaseDown(w, "cannot check the bearer token")
			}
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// The words of a refused token (401), by what was wrong with it: whoever
// reads them (a forwarder's log, curl, the dashboard) learns what to do. A
// revoked token's holder is told so: the secret tells who holds it that it
// was a token, and a revoked one is replaced, not checked for typos.
const (
	refusedNone    = "no bearer token: send Authorization: Bearer <token>"
	refusedUnknown = "unknown bearer token: a wrong or mistyped one"
	refusedRevoked = hook.RevokedToken + "%s: " + hook.RevokedTokenFix
)

// principal returns the principal of r, or the status code refusing it
// and, for 401, why. The presented token is compared by its SHA-256:
// against the admin token in constant time whatever its length, and looked
// up by it in the store, which keeps nothing else of a token.
func (s *Server) principal(r *http.Request) (principal, int, string) {
	if s.cfg.Token == "" && !s.requireAuth(r.Context()) {
		return principal{Role: store.RoleAdmin}, 0, ""
	}
	scheme, secret, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return principal{}, http.StatusUnauthorized, refusedNone
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(secret)))
	if s.cfg.Token != "" {
		want := sha256.Sum256([]byte(s.cfg.Token))
		if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
			return principal{Role: store.RoleAdmin}, 0, ""
		}
	}
	if s.tokens == nil {
		return principal{}, http.StatusUnauthorized, refusedUnknown
	}
	hash := hex.EncodeToString(got[:]) // store.HashToken of the secret
	t, err := s.tokens.TokenByHash(r.Context(), hash)
	switch {
	case errors.Is(err, store.ErrRevoked) && subtle.ConstantTimeCompare([]byte(t.Hash), []byte(hash)) == 1:
		s.tokensDown.answered(s.log)
		return principal{}, http.StatusUnauthorized, fmt.Sprintf(refusedRevoked, " at "+t.RevokedAt.UTC().Format(time.RFC3339))
	case errors.Is(err, store.ErrNotFound) || (err == nil && subtle.ConstantTimeCompare([]byte(t.Hash), []byte(hash)) != 1):
		s.tokensDown.answered(s.log)
		return principal{}, http.StatusUnauthorized, refusedUnknown
	case err != nil:
		s.tokensDown.fail(s.log, err)
		return principal{}, http.StatusServiceUnavailable, ""
	}
	p := principal{User: t.User, Role: t.Role}
	switch t.Role {
	case store.RoleAdmin:
	case store.RoleTeam:
		if t.Team != "" {
			if p.Users, err = s.tokens.TeamUsers(r.Context(), t.Team); err != nil {
				s.tokensDown.fail(s.log, err)
				return principal{}, http.StatusServiceUnavailable, ""
			}
		}
		if !slices.Contains(p.Users, t.User) {
			p.Users = append(p.Users, t.User)
		}
	default:
		p.Users = []string{t.User}
	}
	s.tokensDown.answered(s.log)
	return p, 0, ""
}

// outageRepeat is how often the log says again that the database still
// fails.
const outageRepeat = 30 * time.Second

// outage tells the log of the store failing one kind of work (token checks,
// commits, the session model's reads and writes): when it starts, every outageRepeat while it lasts, and when it
// ends. Each failure is counted, not logged: a team's hooks send many
// requests a second, and a line for each would bury the log. Its text
// says what fails; a zero outage is ready for use once text is set.
type outage struct {
	text *outageText

	down   atomic.Bool // the fast path of answered
	mu     sync.Mutex
	since  time.Time // the first failure
	said   time.Time // the last line about it
	failed int       // failures since since
}

// outageText is what an outage's lines say.
type outageText struct {
	start string // the first failure
	still string // every outageRepeat while it lasts
	end   string // the first success after
	count string // the attribute that counts the failures
}

// tokenOutage is the text of the store failing the token checks.
var tokenOutage = outageText{
	start: "cannot check bearer tokens: the database does not answer; every request that needs a token is answered 503 until it does (the command hooks and forwarders keep their events in their spools meanwhile)",
	still: "cannot check bearer tokens: the database still does not answer",
	end:   "the database answers the token checks again",
	count: "failed_requests",
}

// commitOutage is the text of the store failing the writer's commits.
var commitOutage = outageText{
	start: "cannot commit events: the database does not answer; the batches are refused until it does (the command hooks and forwarders keep their events in their spools meanwhile, an http hook's event is lost)",
	still: "cannot commit events: the database still does not answer",
	end:   "the database takes the commits again",
	count: "failed_commits",
}

// modelOutage is the text of the store failing the modeler's reads and
// writes, which it retries round after round.
var modelOutage = outageText{
	start: "cannot read or store the session model: the database does not answer; the model stays behind the events until it does, then catches up from the events stored",
	still: "cannot read or store the session model: the database still does not answer",
	end:   "the database answers the session model again",
	count: "failures",
}

// fail counts a failure, and logs it if it is the first of an outage or
// the first for outageRepeat.
func (o *outage) fail(log *slog.Logger, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	o.failed++
	switch {
	case !o.down.Load():
		o.down.Store(true)
		o.since, o.said, o.failed = now, now, 1
		log.Error(o.text.start, "err", err)
	case now.Sub(o.said) >= outageRepeat:
		o.said = now
		log.Error(o.text.still, "for", now.Sub(o.since).Round(time.Second), o.text.count, o.failed, "err", err)
	}
}

// answered ends an outage, if one was under way, saying how long it took.
func (o *outage) answered(log *slog.Logger) {
	if !o.down.Load() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.down.Swap(false) {
		log.Info(o.text.end, "after", time.Since(o.since).Round(time.Second), o.text.count, o.failed)
	}
}

// tokensRecheck is how often an open collector asks its store whether it
// keeps tokens now: the first `hookwatch token create` closes it within
// that time, whichever collector of a shared database it reached through.
const tokensRecheck = time.Second

// requireAuth reports whether requests need a token although Config.Token
// is empty: Config.RequireAuth, or tokens in the store. An open collector
// asks the store at most once per tokensRecheck, not once per request, and
// once it has seen a token it requires them for good (tokens are revoked,
// never deleted). A failed look keeps it as it was, open, and is logged.
func (s *Server) requireAuth(ctx context.Context) bool {
	if s.cfg.RequireAuth || s.authOn.Load() {
		return true
	}
	if s.tokens == nil {
		return false
	}
	now := time.Now().UnixNano()
	last := s.tokensChecked.Load()
	if now-last < int64(tokensRecheck) || !s.tokensChecked.CompareAndSwap(last, now) {
		return false
	}
	// Tokens lists every token, but is asked only while there are none.
	list, err := s.tokens.Tokens(ctx)
	if err != nil {
		s.log.Warn("cannot look for tokens", "err", err)
		return false
	}
	has := len(list) > 0
	if has && !s.authOn.Swap(true) {
		s.log.Info("the database keeps tokens now: every request needs one")
	}
	return has
}

// mayRead returns ErrForbidden when the request's principal may not read
// the stored session id, and store.ErrNotFound when a principal that reads
// only some users' sessions names one not stored: it has no owner yet to
// check, so such a token follows only the sessions it can see already.
func (s *Server) mayRead(ctx context.Context, id string) error {
	p, ok := principalOf(ctx)
	if !ok || p.Users == nil {
		return nil
	}
	sess, err := s.store.Session(ctx, id)
	if err != nil {
		return err
	}
	if !p.sees(sess.User) {
		return ErrForbidden
	}
	return nil
}

// visibleUsers is the Users filter of the request's listings: nil for
// every user.
func visibleUsers(r *http.Request) []string {
	p, _ := principalOf(r.Context())
	return p.Users
}

// adminOnly refuses (403) a request whose principal is not an admin: what
// it serves mixes every user's data.
func adminOnly(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if p, ok := principalOf(r.Context()); ok && p.Role != store.RoleAdmin {
			writeError(w, http.StatusForbidden, "only an admin token may read this")
			return
		}
		next(w, r)
	}
}

// claimSessions refuses (ErrForbidden) a batch sent with a user's token
// that writes into a session another user recorded. With commit recording
// the batch as the token's user, a laptop can neither write as someone
// else nor into their sessions. It is the check for a store that is no
// store.OwnedInserter, which checks the owners in its inserting
// transaction instead: read before the commit, two users' first batches of
// one new session can both pass it.
//
// A batch it cannot check, the store failing, fails as a failed commit
// does (a *commitError: 503 with Retry-After, and no word of the
// database's error to the client), logged once per outage with the
// commits.
func (s *Server) claimSessions(ctx context.Context, events []store.Event) error {
	p, ok := principalOf(ctx)
	if !ok || p.User == "" {
		return nil
	}
	seen := map[string]bool{}
	for i := range events {
		id := events[i].SessionID
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		sess, err := s.store.Session(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err() // the client went away: no outage
			}
			s.writer.down.fail(s.log, err)
			return &commitError{err}
		}
		if sess.User != p.User {
			return ErrForbidden
		}
	}
	return nil
}
