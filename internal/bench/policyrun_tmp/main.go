package main

import (
	"context"
	"os"

	"github.com/hookwatch/hookwatch/internal/bench"
)

func main() {
	if err := bench.Policy(context.Background(), os.Stdout, bench.PolicyOptions{Repo: ".", Runs: 200, Rounds: 3}); err != nil {
		panic(err)
	}
}
