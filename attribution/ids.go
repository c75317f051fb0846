package attribution

import "hash/maphash"

// idIndex finds the item applied under an envelope id. A group holds every
// envelope of its sessions (100,000 and more for a long session) and looks
// each new one up, then adds it: keyed by the id's 64-bit hash, the index's
// table is two thirds of a table keyed by the id, and a miss, the usual
// case, compares no string. An id whose hash another id took first (a
// collision, which a random seed leaves to chance) is kept in more, by id.
type idIndex struct {
	seed   maphash.Seed
	byHash map[uint64]*item
	more   map[string]*item
}

// idHash hashes ids; tests make it collide.
var idHash = maphash.String

func newIDIndex() idIndex {
	return idIndex{seed: maphash.MakeSeed(), byHash: map[uint64]*item{}}
}

// get returns the item of id, or nil, and the hash of id for put.
func (x *idIndex) get(id string) (*item, uint64) {
	h := idHash(x.seed, id)
	it := x.byHash[h]
	if it == nil || it.id == id {
		return it, h
	}
	return x.more[id], h
}

// put makes it the item of its envelope's id, whose hash is h.
func (x *idIndex) put(h uint64, it *item) {
	if cur := x.byHash[h]; cur == nil || cur.id == it.id {
		x.byHash[h] = it
		return
	}
	if x.more == nil {
		x.more = map[string]*item{}
	}
	x.more[it.id] = it
}
