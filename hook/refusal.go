package hook

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/hookwatch/hookwatch/redact"
)

// maxRefusal bounds the collector's words Refusal gives: the longest of its
// own (collector/auth.go) fits.
const maxRefusal = 300

// Refusal returns why a collector refused a request, from the {"error": …}
// body a hookwatch collector answers every refusal with (collector/http.go),
// and "" for any other body: a proxy's page, say, whose words no client can
// vouch for. It is the one reading of that body for the collector's clients
// (the CLI, doctor, the forwarder). The words are the server's to choose
// and end up in logs and in reports pasted anywhere: they are made one line
// of printable text of at most maxRefusal characters, with sent (the token
// the request carried) and any secret package redact finds replaced.
func Refusal(body []byte, sent string) string {
	var b struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &b) != nil {
		return ""
	}
	s := b.Error
	if sent = strings.TrimSpace(sent); sent != "" {
		s = strings.ReplaceAll(s, sent, "[REDACTED:token]")
	}
	s, _ = redact.String(s)
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }), " ")
	if r := []rune(s); len(r) > maxRefusal {
		s = string(r[:maxRefusal-1]) + "…"
	}
	return s
}

// RevokedToken begins a hookwatch collector's refusal of a revoked token
// (collector/auth.go words it from it), which Revoked tells from its other
// refusals.
const RevokedToken = "this bearer token was revoked"

// RevokedTokenFix is what replaces a revoked token when where the client
// keeps it is not known: the collector's refusal ends with it (collector/
// auth.go), for whoever reads that refusal (curl, a forwarder's log).
// It agrees with RefusedToken, which words it for the token's source:
// installing a new token changes nothing while HOOKWATCH_TOKEN, which
// overrides the token file, is set. With the refusal's start it fits
// maxRefusal.
const RevokedTokenFix = "ask the collector's admin for a new token ('hookwatch token create --user NAME'), then install it ('hookwatch install --token-file FILE', with HOOKWATCH_TOKEN unset: it overrides the file) or export it as HOOKWATCH_TOKEN"

// Revoked reports whether why, a collector's refusal as Refusal returns it,
// says the token was revoked: a token that will never be taken again,
// which only a new one replaces.
func Revoked(why string) bool { return strings.HasPrefix(why, RevokedToken) }
