package attribution

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"testing"

	"github.com/hookwatch/hookwatch/event"
)

// TestGroupIDCollisions is TestGroupEqualsBuild's property with ids whose
// hashes collide all the time (idIndex keeps the later ones by id): the
// captures, shuffled and repeated, in batches; and the group holds each id
// once.
func TestGroupIDCollisions(t *testing.T) {
	defer func(h func(maphash.Seed, string) uint64) { idHash = h }(idHash)
	idHash = func(seed maphash.Seed, id string) uint64 { return maphash.String(seed, id) % 3 }
	var all []event.Envelope
	for _, envs := range corpora(t) {
		all = append(all, envs...)
	}
	for i := range all {
		all[i].ID = envID(i % (len(all) - 40)) // some ids twice, with other content
	}
	rng := rand.New(rand.NewPCG(5, 6))
	check := func(name string, parts [][]event.Envelope) {
		if g := checkGroup(t, name, all, parts); g.Len() != len(all)-40 {
			t.Fatalf("%s: the group holds %d envelopes, %d ids", name, g.Len(), len(all)-40)
		}
	}
	check("in order", batches(rng, all, 1))
	for i := range 5 {
		sh := shuffled(rng, all)
		check(fmt.Sprintf("shuffled %d", i), batches(rng, sh, 1+rng.IntN(len(sh))))
	}
}
