package shell

import "github.com/hookwatch/hookwatch/internal/jsonstr"

// AppendJSON appends to b the JSON document of a: byte for byte what
// json.Marshal(a) returns (HTML escaped), without reflection. The session
// model stores an analysis in the document of every shell call. The struct
// tags stay the document's one definition: TestAnalysisJSON and FuzzAnalyze
// hold this encoder to json.Marshal on analyses with every field set at
// random and on those of real commands.
func (a *Analysis) AppendJSON(b []byte) []byte {
	b = append(b, `{"effect":`...)
	b = jsonstr.AppendQuotedHTML(b, string(a.Effect))
	b = append(b, `,"subtype":`...)
	b = jsonstr.AppendQuotedHTML(b, a.Subtype)
	if a.Unknown {
		b = append(b, `,"unknown":true`...)
	}
	b = appendOptString(b, `,"reason":`, a.Reason)
	b = append(b, `,"steps":`...)
	if a.Steps == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range a.Steps {
			if i > 0 {
				b = append(b, ',')
			}
			b = a.Steps[i].appendJSON(b)
		}
		b = append(b, ']')
	}
	b = appendStrings(b, `,"reads":`, a.Reads)
	b = appendStrings(b, `,"writes":`, a.Writes)
	b = appendStrings(b, `,"hosts":`, a.Hosts)
	return append(b, '}')
}

func (s *Step) appendJSON(b []byte) []byte {
	b = append(b, `{"program":`...)
	b = jsonstr.AppendQuotedHTML(b, s.Program)
	b = appendStrings(b, `,"args":`, s.Args)
	b = appendStrings(b, `,"via":`, s.Via)
	if s.Dynamic {
		b = append(b, `,"dynamic":true`...)
	}
	b = appendStrings(b, `,"reads":`, s.Reads)
	b = appendStrings(b, `,"writes":`, s.Writes)
	b = appendStrings(b, `,"hosts":`, s.Hosts)
	b = append(b, `,"effect":`...)
	b = jsonstr.AppendQuotedHTML(b, string(s.Effect))
	b = append(b, `,"subtype":`...)
	b = jsonstr.AppendQuotedHTML(b, s.Subtype)
	b = appendOptString(b, `,"why":`, s.Why)
	return append(b, '}')
}

// appendOptString appends a member that json's omitempty leaves out when
// s is "".
func appendOptString(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return jsonstr.AppendQuotedHTML(append(b, name...), s)
}

// appendStrings appends a []string member that json's omitempty leaves
// out when ss is empty.
func appendStrings(b []byte, name string, ss []string) []byte {
	if len(ss) == 0 {
		return b
	}
	return jsonstr.AppendArrayHTML(append(b, name...), ss)
}
