package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/store/postgres"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// BenchmarkInsertWay compares, on the real corpus, the two ways to insert a
// batch of events (the events alone, without the session summaries): one
// INSERT … SELECT FROM unnest(arrays), which Insert uses, and COPY into a
// staging table then INSERT … SELECT, since COPY alone cannot skip ids
// already stored.
func BenchmarkInsertWay(b *testing.B) {
	corpus := storetest.Corpus(b)
	for _, batch := range []int{100, 1000} {
		for _, way := range []string{"unnest", "copy"} {
			b.Run(fmt.Sprintf("batch=%d/%s", batch, way), func(b *testing.B) {
				db := postgres.MustOpenDB(b, pgtest.NewDatabase(b))
				ctx := context.Background()
				insert := db.InsertUnnestForTest
				if way == "copy" {
					insert = db.InsertCopyForTest
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					cols := make([][][]byte, 11)
					times := make([]int64, batch)
					for j := range batch {
						p := corpus[(i*batch+j)%len(corpus)]
						e := storetest.MustEvent(b, storetest.Envelope(p.Runtime, storetest.At(j), p.JSON))
						var agentType []byte
						if e.AgentType != nil {
							agentType = []byte(*e.AgentType)
						}
						for k, v := range [][]byte{[]byte(event.NewID(e.Time)), []byte(e.SessionID), []byte(e.Runtime), []byte(e.Kind),
							[]byte(e.Event), []byte(e.AgentID), agentType, []byte(e.ToolName), []byte(e.ToolUseID), []byte(e.PromptID), e.Envelope} {
							cols[k] = append(cols[k], v)
						}
						times[j] = e.Time.UnixNano()
					}
					b.StartTimer()
					if n, err := insert(ctx, cols, times); err != nil || n != batch {
						b.Fatalf("inserted %d of %d: %v", n, batch, err)
					}
				}
				b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}
