package ingest

import (
	"os"
	"os/user"
	"strconv"
	"testing"
)

// TestLocalUser: the user is $USER, else $LOGNAME, else the password
// database's name of the uid, not the number a container or a service
// without either would otherwise stamp on every event.
func TestLocalUser(t *testing.T) {
	t.Setenv("USER", "ada")
	t.Setenv("LOGNAME", "lovelace")
	if got := LocalOrigin("").User; got != "ada" {
		t.Errorf("with $USER: %q, want ada", got)
	}
	t.Setenv("USER", "")
	if got := LocalOrigin("").User; got != "lovelace" {
		t.Errorf("with $LOGNAME alone: %q, want lovelace", got)
	}
	t.Setenv("LOGNAME", "")
	want := strconv.Itoa(os.Getuid())
	if u, err := user.LookupId(want); err == nil {
		want = u.Username
	}
	got := LocalOrigin("").User
	if got != want {
		t.Errorf("with neither: %q, want %q", got, want)
	}
	if _, err := strconv.Atoi(got); err == nil {
		t.Logf("uid %s has no name in the password database here", got)
	}
}
