// Package web serves hookwatch's dashboard: a single-page application that
// reads the collector's /v1 API and follows its event stream.
//
// The dashboard is plain ES modules, Preact + htm for the views and uPlot
// for the one chart, vendored as files under static/vendor (see vendor.sh),
// with no bundler and no build step. That is what lets a fresh clone run the
// whole UI with `go run ./cmd/hookwatch serve`: the sources are the build,
// so there is nothing to commit twice or to keep in sync in CI, and the
// embedded assets stay well under the size a bundle would have. The
// alternative the design allowed, a TypeScript/Svelte build with committed
// output, would add npm to every UI change and a generated-file check to CI
// for no gain in what the browser receives.
//
// Every asset is served under /assets/<version>/, where the version is a
// hash of all embedded files: relative module imports then stay inside one
// version, so assets can be cached forever and a new binary is picked up by
// the next load of the (never cached) index page.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed static
var static embed.FS

// ContentSecurityPolicy is sent with every response of Handler. Payloads
// shown by the dashboard are hostile (file contents, command output), so
// the page may run only its own scripts and styles, talk only to its own
// origin, never be framed, and — through Trusted Types — cannot even hand a
// string to innerHTML or a similar sink: a bug that tried would throw
// instead of executing.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; " +
	"frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'"

// AssetPrefix is the path under which Handler serves the embedded files.
const AssetPrefix = "/assets/"

// faviconPath is where a browser asks for a site's icon when the page it
// shows names none; Handler answers it with the dashboard's icon.
const faviconPath = "/favicon.ico"

// favicon is the embedded file of the dashboard's icon, the one index.html
// names.
const favicon = "favicon.svg"

// versionPlaceholder is replaced in index.html by the asset path of the
// running binary's assets.
const versionPlaceholder = "/assets/_/"

// asset is one embedded file ready to serve.
type asset struct {
	body, gz []byte
	// etag names the identity representation and etagGz the gzipped one:
	// they are different bytes, so they must not share a strong ETag.
	etag, etagGz string
	ctype        string
}

// bundle is every asset plus the index page, built on first use rather than
// in init: the hook binary may link this package, and must not pay for
// hashing and compressing the dashboard on every event.
type bundle struct {
	version string
	index   asset
	files   map[string]*asset
}

var load = sync.OnceValue(func() *bundle {
	b, err := build(static)
	if err != nil {
		// The embedded FS is part of the binary; failing to read it is a
		// build defect, not a runtime condition.
		panic("web: cannot load embedded assets: " + err.Error())
	}
	return b
})

// build reads fsys (rooted at "static") into a bundle.
func build(fsys fs.FS) (*bundle, error) {
	b := &bundle{files: map[string]*asset{}}
	var names []string
	err := fs.WalkDir(fsys, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		names = append(names, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	h := sha256.New()
	for _, p := range names {
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		h.Write([]byte(p))
		h.Write([]byte{0})
		h.Write(body)
		b.files[strings.TrimPrefix(p, "static/")] = newAsset(p, body)
	}
	b.version = hex.EncodeToString(h.Sum(nil))[:12]
	idx, ok := b.files["index.html"]
	if !ok || b.files[favicon] == nil {
		return nil, fs.ErrNotExist
	}
	page := bytes.ReplaceAll(idx.body, []byte(versionPlaceholder), []byte(AssetPrefix+b.version+"/"))
	b.index = *newAsset("index.html", page)
	return b, nil
}

func newAsset(name string, body []byte) *asset {
	sum := sha256.Sum256(body)
	tag := hex.EncodeToString(sum[:8])
	a := &asset{body: body, etag: `"` + tag + `"`, etagGz: `"` + tag + `-gz"`, ctype: contentType(name)}
	if compressible(a.ctype) && len(body) > 256 {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(body)
		zw.Close()
		if buf.Len() < len(body) {
			a.gz = buf.Bytes()
		}
	}
	return a
}

func contentType(name string) string {
	switch ext := path.Ext(name); ext {
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".json":
		return "application/json"
	case "":
		return "text/plain; charset=utf-8" // LICENSE files, VERSIONS
	default:
		if t := mime.TypeByExtension(ext); t != "" {
			return t
		}
		return "application/octet-stream"
	}
}

func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || strings.HasPrefix(ctype, "image/svg") || strings.HasPrefix(ctype, "application/json")
}

// Handler returns the dashboard's handler, meant to be mounted at "/" of the
// collector's mux, below its more specific /v1/, /healthz and /metrics
// routes. It serves the index page at "/" (never cached, since it names the
// current asset version) and the embedded files under
// /assets/<version>/ (cached for a year as immutable when the version is
// the current one, revalidated by ETag otherwise), gzip-compressed when the
// client accepts it. It serves the dashboard's icon at /favicon.ico too,
// where a browser asks for one on a page that names none (a JSON answer of
// the API opened in a tab), cached for a day and revalidated by ETag since
// that address names no version. Every response carries
// ContentSecurityPolicy and related headers. Other paths are 404 and
// methods other than GET and HEAD are 405.
func Handler() http.Handler {
	return http.HandlerFunc(serve)
}

func serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	b := load()
	p := r.URL.Path
	switch {
	case p == "/" || p == "/index.html":
		h.Set("Cache-Control", "no-cache")
		write(w, r, &b.index)
		return
	case p == faviconPath:
		// The page's own icon, the file index.html names: one icon for the
		// dashboard and for the addresses a browser shows outside it.
		h.Set("Cache-Control", "public, max-age=86400")
		write(w, r, b.files[favicon])
		return
	case strings.HasPrefix(p, AssetPrefix):
		version, name, ok := strings.Cut(strings.TrimPrefix(p, AssetPrefix), "/")
		a := b.files[name]
		if !ok || a == nil || name == "index.html" {
			break
		}
		if version == b.version {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			// A page from an older binary asks for its version: answer with
			// the current file, but don't let it be cached under a name it
			// does not match.
			h.Set("Cache-Control", "no-cache")
		}
		write(w, r, a)
		return
	}
	http.Error(w, "404 page not found", http.StatusNotFound)
}

func write(w http.ResponseWriter, r *http.Request, a *asset) {
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	body, etag := a.body, a.etag
	if a.gz != nil {
		h.Set("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			body, etag = a.gz, a.etagGz
		}
	}
	h.Set("ETag", etag)
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatch(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip (or *)
// with a non-zero quality.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "*" {
			continue
		}
		q := 1.0
		for param := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(param), "=")
			if strings.EqualFold(k, "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		if q > 0 {
			return true
		}
	}
	return false
}

// etagMatch implements If-None-Match's weak comparison against one strong
// tag.
func etagMatch(header, etag string) bool {
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == etag || tag == "*" {
			return true
		}
	}
	return false
}

// Assets reports the embedded files and their sizes: raw bytes and bytes as
// served to a client that accepts gzip. The benchmark and a test use it to
// keep the dashboard small.
func Assets() (files int, raw, gzipped int64) {
	for _, a := range load().files {
		files++
		raw += int64(len(a.body))
		if a.gz != nil {
			gzipped += int64(len(a.gz))
		} else {
			gzipped += int64(len(a.body))
		}
	}
	return files, raw, gzipped
}
