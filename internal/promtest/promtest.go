// Package promtest runs a real Prometheus (Debian's prometheus package) for
// tests: one process per test binary, on a loopback port, with a fresh
// data directory, scraping every second the targets tests add through
// file-based service discovery, and answering PromQL.
//
// Without the binary a test is skipped with how to install it, or failed
// when $CI is set: in CI the tests must run.
package promtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/freeport"
)

// Bin is the binary Get runs, found on $PATH.
const Bin = "prometheus"

// Server is a running Prometheus.
type Server struct {
	// URL is its base URL, http://127.0.0.1:port.
	URL     string
	dir     string
	cmd     *exec.Cmd
	exited  chan error
	targets int
}

var (
	shared     *Server
	sharedErr  error
	sharedOnce sync.Once
	mu         sync.Mutex // guards targets files
)

// Stop ends the Prometheus the test binary's tests shared, if any: call it
// from TestMain after m.Run.
func Stop() {
	if shared != nil {
		shared.stop()
	}
}

// Get returns the test binary's Prometheus, starting it on first use. It
// skips tb (fails it when $CI is set) when the binary is not installed.
func Get(tb testing.TB) *Server {
	tb.Helper()
	if _, err := exec.LookPath(Bin); err != nil {
		why := "no prometheus on $PATH (apt-get install -y --no-install-recommends prometheus)"
		if os.Getenv("CI") != "" {
			tb.Fatalf("promtest: %s; in CI the Prometheus tests must run", why)
		}
		tb.Skipf("promtest: %s", why)
	}
	sharedOnce.Do(func() { shared, sharedErr = start() })
	if sharedErr != nil {
		tb.Fatal(sharedErr)
	}
	return shared
}

const config = `global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: hookwatch
    file_sd_configs:
      - files: [%q]
        refresh_interval: 1s
`

func start() (*Server, error) {
	dir, err := os.MkdirTemp("", "promtest-")
	if err != nil {
		return nil, fmt.Errorf("cannot make the Prometheus directory: %w", err)
	}
	s := &Server{dir: dir, exited: make(chan error, 1)}
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, config, filepath.Join(dir, "targets", "*.json")), 0o600); err != nil {
		return nil, fmt.Errorf("cannot write the Prometheus config: %w", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "targets"), 0o700); err != nil {
		return nil, fmt.Errorf("cannot make the targets directory: %w", err)
	}
	port, err := freeport.Port()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		return nil, fmt.Errorf("cannot create the Prometheus log: %w", err)
	}
	defer log.Close()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s.URL = "http://" + addr
	s.cmd = exec.Command(Bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start prometheus: %w", err)
	}
	go func() { s.exited <- s.cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get(s.URL + "/-/ready")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case err := <-s.exited:
			out, _ := os.ReadFile(log.Name())
			return nil, fmt.Errorf("prometheus exited: %v\n%s", err, out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, errors.New("prometheus was not ready after 20 s")
		}
	}
}

// stop ends Prometheus (SIGTERM, then SIGKILL after 5 s) and removes its
// directory.
func (s *Server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	os.RemoveAll(s.dir)
}

// Scrape adds addr (host:port serving /metrics) as a target and waits
// until Prometheus scraped it successfully. Its series carry
// instance=addr. The target is removed when tb ends.
func (s *Server) Scrape(tb testing.TB, addr string) {
	tb.Helper()
	mu.Lock()
	s.targets++
	path := filepath.Join(s.dir, "targets", fmt.Sprintf("t%d.json", s.targets))
	mu.Unlock()
	b, _ := json.Marshal([]map[string]any{{"targets": []string{addr}}})
	if err := os.WriteFile(path+".tmp", b, 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil { // whole, for the watcher
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.Remove(path) })
	deadline := time.Now().Add(30 * time.Second)
	for {
		var res struct {
			Data struct {
				ActiveTargets []struct {
					ScrapeURL string `json:"scrapeUrl"`
					Health    string `json:"health"`
					LastError string `json:"lastError"`
				} `json:"activeTargets"`
			} `json:"data"`
		}
		if err := s.get("/api/v1/targets?state=active", &res); err != nil {
			tb.Fatal(err)
		}
		last := ""
		for _, t := range res.Data.ActiveTargets {
			if strings.Contains(t.ScrapeURL, "//"+addr+"/") {
				if t.Health == "up" {
					return
				}
				last = t.Health + " " + t.LastError
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("prometheus did not scrape %s within 30 s (%s)", addr, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Sample is one element of an instant vector.
type Sample struct {
	Metric map[string]string
	Value  float64
}

// Query evaluates expr at the current time. A result that is not a vector
// is returned as one sample without labels (a scalar).
func (s *Server) Query(expr string) ([]Sample, error) {
	var res struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := s.get("/api/v1/query?query="+url.QueryEscape(expr), &res); err != nil {
		return nil, err
	}
	if res.Status != "success" {
		return nil, fmt.Errorf("query %s: %s: %s", expr, res.ErrorType, res.Error)
	}
	type pair [2]any
	parse := func(p pair) (float64, error) {
		v, _ := p[1].(string)
		return strconv.ParseFloat(v, 64)
	}
	switch res.Data.ResultType {
	case "vector":
		var vec []struct {
			Metric map[string]string `json:"metric"`
			Value  pair              `json:"value"`
		}
		if err := json.Unmarshal(res.Data.Result, &vec); err != nil {
			return nil, fmt.Errorf("query %s: %w", expr, err)
		}
		out := make([]Sample, 0, len(vec))
		for _, e := range vec {
			v, err := parse(e.Value)
			if err != nil {
				return nil, fmt.Errorf("query %s: %w", expr, err)
			}
			out = append(out, Sample{Metric: e.Metric, Value: v})
		}
		return out, nil
	case "scalar":
		var p pair
		if err := json.Unmarshal(res.Data.Result, &p); err != nil {
			return nil, fmt.Errorf("query %s: %w", expr, err)
		}
		v, err := parse(p)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", expr, err)
		}
		return []Sample{{Value: v}}, nil
	}
	return nil, fmt.Errorf("query %s: result type %q", expr, res.Data.ResultType)
}

// WaitValue polls expr, a query of one sample, until it has the value
// want (the scrape after the change may be a second away), and fails tb
// after 20 s.
func (s *Server) WaitValue(tb testing.TB, expr string, want float64) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := s.Query(expr)
		if err != nil {
			tb.Fatal(err)
		}
		if len(res) == 1 && res[0].Value == want {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s = %v after 20 s, want %v", expr, res, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Metadata is what Prometheus keeps of a family from the # HELP and # TYPE
// lines of the targets it scraped (/api/v1/metadata).
type Metadata struct {
	Type string `json:"type"`
	Help string `json:"help"`
}

// Metadata returns what Prometheus keeps of the family name, one entry per
// distinct # HELP and # TYPE its targets gave; none before a scrape that
// carried them.
func (s *Server) Metadata(name string) ([]Metadata, error) {
	var res struct {
		Status string                `json:"status"`
		Error  string                `json:"error"`
		Data   map[string][]Metadata `json:"data"`
	}
	if err := s.get("/api/v1/metadata?metric="+url.QueryEscape(name), &res); err != nil {
		return nil, err
	}
	if res.Status != "success" {
		return nil, fmt.Errorf("metadata of %s: %s", name, res.Error)
	}
	return res.Data[name], nil
}

func (s *Server) get(path string, v any) error {
	res, err := http.Get(s.URL + path)
	if err != nil {
		return fmt.Errorf("cannot ask prometheus: %w", err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		return fmt.Errorf("cannot read prometheus' answer to %s (%s): %w", path, res.Status, err)
	}
	return nil
}
