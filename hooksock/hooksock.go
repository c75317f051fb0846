// Package hooksock is the Unix socket through which a hook process asks the
// collector attached to the same HOOKWATCH_HOME for the policies' answer to
// an event: the hook sends the payload, the collector — its rules already
// compiled, its quota state at hand — evaluates it and replies with the
// exit code and stdout the hook must give the agent.
//
// Why a socket of its own rather than the collector's HTTP port: the agent
// waits for this answer on every tool call a policy covers. Over HTTP the
// round trip to an idle collector measured 0.6–0.9 ms on the project's
// 2-core machine: HTTP parsing, a JSON envelope decoded twice, and the
// netpoller handing each woken connection from the thread that polled to
// the one that runs it. Here the collector keeps threads blocked in
// accept(2) (see Server), the request is a few lines, and the hook names
// the project policy file it already located, so the collector need not
// walk the directory tree again. See docs/benchmarks.md.
//
// The socket is Path(home), created 0600 inside the 0700 home: only the
// home's owner can ask, and whoever answers reads the same policy files and
// quota state the hook would — so, unlike HTTP, no token is needed.
//
// One request per connection. The hook writes
//
//	hookwatch-decide 1\n
//	<the project policy file's path, a JSON string; "" for none>\n
//	<the payload, JSON, as the agent sent it>
//
// and ends its side of the connection (shutdown(2) for writing); the
// collector replies
//
//	<the collector's HTTP listen address, as in the spool's consumer.lock>\n
//	<the exit code>\n
//	<the audit record, compact JSON, or nothing>\n
//	<the bytes for the hook's stdout>
//
// and closes. The address lets the hook hand the event over through the
// spool without asking the spool who is attached.
package hooksock

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"

	"github.com/hookwatch/hookwatch/internal/jsonstr"
)

// FileName is the socket's name in HOOKWATCH_HOME.
const FileName = "hook.sock"

// Path returns the socket of the collector attached to home.
func Path(home string) string { return filepath.Join(home, FileName) }

// magic opens every request, so that a stray client is told apart from a
// hook and a future protocol from this one.
const magic = "hookwatch-decide 1\n"

// MaxRequestBytes bounds a request: the hook reads at most 8 MiB of
// payload (hook.MaxPayloadBytes), plus the header lines.
const MaxRequestBytes = 8<<20 + 64<<10

// maxReplyBytes bounds a reply the hook reads.
const maxReplyBytes = 4 << 20

// Request is what a hook asks.
type Request struct {
	// ProjectPolicy is the project policy file the hook located from the
	// payload's cwd (policyfile.Locate), whether or not it exists; ""
	// when no project applies. The managed and user files are the
	// collector's to find: they do not depend on the event.
	ProjectPolicy string
	// Payload is the hook payload as the agent sent it, before redaction:
	// a rule about a secret must see the secret.
	Payload []byte
}

// Reply is the collector's answer.
type Reply struct {
	Addr   string          // the collector's HTTP listen address
	Code   int             // the hook's exit code
	Audit  json.RawMessage // the decision's audit record for the envelope; nil when no rule had an opinion
	Stdout []byte          // what the hook writes to stdout; nil for nothing
}

// errMalformed reports a request or reply that does not follow the protocol.
var errMalformed = errors.New("malformed hook socket message")

// AppendRequest appends r's encoding to dst.
func AppendRequest(dst []byte, r Request) []byte {
	dst = append(dst, magic...)
	dst = jsonstr.AppendQuoted(dst, r.ProjectPolicy)
	dst = append(dst, '\n')
	return append(dst, r.Payload...)
}

// ParseRequest reads what AppendRequest wrote. The payload is not checked:
// it is the evaluator's to judge.
func ParseRequest(b []byte) (Request, error) {
	rest, ok := bytes.CutPrefix(b, []byte(magic))
	if !ok {
		return Request{}, errors.New("not a hook socket request (want " + strconv.Quote(magic) + ")")
	}
	line, payload, ok := bytes.Cut(rest, []byte("\n"))
	if !ok {
		return Request{}, errMalformed
	}
	var r Request
	if err := json.Unmarshal(line, &r.ProjectPolicy); err != nil {
		return Request{}, errors.New("the project policy line must be a JSON string")
	}
	r.Payload = payload
	return r, nil
}

// AppendReply appends r's encoding to dst.
func AppendReply(dst []byte, r Reply) []byte {
	dst = append(dst, r.Addr...)
	dst = append(dst, '\n')
	dst = strconv.AppendInt(dst, int64(r.Code), 10)
	dst = append(dst, '\n')
	// JSON has newlines only as whitespace (inside strings they are
	// escaped): dropping them keeps the record on one line.
	for _, c := range r.Audit {
		if c != '\n' {
			dst = append(dst, c)
		}
	}
	dst = append(dst, '\n')
	return append(dst, r.Stdout...)
}

// ParseReply reads what AppendReply wrote, without encoding/json's
// reflection, which a hook process would pay for on first use.
func ParseReply(b []byte) (Reply, error) {
	addr, rest, ok := bytes.Cut(b, []byte("\n"))
	if !ok {
		return Reply{}, errMalformed
	}
	line, rest, ok := bytes.Cut(rest, []byte("\n"))
	if !ok {
		return Reply{}, errMalformed
	}
	code, err := strconv.Atoi(string(line))
	if err != nil {
		return Reply{}, errMalformed
	}
	audit, stdout, ok := bytes.Cut(rest, []byte("\n"))
	if !ok || (len(audit) > 0 && !json.Valid(audit)) {
		return Reply{}, errMalformed
	}
	r := Reply{Addr: string(addr), Code: code}
	if len(audit) > 0 {
		r.Audit = audit
	}
	if len(stdout) > 0 {
		r.Stdout = stdout
	}
	return r, nil
}
