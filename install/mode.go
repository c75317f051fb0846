package install

import "github.com/hookwatch/hookwatch/claudecode"

// Installed reports how the settings file of o's scope runs hookwatch's
// hooks now: ModeHTTP with the collector URL they post to when a hookwatch
// handler there is an http one, ModeCommand when they are all commands, ""
// when the file registers no hook of hookwatch (or does not exist). A
// re-install that names no mode keeps this one: `hookwatch install`, the
// fix doctor suggests for many things, must not turn http hooks back into
// commands.
func Installed(o Options) (mode, collectorURL string, err error) {
	o, err = o.withDefaults()
	if err != nil {
		return "", "", err
	}
	path, _ := o.path()
	b, existed, err := readFile(path)
	if err != nil || !existed {
		return "", "", err
	}
	s, err := parse(b, path)
	if err != nil {
		return "", "", err
	}
	h, ok := member(parseRoot(s.body), "hooks")
	if !ok || !h.value.IsObject() {
		return "", "", nil
	}
	for _, ev := range items(h.value) {
		if !ev.value.IsArray() {
			continue
		}
		for _, i := range ourGroups(ev.value, o.Binary) {
			for _, raw := range items(ev.value)[i].value.Get("hooks").Array() {
				hd, _ := claudecode.ParseHandler([]byte(raw.Raw))
				if u, ok := hd.CollectorURL(); ok {
					return ModeHTTP, u, nil
				}
				if hd.Type == "command" {
					mode = ModeCommand
				}
			}
		}
	}
	return mode, "", nil
}
