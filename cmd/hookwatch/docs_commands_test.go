package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsServeBeyondLoopbackOverTLS reads every 'hookwatch serve' the
// README and docs/*.md show in a shell block: serve's own flags parse it
// (the docs show what serve accepts), and one that listens beyond loopback,
// where the tokens and the events cross the network, serves TLS.
func TestDocsServeBeyondLoopbackOverTLS(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "..", "README.md"))
	seen := 0
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		inShell := false
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			switch {
			case strings.HasPrefix(line, "```"):
				inShell = !inShell && (line == "```sh" || line == "```bash")
				continue
			case !inShell:
				continue
			}
			line, _, _ = strings.Cut(line, "#")
			args, ok := strings.CutPrefix(strings.TrimSpace(line), "hookwatch serve")
			if !ok || args != "" && args[0] != ' ' {
				continue
			}
			seen++
			fs, sf := serveFlagSet(io.Discard, io.Discard)
			if err := fs.Parse(strings.Fields(args)); err != nil || fs.NArg() > 0 {
				t.Errorf("%s:%d: serve%s: %v %q, not what serve accepts", file, n, args, err, fs.Args())
				continue
			}
			host, _, err := net.SplitHostPort(*sf.addr)
			if err != nil {
				t.Errorf("%s:%d: serve --addr %s: %v", file, n, *sf.addr, err)
				continue
			}
			ip := net.ParseIP(host)
			loopback := host == "localhost" || ip != nil && ip.IsLoopback()
			if !loopback && (*sf.tlsCert == "" || *sf.tlsKey == "") {
				t.Errorf("%s:%d: serve%s listens beyond loopback over plain HTTP: the tokens would cross the network in clear text; show --tls-cert and --tls-key", file, n, args)
			}
		}
		f.Close()
	}
	if seen == 0 {
		t.Fatal("no 'hookwatch serve' in a shell block of the docs")
	}
}
