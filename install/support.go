package install

import "fmt"

// The support rule for Claude Code versions. hookwatch is tested against
// OldestTestedClient and NewestTestedClient: the real-client suite
// (internal/e2e) runs every test on both in CI. It supports every version
// between them, both included. An older client is unsupported: its hooks
// may lack events and fields the session model is built from (agent_id,
// prompt_id, the subagent sidecar). A newer one is expected to work but is
// untested: the event decoder is lenient and keeps what it does not know,
// and event/testdata/unknown_fields.golden lists the fields of captured
// payloads the model does not name, so a new client's new fields show up
// for review once its payloads are captured.
var (
	// OldestTestedClient is the oldest Claude Code version hookwatch
	// supports.
	OldestTestedClient = Version{2, 1, 197}
	// NewestTestedClient is the newest Claude Code version the tests run.
	NewestTestedClient = Version{2, 1, 332}
)

// Support is what the support rule says of one Claude Code version.
type Support int

// What the rule says, from SupportUnknown (no version to judge) on.
const (
	SupportUnknown Support = iota // the version could not be read
	Unsupported                   // older than OldestTestedClient
	Supported                     // from OldestTestedClient to NewestTestedClient
	Untested                      // newer than NewestTestedClient
)

// ClientSupport returns what the support rule says of version v.
func ClientSupport(v Version) Support {
	switch {
	case len(v) == 0:
		return SupportUnknown
	case v.Compare(OldestTestedClient) < 0:
		return Unsupported
	case v.Compare(NewestTestedClient) > 0:
		return Untested
	}
	return Supported
}

// String names s: "supported", "unsupported", "untested" or "unknown".
func (s Support) String() string {
	switch s {
	case Unsupported:
		return "unsupported"
	case Supported:
		return "supported"
	case Untested:
		return "untested"
	}
	return "unknown"
}

// Explain says in one sentence what the rule says of version v, naming
// the tested versions.
func (s Support) Explain(v Version) string {
	tested := fmt.Sprintf("tested %s to %s", OldestTestedClient, NewestTestedClient)
	switch s {
	case Unsupported:
		return fmt.Sprintf("%s is older than the oldest supported version (%s): its hooks may lack what hookwatch needs", v, tested)
	case Supported:
		return fmt.Sprintf("%s is supported (%s)", v, tested)
	case Untested:
		return fmt.Sprintf("%s is newer than the newest tested version (%s): expected to work, untested", v, tested)
	}
	return fmt.Sprintf("the version is unknown; hookwatch supports %s", tested)
}
