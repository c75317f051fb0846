package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/postgres"
	"github.com/hookwatch/hookwatch/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return postgres.MustOpenDB(t, pgtest.NewDatabase(t)) })
}

func TestRetention(t *testing.T) {
	storetest.RunRetention(t, func(t *testing.T) storetest.RetentionStore { return postgres.MustOpenDB(t, pgtest.NewDatabase(t)) })
}

func TestReopenKeepsData(t *testing.T) {
	url := pgtest.NewDatabase(t)
	db := postgres.MustOpenDB(t, url)
	events := storetest.CorpusEvents(t)
	if _, err := db.Insert(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = postgres.MustOpenDB(t, url)
	seq, err := db.LastSeq(context.Background())
	if err != nil || seq != events[len(events)-1].Seq {
		t.Fatalf("LastSeq after reopen = %d, %v", seq, err)
	}
	// A replay after a restart, or through another collector, is still
	// recognised.
	if n, err := db.Insert(context.Background(), events); err != nil || n != 0 {
		t.Fatalf("replay after reopen stored %d, %v", n, err)
	}
	if v, err := db.SchemaVersion(context.Background()); err != nil || v < 1 {
		t.Fatalf("SchemaVersion = %d, %v", v, err)
	}
}

func TestTokenStore(t *testing.T) {
	storetest.RunTokenStore(t, func(t *testing.T) storetest.TokenStore { return postgres.MustOpenDB(t, pgtest.NewDatabase(t)) })
}
