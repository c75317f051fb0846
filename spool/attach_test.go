package spool_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/spool"
)

func TestAttach(t *testing.T) {
	dir := t.TempDir()
	sp, err := spool.Open(dir, spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if spool.AttachedTo(dir, "127.0.0.1:7421") {
		t.Fatal("attached before anyone attached")
	}
	release, err := sp.Attach("127.0.0.1:7421")
	if err != nil {
		t.Fatal(err)
	}
	if !spool.AttachedTo(dir, "127.0.0.1:7421") {
		t.Error("not attached after Attach")
	}
	if c, ok := spool.Consumer(dir); !ok || c != (spool.ConsumerInfo{Addr: "127.0.0.1:7421", PID: os.Getpid()}) {
		t.Errorf("Consumer = %+v, %v; want this process at 127.0.0.1:7421", c, ok)
	}
	if spool.AttachedTo(dir, "127.0.0.1:9999") {
		t.Error("attached to another address")
	}
	if _, err := sp.Attach("127.0.0.1:7422"); !errors.Is(err, spool.ErrAttached) {
		t.Errorf("second Attach = %v, want ErrAttached", err)
	}
	release()
	if spool.AttachedTo(dir, "127.0.0.1:7421") {
		t.Error("still attached after release")
	}
	if c, ok := spool.Consumer(dir); ok {
		t.Errorf("Consumer after release = %+v", c)
	}
}

func TestNotify(t *testing.T) {
	sp, err := spool.Open(t.TempDir(), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := sp.Notify(ctx)
	if n == nil {
		t.Skip("no notification on this platform")
	}
	// The first Append creates the active segment, the second appends to
	// it: each is noticed once armed, whether it came before Arm or after.
	for i, id := range []string{"1", "2", "3", "4"} {
		if i%2 == 0 {
			n.Arm()
		}
		if err := sp.Append([]byte(`{"id":"` + id + `"}`)); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			n.Arm()
		}
		select {
		case <-n.C:
		case <-time.After(5 * time.Second):
			t.Fatalf("no notification after append %s", id)
		}
	}
	// Not armed: an append is not told, but it is kept until Arm.
	if err := sp.Append([]byte(`{"id":"5"}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-n.C:
		t.Fatal("notified without Arm")
	case <-time.After(100 * time.Millisecond):
	}
	// Discarded: the appends until then are not told at the next Arm.
	n.Discard()
	n.Arm()
	select {
	case <-n.C:
		t.Fatal("notified of a discarded append")
	case <-time.After(100 * time.Millisecond):
	}
	if err := sp.Append([]byte(`{"id":"6"}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-n.C:
	case <-time.After(5 * time.Second):
		t.Fatal("no notification after an append once armed again")
	}
}
