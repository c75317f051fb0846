package otlp

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Client defaults.
const (
	DefaultAttempts = 5
	DefaultBackoff  = 500 * time.Millisecond
	maxBackoff      = 30 * time.Second
	// DefaultTimeout bounds one request of a Client whose HTTP is nil.
	DefaultTimeout    = 10 * time.Second
	maxResponseBytes  = 64 << 10
	tracesPath        = "/v1/traces"
	protobufMediaType = "application/x-protobuf"
	userAgent         = "hookwatch-otlp"
)

// Client posts spans to an OTLP/HTTP traces endpoint in protobuf. It is
// safe for concurrent use once configured.
type Client struct {
	// Endpoint is the receiver's URL: with no path, /v1/traces is added
	// (as for OTEL_EXPORTER_OTLP_ENDPOINT); with one, it is used as is
	// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
	Endpoint string
	// Headers are added to every request (authentication, tenant).
	Headers map[string]string
	// HTTP is the client used; nil means one with a 10 s timeout.
	HTTP *http.Client
	// Attempts bounds the tries of one Send (default DefaultAttempts);
	// Backoff is the wait before the second, doubled for each further one
	// up to 30 s, or what the receiver's Retry-After asks (default
	// DefaultBackoff).
	Attempts int
	Backoff  time.Duration
	// FailFast makes a refused connection final, not retried, until a
	// request of this Client has reached the receiver: a one-off export
	// pointed at a port where nothing listens fails at once (the error
	// is a syscall.ECONNREFUSED) rather than after every backoff, while
	// one whose receiver restarts midway still waits for it. serve's
	// live exporter leaves it off: a receiver started after the collector
	// is waited for.
	FailFast bool

	reached atomic.Bool // a request got an answer (FailFast)
}

// PartialError is a receiver's answer that it accepted the request but
// rejected some of its spans (OTLP partial success); retrying does not help.
type PartialError struct {
	Rejected int64
	Message  string
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("the receiver rejected %d spans: %s", e.Rejected, e.Message)
}

// StatusError is a receiver's refusal of a request.
type StatusError struct {
	URL  string // where the request went
	Code int
	Body string
}

// Error names the URL and, for the refusals a wrong setting causes (a
// path the receiver does not serve, credentials refused), what to check.
func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s answered %d: %s", cmp.Or(e.URL, "the receiver"), e.Code, e.Body)
	switch e.Code {
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		msg += " (an OTLP/HTTP receiver takes traces at " + tracesPath + ": check the endpoint's path)"
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += " (the receiver refused the credentials: check the headers sent)"
	}
	return msg
}

// retryable reports whether OTLP/HTTP says a request refused with code may
// be sent again.
func retryable(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusBadGateway ||
		code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout
}

// URL returns the URL requests go to. An endpoint that is not an http(s)
// URL is an error that says the form wanted, and the URL likely meant
// when it is a bare host[:port] (what an OTLP/gRPC exporter takes).
func (c *Client) URL() (string, error) {
	const want = "want http(s)://host[:port][/path]"
	if !strings.Contains(c.Endpoint, "://") {
		if meant := schemeFor(c.Endpoint); meant != "" {
			return "", fmt.Errorf("cannot use the OTLP endpoint %q: %s (did you mean %s?)", c.Endpoint, want, meant)
		}
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil {
		return "", fmt.Errorf("cannot use the OTLP endpoint %q: %s (%w)", c.Endpoint, want, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("cannot use the OTLP endpoint %q: %s", c.Endpoint, want)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = tracesPath
	}
	return u.String(), nil
}

// schemeFor returns the URL a bare host[:port][/path] likely stands for:
// http:// for a loopback host or one with a port (a collector in the
// same network, 4318), https:// for a host alone (a hosted backend); ""
// when endpoint is no such thing.
func schemeFor(endpoint string) string {
	hostport, _, _ := strings.Cut(endpoint, "/")
	u, err := url.Parse("http://" + endpoint)
	if hostport == "" || err != nil || u.Host != hostport || u.User != nil {
		return ""
	}
	host := u.Hostname()
	if u.Port() != "" || host == "localhost" || net.ParseIP(host).IsLoopback() {
		return u.String()
	}
	return "https://" + endpoint
}

// Send posts the spans in one request, trying again with backoff on a
// network error or an answer OTLP calls retryable (429, 502, 503, 504)
// until Attempts are spent or ctx ends. A partial success is a
// *PartialError, another refusal a *StatusError.
func (c *Client) Send(ctx context.Context, rs []*tracepb.ResourceSpans) error {
	target, err := c.URL()
	if err != nil {
		return err
	}
	// TracesData and ExportTraceServiceRequest are the same message on the
	// wire (field 1, repeated ResourceSpans); the first needs no gRPC
	// service package.
	body, err := proto.Marshal(&tracepb.TracesData{ResourceSpans: rs})
	if err != nil {
		return fmt.Errorf("cannot encode the spans: %w", err)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	attempts := c.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	wait := c.Backoff
	if wait <= 0 {
		wait = DefaultBackoff
	}
	for try := 1; ; try++ {
		again, after, err := c.post(ctx, hc, target, body)
		if err == nil || !again || try >= attempts {
			return err
		}
		if c.FailFast && !c.reached.Load() && errors.Is(err, syscall.ECONNREFUSED) {
			return err
		}
		if after <= 0 {
			after = wait
			wait = min(2*wait, maxBackoff)
		}
		t := time.NewTimer(min(after, maxBackoff))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (then: %w)", err, ctx.Err())
		case <-t.C:
		}
	}
}

// Check sends one request of no spans, not retried, and returns nil when
// the URL takes OTLP/HTTP (a receiver accepts an empty request: the
// OpenTelemetry Collector and Jaeger answer 200), else an error that says
// what is wrong: nothing listening, a path the receiver does not serve,
// credentials refused, TLS against a plain port, no OTLP receiver at all.
// It lets a wrong endpoint be told at start rather than at the first
// batch of spans, which may come long after.
func (c *Client) Check(ctx context.Context) error {
	target, err := c.URL()
	if err != nil {
		return err
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	_, _, err = c.post(ctx, hc, target, nil)
	var se *StatusError
	if u, _ := url.Parse(target); err != nil && !errors.As(err, &se) && u.Port() == "4317" {
		// The default port of OTLP/gRPC, whose receiver does not speak
		// HTTP/1.1: the usual slip when a gRPC setting is copied.
		err = fmt.Errorf("%w (4317 is OTLP/gRPC's port; OTLP/HTTP's is 4318)", err)
	}
	return err
}

// post makes one request. It reports whether a failure may be retried, and
// after how long the receiver asked (0: not said).
func (c *Client) post(ctx context.Context, hc *http.Client, target string, body []byte) (bool, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return false, 0, fmt.Errorf("cannot make the OTLP request: %w", err)
	}
	req.Header.Set("Content-Type", protobufMediaType)
	// Named, as OTLP asks of exporters, so that a receiver's operator can
	// tell hookwatch's requests from others' (Headers may say otherwise).
	req.Header.Set("User-Agent", userAgent)
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return ctx.Err() == nil && !tlsSetting(err), 0, fmt.Errorf("cannot send spans to %s: %w", target, err)
	}
	c.reached.Store(true)
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if resp.StatusCode/100 == 2 {
		// A receiver answers its ExportTraceServiceResponse in protobuf,
		// or nothing; anything else took the spans for something else (a
		// health check's port, a web server's page) and keeps none.
		ct := resp.Header.Get("Content-Type")
		if mt, _, _ := mime.ParseMediaType(ct); len(data) > 0 && mt != protobufMediaType {
			return false, 0, &StatusError{URL: target, Code: resp.StatusCode, Body: fmt.Sprintf("%s; that is not an OTLP response (%s): is it an OTLP/HTTP receiver's URL?",
				refusal(ct, data), cmp.Or(ct, "no Content-Type"))}
		}
		if n, msg := partialSuccess(data); n > 0 {
			return false, 0, &PartialError{Rejected: n, Message: msg}
		}
		return false, 0, nil
	}
	serr := &StatusError{URL: target, Code: resp.StatusCode, Body: refusal(resp.Header.Get("Content-Type"), data)}
	if !retryable(resp.StatusCode) {
		return false, 0, serr
	}
	var after time.Duration
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		after = time.Duration(s) * time.Second
	}
	return true, after, serr
}

// tlsSetting reports whether err is TLS that the endpoint's setting makes
// fail whenever it is tried: a certificate not trusted (or not of the
// host), or https:// against a port that answers plain HTTP. Retrying
// only delays the error.
func tlsSetting(err error) bool {
	var verify *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	// net/http says the last with no type of its own.
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid) ||
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client")
}

// refusal is what the body of a receiver's refusal says, on one line of at
// most 256 bytes, for an error message: the message of the google.rpc.Status
// an OTLP receiver answers in protobuf (not its bytes), else the text (a
// proxy's HTML page) with each run of spaces and line breaks made one
// space, control characters dropped.
func refusal(contentType string, body []byte) string {
	text := string(body)
	if mt, _, _ := mime.ParseMediaType(contentType); mt == protobufMediaType {
		_, text = readPartial(body) // Status: code = 1, message = 2, as a partial success
	}
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(text, ""))
	return cut(strings.Join(strings.Fields(text), " "), 256)
}

// partialSuccess reads ExportTraceServiceResponse.partial_success (field 1:
// rejected_spans = 1, error_message = 2) from a protobuf answer; a body
// that is not one (an empty body, JSON from a proxy) reads as none.
func partialSuccess(b []byte) (rejected int64, msg string) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, ""
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			inner, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return 0, ""
			}
			rejected, msg = readPartial(inner)
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return 0, ""
		}
		b = b[n:]
	}
	return rejected, msg
}

// readPartial reads an ExportTracePartialSuccess (rejected_spans = 1,
// error_message = 2), or a google.rpc.Status, whose code and message are
// the same fields.
func readPartial(b []byte) (rejected int64, msg string) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return rejected, msg
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return rejected, msg
			}
			rejected, b = int64(v), b[n:]
		case num == 2 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return rejected, msg
			}
			msg, b = string(v), b[n:]
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return rejected, msg
			}
			b = b[n:]
		}
	}
	return rejected, msg
}

// ErrPermanent reports whether err says the receiver will not take these
// spans, however often they are sent.
func ErrPermanent(err error) bool {
	var pe *PartialError
	var se *StatusError
	return errors.As(err, &pe) || errors.As(err, &se) && !retryable(se.Code)
}
