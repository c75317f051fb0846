package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/export/otlp"
	"github.com/hookwatch/hookwatch/forward"
	"github.com/hookwatch/hookwatch/internal/atomicfile"
	"github.com/hookwatch/hookwatch/store"
)

// owedFileName is the file of the home where serve kept the sessions whose
// spans it owed the OTLP receiver before the database kept them: moved to
// the database at start (moveOwedFile).
const owedFileName = "otlp-owed.json"

// otlpFlags are the flags that point OTLP traces at a receiver, shared by
// serve (live push) and export --format otlp.
type otlpFlags struct {
	endpoint string
	headers  map[string]string
	caFile   string
}

// addOTLPFlags registers --otlp-endpoint and --otlp-header on fs, with
// their defaults from HOOKWATCH_OTLP_ENDPOINT and HOOKWATCH_OTLP_HEADERS.
func addOTLPFlags(fs *flag.FlagSet) *otlpFlags {
	f := &otlpFlags{headers: map[string]string{}}
	fs.StringVar(&f.endpoint, "otlp-endpoint", os.Getenv("HOOKWATCH_OTLP_ENDPOINT"),
		"OTLP/HTTP receiver of the traces (default none: no traces), e.g. http://127.0.0.1:4318 (/v1/traces is added to a URL without a path) or https://otlp.example.com/otlp/v1/traces (used as is) (env HOOKWATCH_OTLP_ENDPOINT)")
	fs.StringVar(&f.caFile, "otlp-ca-file", os.Getenv("HOOKWATCH_OTLP_CA_FILE"),
		"PEM certificates to trust besides the system's, for an https:// receiver whose certificate a team's own authority signed (env HOOKWATCH_OTLP_CA_FILE)")
	fs.Func("otlp-header", "`key=value` header sent to the OTLP receiver, repeatable, e.g. X-Scope-OrgID=team-a (env HOOKWATCH_OTLP_HEADERS=k=v,k=v, values percent-encoded: Authorization=Bearer%20TOKEN; prefer it for secrets: flags show in ps)",
		func(s string) error {
			k, v, ok := strings.Cut(s, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return fmt.Errorf("want key=value, got %q", s)
			}
			f.headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
			return nil
		})
	return f
}

// client returns the OTLP client the flags ask for, nil when no endpoint
// is set. Headers from the environment come first; flags override them.
func (f *otlpFlags) client() (*otlp.Client, error) {
	if f.endpoint == "" {
		return nil, nil
	}
	headers, err := parseOTLPHeaders(os.Getenv("HOOKWATCH_OTLP_HEADERS"))
	if err != nil {
		return nil, fmt.Errorf("cannot read HOOKWATCH_OTLP_HEADERS: %w", err)
	}
	for k, v := range f.headers {
		headers[k] = v
	}
	c := &otlp.Client{Endpoint: f.endpoint, Headers: headers}
	if _, err := c.URL(); err != nil {
		return nil, err
	}
	if f.caFile != "" {
		// The forwarder's client: verified against the system's roots
		// and the file's, never unverified.
		hc, err := forward.NewClient(f.caFile)
		if err != nil {
			return nil, fmt.Errorf("--otlp-ca-file: %w", err)
		}
		hc.Timeout = otlp.DefaultTimeout
		c.HTTP = hc
	}
	return c, nil
}

// exporter returns the live exporter of serve and the metrics it counts
// on, nil when no endpoint is set. It checks the endpoint in the
// background and logs the outcome, so that a wrong one (a path, http for
// https, credentials) shows in the log at start, not only when the first
// spans go out, which may be long after; the receiver may still come up
// later, so a failed check stops nothing. What the receiver is not given
// is sent again from rows once it takes spans, the sessions owed kept in
// the database (store.OTLPDebtStore), where every collector on it reads
// them (docs/otlp.md); those a collector before the database kept them
// left in home's otlp-owed.json are moved there first.
func (f *otlpFlags) exporter(ctx context.Context, log *slog.Logger, rows store.ModelStore, home string) (*otlp.Exporter, *metrics.Set, error) {
	c, err := f.client()
	if c == nil || err != nil {
		return nil, nil, err
	}
	debts, _ := rows.(store.OTLPDebtStore)
	if debts != nil {
		moveOwedFile(ctx, log, debts, filepath.Join(home, owedFileName))
	}
	set := metrics.NewSet()
	exp := otlp.NewExporter(c, otlp.ExporterOptions{Metrics: set, Logger: log, Rows: rows, Debts: debts, Owner: debtOwner(log, home)})
	go func() {
		target, _ := c.URL()
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := exp.Check(ctx); err != nil {
			if ctx.Err() != nil {
				return // serve stopping, or no answer in 10 s: the sends will say
			}
			log.Warn("the OTLP endpoint does not take traces (checked at start): check --otlp-endpoint (HOOKWATCH_OTLP_ENDPOINT) and --otlp-header (HOOKWATCH_OTLP_HEADERS); spans not sent are counted in hookwatch_otlp_spans_dropped_total, and sent again once it takes spans",
				"endpoint", target, "err", err)
			return
		}
		log.Info("pushing traces over OTLP/HTTP", "endpoint", target)
	}()
	return exp, set, nil
}

// debtOwner is the name under which serve records the sessions it owes the
// OTLP receiver: the same for a collector restarted on the same home and
// machine, which sends at once what it owed when it was killed, and another
// for each collector of a team server, even two whose machines and homes
// share a name (clones of one image): the home keeps a random id of its
// own (ownerIDFile) that goes into the name. A home where it cannot be
// kept is named by the machine and the home's path alone, with log told
// why. A hash: the database keeps no path.
func debtOwner(log *slog.Logger, home string) string {
	host, _ := os.Hostname()
	id, err := homeID(home)
	if err != nil {
		log.Warn("the collector's name for what it owes the OTLP receiver is its machine's and home's alone: another collector of the same names on the database would take its debts for its own", "err", err)
	}
	sum := sha256.Sum256([]byte("otlp-owner\x00" + host + "\x00" + home + "\x00" + id))
	return hex.EncodeToString(sum[:8])
}

// ownerIDFile is the file of the home that keeps its random id (debtOwner).
const ownerIDFile = "otlp-owner-id"

// homeID returns the random id kept in home's ownerIDFile, made and kept
// there the first time.
func homeID(home string) (string, error) {
	path := filepath.Join(home, ownerIDFile)
	b, err := os.ReadFile(path)
	if id := strings.TrimSpace(string(b)); err == nil && id != "" {
		return id, nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var r [16]byte
	rand.Read(r[:])
	id := hex.EncodeToString(r[:])
	if err := atomicfile.Write(path, []byte(id+"\n"), atomicfile.Options{}); err != nil {
		return "", err
	}
	return id, nil
}

// moveOwedFile records in debts the sessions that a collector before the
// database kept them owed in the file at path, then removes the file: once,
// so that nothing owed is lost by the upgrade. A file that cannot be read
// or recorded stays, for the next start (a warning says so); one that does
// not decode is set aside as path.bad, since no start would read it.
func moveOwedFile(ctx context.Context, log *slog.Logger, debts store.OTLPDebtStore, path string) {
	owed, err := otlp.ReadOwedFile(path)
	if err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || errors.As(err, new(*json.UnmarshalTypeError)) {
			err = errors.Join(err, os.Rename(path, path+".bad"))
		}
		log.Warn("the sessions owed to the OTLP receiver before the upgrade are not sent again: hookwatch export --format otlp --since sends them", "err", err)
		return
	}
	if owed == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			log.Warn("cannot remove the file of sessions owed to the OTLP receiver, now kept in the database", "file", path, "err", err)
		}
		return
	}
	// The file's owner: the exporter pays them as another collector's.
	if err := debts.OweOTLP(ctx, owedFileName, owed, time.Now()); err != nil {
		log.Warn("the sessions owed to the OTLP receiver in the home are not moved to the database yet: moved at the next start", "file", path, "err", err)
		return
	}
	if err := os.Remove(path); err != nil {
		log.Warn("cannot remove the file of sessions owed to the OTLP receiver, now kept in the database", "file", path, "err", err)
		return
	}
	log.Info("the sessions owed to the OTLP receiver are now kept in the database", "sessions", len(owed), "moved_from", path)
}

// parseOTLPHeaders reads headers in the form of OTEL_EXPORTER_OTLP_HEADERS:
// key=value pairs separated by commas, values percent-encoded (%20, %2C).
// A '+' stays a '+', as in the OpenTelemetry SDKs: a token in base64 has
// them, and a form's decoding would make each a space.
func parseOTLPHeaders(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("want key=value, got %q", kv)
		}
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", k, err)
		}
		out[strings.TrimSpace(k)] = val
	}
	return out, nil
}
