package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
)

// TokenStore is what RunTokenStore tests: a store that keeps access tokens,
// whose listings filter by user.
type TokenStore interface {
	store.Store
	store.TokenStore
}

// RunTokenStore runs the conformance suite of store.TokenStore and of the
// Users filters of the listings. open must return a new, empty store and
// arrange for it to be closed when the test ends.
func RunTokenStore(t *testing.T, open func(t *testing.T) TokenStore) {
	t.Run("TokenRoundTrip", func(t *testing.T) { testTokenRoundTrip(t, open(t)) })
	t.Run("TokenRevoke", func(t *testing.T) { testTokenRevoke(t, open(t)) })
	t.Run("TeamUsers", func(t *testing.T) { testTeamUsers(t, open(t)) })
	t.Run("UsersFilters", func(t *testing.T) { testUsersFilters(t, open(t)) })
}

func token(id, user, team, role string, ms int) store.Token {
	return store.Token{ID: id, User: user, Team: team, Role: role, Hash: fmt.Sprintf("%064x", ms+1000*len(id)), CreatedAt: At(ms)}
}

func createToken(tb testing.TB, s TokenStore, t store.Token) {
	tb.Helper()
	if err := s.CreateToken(ctx, t); err != nil {
		tb.Fatalf("CreateToken(%s): %v", t.ID, err)
	}
}

func testTokenRoundTrip(t *testing.T, s TokenStore) {
	if got, err := s.Tokens(ctx); err != nil || len(got) != 0 {
		t.Fatalf("Tokens of an empty store = %v, %v", got, err)
	}
	// Hostile strings are kept as given.
	a := token("tok-b", "ü\x00<user>", "team\xff", store.RoleTeam, 2)
	b := token("tok-a", "bob", "", store.RoleUser, 1)
	createToken(t, s, a)
	createToken(t, s, b)
	got, err := s.TokenByHash(ctx, a.Hash)
	if err != nil || got != a {
		t.Fatalf("TokenByHash = %+v, %v; want %+v", got, err, a)
	}
	if _, err := s.TokenByHash(ctx, fmt.Sprintf("%064x", 0)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("TokenByHash of an unknown hash: %v, want ErrNotFound", err)
	}
	list, err := s.Tokens(ctx)
	if err != nil || !slices.Equal(list, []store.Token{b, a}) {
		t.Fatalf("Tokens = %+v, %v; want by creation", list, err)
	}
	// Neither an id nor a hash may be stored twice.
	dupID := token("tok-a", "mallory", "", store.RoleAdmin, 9)
	if err := s.CreateToken(ctx, dupID); !errors.Is(err, store.ErrExists) {
		t.Errorf("CreateToken with a stored id: %v, want ErrExists", err)
	}
	dupHash := token("tok-c", "mallory", "", store.RoleAdmin, 9)
	dupHash.Hash = a.Hash
	if err := s.CreateToken(ctx, dupHash); !errors.Is(err, store.ErrExists) {
		t.Errorf("CreateToken with a stored hash: %v, want ErrExists", err)
	}
	if got, err := s.TokenByHash(ctx, a.Hash); err != nil || got.User != a.User {
		t.Errorf("a refused duplicate changed the token: %+v, %v", got, err)
	}
}

func testTokenRevoke(t *testing.T, s TokenStore) {
	a := token("a", "ann", "", store.RoleUser, 1)
	createToken(t, s, a)
	at := At(50)
	if err := s.RevokeToken(ctx, "a", at); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TokenByHash(ctx, a.Hash); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("TokenByHash of a revoked token: %v, want ErrNotFound", err)
	}
	// Revoking again keeps the first time.
	if err := s.RevokeToken(ctx, "a", At(90)); err != nil {
		t.Errorf("revoking twice: %v", err)
	}
	list, err := s.Tokens(ctx)
	if err != nil || len(list) != 1 || !list[0].RevokedAt.Equal(at) {
		t.Errorf("Tokens after revoke = %+v, %v; want revoked at %v", list, err, at)
	}
	if err := s.RevokeToken(ctx, "nope", at); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RevokeToken of an unknown id: %v, want ErrNotFound", err)
	}
	// A revoked token's secret stays used up.
	again := token("b", "ann", "", store.RoleUser, 2)
	again.Hash = a.Hash
	if err := s.CreateToken(ctx, again); !errors.Is(err, store.ErrExists) {
		t.Errorf("CreateToken with a revoked token's hash: %v, want ErrExists", err)
	}
}

func testTeamUsers(t *testing.T, s TokenStore) {
	createToken(t, s, token("1", "zoe", "red", store.RoleUser, 1))
	createToken(t, s, token("2", "amy", "red", store.RoleTeam, 2))
	createToken(t, s, token("3", "zoe", "red", store.RoleUser, 3))
	createToken(t, s, token("4", "bob", "blue", store.RoleUser, 4))
	createToken(t, s, token("5", "old", "red", store.RoleUser, 5))
	if err := s.RevokeToken(ctx, "5", At(6)); err != nil {
		t.Fatal(err)
	}
	f := func(team string, want ...string) {
		t.Helper()
		got, err := s.TeamUsers(ctx, team)
		if err != nil || got == nil || !slices.Equal(got, want) {
			t.Errorf("TeamUsers(%q) = %#v, %v; want %v", team, got, err, want)
		}
	}
	f("red", "amy", "old", "zoe")
	f("blue", "bob")
	f("green")
}

// testUsersFilters pins down the Users filters of the listings a token of
// one user or team reads: sessions, events and changed session models.
func testUsersFilters(t *testing.T, s TokenStore) {
	var events []store.Event
	for i, u := range []string{"ann", "bob", "ann", "cat"} {
		env := Envelope(event.RuntimeClaudeCode, At(i), P("session_id", fmt.Sprintf("s%d", i), "hook_event_name", "Notification"))
		env.User = u
		events = append(events, MustEvent(t, env))
	}
	insert(t, s, events)
	var b store.ModelBatch
	for i := range 4 {
		b.Sessions = append(b.Sessions, store.SessionModel{SessionID: fmt.Sprintf("s%d", i), GroupKey: "k", Seq: int64(i + 1), UpdatedSeq: int64(i + 1)})
	}
	putModel(t, s, b)
	f := func(users []string, want ...string) {
		t.Helper()
		sp, err := s.Sessions(ctx, store.SessionFilter{Users: users, Limit: 1})
		var sessions []string
		for err == nil {
			for _, x := range sp.Sessions {
				sessions = append(sessions, x.ID)
			}
			if sp.Next == "" {
				break
			}
			sp, err = s.Sessions(ctx, store.SessionFilter{Users: users, Limit: 1, Cursor: sp.Next})
		}
		if err != nil {
			t.Fatalf("Sessions(Users %q): %v", users, err)
		}
		slices.Sort(sessions)
		var evs []string
		for _, e := range all(t, s, store.EventFilter{Users: users, Limit: 1}) {
			evs = append(evs, e.SessionID)
		}
		mp, err := s.ChangedSessionModels(ctx, store.SessionModelFilter{Users: users})
		if err != nil {
			t.Fatalf("ChangedSessionModels(Users %q): %v", users, err)
		}
		var models []string
		for _, m := range mp.Sessions {
			models = append(models, m.SessionID)
		}
		for what, got := range map[string][]string{"Sessions": sessions, "Events": evs, "ChangedSessionModels": models} {
			if !slices.Equal(got, want) {
				t.Errorf("%s(Users %q) = %v, want %v", what, users, got, want)
			}
		}
	}
	f(nil, "s0", "s1", "s2", "s3")
	f([]string{"ann"}, "s0", "s2")
	f([]string{"cat", "bob"}, "s1", "s3")
	f([]string{"nobody"})
	f([]string{})
	if _, err := s.Sessions(ctx, store.SessionFilter{Users: make([]string, store.MaxFilterIDs+1)}); err == nil {
		t.Errorf("Sessions with %d users: no error", store.MaxFilterIDs+1)
	}
}
