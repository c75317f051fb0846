package postgres

import "testing"

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
