// Command depaware keeps cmd/hookwatch-hook/depaware.txt, the checked-in list
// of every package the hook binary links, true. The hook starts once per
// agent event and Go runs the init of every linked package, so a new
// dependency there is a latency regression that must show up in review.
//
//	go run ./internal/depaware          # rewrite the list
//	go run ./internal/depaware -check   # fail if the list is stale
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

const (
	target   = "./cmd/hookwatch-hook"
	listFile = "cmd/hookwatch-hook/depaware.txt"
)

func main() {
	check := flag.Bool("check", false, "fail when "+listFile+" differs from the packages the hook links")
	flag.Parse()
	if err := run(*check); err != nil {
		fmt.Fprintf(os.Stderr, "depaware: %v\n", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{else}}std:{{.ImportPath}}{{end}}", target)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("cannot list the hook's packages: %w", err)
	}
	var b bytes.Buffer
	b.WriteString("# Packages linked into " + target + " (linux/amd64, CGO_ENABLED=0).\n")
	b.WriteString("# Regenerate with: go run ./internal/depaware\n")
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(line, "std:internal/") || strings.HasPrefix(line, "std:vendor/") {
			continue // the standard library's internals follow from the rest
		}
		b.WriteString(strings.TrimPrefix(line, "std:") + "\n")
	}
	if !check {
		return os.WriteFile(listFile, b.Bytes(), 0o644)
	}
	old, err := os.ReadFile(listFile)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", listFile, err)
	}
	if !bytes.Equal(old, b.Bytes()) {
		return fmt.Errorf("%s is stale: the hook's dependencies changed; review them, then run go run ./internal/depaware\n--- new list:\n%s", listFile, b.Bytes())
	}
	return nil
}
