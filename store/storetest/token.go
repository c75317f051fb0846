package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
)

// TokenStore is what RunTokenStore tests: a store that keeps access tokens,
// whose listings filter by user.
type TokenStore interface {
	store.Store
	store.TokenStore
	store.OwnedInserter
}

// RunTokenStore runs the conformance suite of store.TokenStore and of the
// Users filters of the listings. open must return a new, empty store and
// arrange for it to be closed when the test ends.
func RunTokenStore(t *testing.T, open func(t *testing.T) TokenStore) {
	t.Run("TokenRoundTrip", func(t *testing.T) { testTokenRoundTrip(t, open(t)) })
	t.Run("TokenRevoke", func(t *testing.T) { testTokenRevoke(t, open(t)) })
	t.Run("TeamUsers", func(t *testing.T) { testTeamUsers(t, open(t)) })
	t.Run("UsersFilters", func(t *testing.T) { testUsersFilters(t, open(t)) })
	t.Run("OwnedInsert", func(t *testing.T) { testOwnedInsert(t, open(t)) })
	t.Run("OwnedInsertRace", func(t *testing.T) { testOwnedInsertRace(t, open(t)) })
}

// userEvent is a Notification of session sid sent by user at At(ms).
func userEvent(tb testing.TB, user, sid string, ms int) store.Event {
	env := Envelope(event.RuntimeClaudeCode, At(ms), P("session_id", sid, "hook_event_name", "Notification"))
	env.User = user
	return MustEvent(tb, env)
}

// testOwnedInsert: a user's batch goes into that user's sessions and new
// ones; one that touches another user's session is refused whole.
func testOwnedInsert(t *testing.T, s TokenStore) {
	if n, err := s.InsertOwned(ctx, "ann", []store.Event{userEvent(t, "ann", "s-ann", 1)}); n != 1 || err != nil {
		t.Fatalf("InsertOwned(ann, new session) = %d, %v", n, err)
	}
	// An event without a user's token (Insert) keeps its envelope's user.
	insert(t, s, []store.Event{userEvent(t, "cat", "s-cat", 2)})
	bob := []store.Event{userEvent(t, "bob", "s-bob", 3), userEvent(t, "bob", "s-ann", 4)}
	for i := range bob {
		bob[i].Seq = 99 // a caller's leftover: a refused batch stored nothing
	}
	if n, err := s.InsertOwned(ctx, "bob", bob); !errors.Is(err, store.ErrNotOwner) || n != 0 {
		t.Fatalf("InsertOwned(bob, into ann's session) = %d, %v; want ErrNotOwner", n, err)
	}
	for i, e := range bob {
		if e.Seq != 0 {
			t.Fatalf("the refused batch left bob[%d].Seq = %d, want 0", i, e.Seq)
		}
	}
	if _, err := s.Session(ctx, "s-bob"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused batch started session s-bob: %v", err)
	}
	if n, err := s.InsertOwned(ctx, "bob", []store.Event{userEvent(t, "bob", "s-cat", 5)}); !errors.Is(err, store.ErrNotOwner) || n != 0 {
		t.Fatalf("InsertOwned(bob, into the session cat's envelopes started) = %d, %v; want ErrNotOwner", n, err)
	}
	if n, err := s.InsertOwned(ctx, "ann", []store.Event{userEvent(t, "ann", "s-ann", 6), userEvent(t, "ann", "s-ann2", 7)}); n != 2 || err != nil {
		t.Fatalf("InsertOwned(ann, her session and a new one) = %d, %v", n, err)
	}
	if got := session(t, s, "s-ann"); got.EventCount != 2 || got.User != "ann" {
		t.Fatalf("s-ann = %+v, want ann's 2 events", got)
	}
}

// testOwnedInsertRace: two users' goroutines insert at once into one new
// session: one user's batches all succeed, the other's are all refused and
// nothing of theirs is stored.
func testOwnedInsertRace(t *testing.T, s TokenStore) {
	const perUser = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	stored := map[string]int{}
	refused := map[string]int{}
	start := make(chan struct{})
	for i := range 2 * perUser {
		user := []string{"ann", "bob"}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := userEvent(t, user, "s-race", i)
			<-start
			_, err := s.InsertOwned(ctx, user, []store.Event{e})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				stored[user]++
			case errors.Is(err, store.ErrNotOwner):
				refused[user]++
			default:
				t.Errorf("InsertOwned(%s): %v", user, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	got := session(t, s, "s-race")
	winner, loser := got.User, "bob"
	if winner == "bob" {
		loser = "ann"
	}
	if stored[winner] != perUser || refused[winner] != 0 || stored[loser] != 0 || refused[loser] != perUser || got.EventCount != perUser {
		t.Fatalf("session %+v; stored %v, refused %v: want one user's %d events stored and the other's all refused", got, stored, refused, perUser)
	}
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
	// Not found, and revoked: the token comes back, for its refusal to
	// say when.
	if got, err := s.TokenByHash(ctx, a.Hash); !errors.Is(err, store.ErrNotFound) || !errors.Is(err, store.ErrRevoked) ||
		got.ID != a.ID || !got.RevokedAt.Equal(at) {
		t.Errorf("TokenByHash of a revoked token: %+v, %v; want it revoked at %v, and ErrNotFound and ErrRevoked", got, err, at)
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
