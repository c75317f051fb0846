package main

import (
	"context"
	"strings"
	"testing"
)

func TestRefundCap(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), &out, "policy.yaml", []string{"120", "500", "500.01", "9000"}); err != nil {
		t.Fatal(err)
	}
	want := `refunded 120
refunded 500
denied: Refunds above 500 must go through escalate_to_human.
escalated a refund of 500.01
denied: Refunds above 500 must go through escalate_to_human.
escalated a refund of 9000
`
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
