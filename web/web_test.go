package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, path string, hdr ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestIndex(t *testing.T) {
	res := get(t, "/")
	if res.StatusCode != 200 {
		t.Fatalf("GET / = %d", res.StatusCode)
	}
	page := body(t, res)
	if strings.Contains(page, versionPlaceholder) {
		t.Fatalf("index still names the placeholder %q", versionPlaceholder)
	}
	if got := res.Header.Get("Cache-Control"); got != "no-cache" {
		t.Errorf("Cache-Control = %q, want no-cache", got)
	}
	if got := res.Header.Get("Content-Type"); got != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q", got)
	}
	// Every asset the page names must be served, under the current version.
	refs := regexp.MustCompile(`(?:href|src)="(/assets/[^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 5 {
		t.Fatalf("index names %d assets, want the stylesheet, icon and modules", len(refs))
	}
	version := load().version
	for _, m := range refs {
		if !strings.HasPrefix(m[1], AssetPrefix+version+"/") {
			t.Errorf("%s is not under the current version %s", m[1], version)
		}
		if r := get(t, m[1]); r.StatusCode != 200 {
			t.Errorf("GET %s = %d", m[1], r.StatusCode)
		}
	}
}

func TestSecurityHeaders(t *testing.T) {
	f := func(path string, status int) {
		t.Helper()
		res := get(t, path)
		if res.StatusCode != status {
			t.Errorf("GET %s = %d, want %d", path, res.StatusCode, status)
		}
		h := res.Header
		if h.Get("Content-Security-Policy") != ContentSecurityPolicy {
			t.Errorf("GET %s: CSP = %q", path, h.Get("Content-Security-Policy"))
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s: missing hardening headers: %v", path, h)
		}
	}
	f("/", 200)
	f(AssetPrefix+load().version+"/app.js", 200)
	f("/nope", 404)
	f(AssetPrefix+load().version+"/nope.js", 404)
	f(AssetPrefix+load().version+"/index.html", 404)
	f("/assets/", 404)
}

func TestCSPIsStrict(t *testing.T) {
	// The policy is the last line of defence against hostile payloads: it
	// must never allow inline or evaluated script, or any other origin.
	for _, bad := range []string{"'unsafe-inline'", "'unsafe-eval'", "*", "http:", "https:", "data: ;"} {
		if strings.Contains(ContentSecurityPolicy, bad) {
			t.Errorf("CSP contains %s", bad)
		}
	}
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "require-trusted-types-for 'script'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(ContentSecurityPolicy, want) {
			t.Errorf("CSP lacks %s", want)
		}
	}
}

func TestAssetCaching(t *testing.T) {
	version := load().version
	path := AssetPrefix + version + "/app.js"
	res := get(t, path)
	if got := res.Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
		t.Errorf("current version: Cache-Control = %q", got)
	}
	etag := res.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if got := get(t, path, "If-None-Match", etag); got.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the ETag = %d, want 304", got.StatusCode)
	}
	if got := get(t, path, "If-None-Match", `"other"`); got.StatusCode != 200 {
		t.Errorf("If-None-Match with another ETag = %d, want 200", got.StatusCode)
	}
	old := get(t, AssetPrefix+"000000000000/app.js")
	if old.StatusCode != 200 || old.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("old version: %d, Cache-Control %q; want 200 and no-cache", old.StatusCode, old.Header.Get("Cache-Control"))
	}
}

// TestFavicon: a browser showing an address of the collector that names no
// icon (a JSON answer of the API) asks for /favicon.ico; it gets the icon
// the dashboard's page names, as an SVG, cacheable and revalidated by ETag
// since the address names no version.
func TestFavicon(t *testing.T) {
	want, err := fs.ReadFile(static, "static/favicon.svg")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body(t, get(t, "/")), `href="`+AssetPrefix+load().version+`/favicon.svg"`) {
		t.Fatal("the page does not name static/favicon.svg as its icon")
	}
	res := get(t, "/favicon.ico")
	if res.StatusCode != 200 {
		t.Fatalf("GET /favicon.ico = %d", res.StatusCode)
	}
	if got := res.Header.Get("Content-Type"); got != "image/svg+xml" {
		t.Errorf("Content-Type = %q, want image/svg+xml", got)
	}
	if got := res.Header.Get("Cache-Control"); got != "public, max-age=86400" {
		t.Errorf("Cache-Control = %q, want public, max-age=86400", got)
	}
	if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Content-Security-Policy") != ContentSecurityPolicy {
		t.Errorf("missing hardening headers: %v", res.Header)
	}
	if got := body(t, res); got != string(want) {
		t.Errorf("body is not static/favicon.svg: %q", got)
	}
	etag := res.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if got := get(t, "/favicon.ico", "If-None-Match", etag); got.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the ETag = %d, want 304", got.StatusCode)
	}
	// Only that address: no other file of the dashboard outside its version.
	if got := get(t, "/favicon.svg"); got.StatusCode != http.StatusNotFound {
		t.Errorf("GET /favicon.svg = %d, want 404", got.StatusCode)
	}
}

func TestGzip(t *testing.T) {
	path := AssetPrefix + load().version + "/vendor/uPlot.esm.js"
	plain := get(t, path)
	raw := body(t, plain)
	if plain.Header.Get("Content-Encoding") != "" {
		t.Fatal("gzip sent to a client that did not ask")
	}
	f := func(accept string, want bool) {
		t.Helper()
		res := get(t, path, "Accept-Encoding", accept)
		got := res.Header.Get("Content-Encoding") == "gzip"
		if got != want {
			t.Fatalf("Accept-Encoding %q: gzip = %v, want %v", accept, got, want)
		}
		if res.Header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: Vary = %q", accept, res.Header.Get("Vary"))
		}
		if !got {
			return
		}
		if res.Header.Get("ETag") == plain.Header.Get("ETag") {
			t.Error("gzip and identity share an ETag")
		}
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != raw {
			t.Fatal("gzip body does not decompress to the asset")
		}
	}
	f("gzip", true)
	f("deflate, gzip;q=0.5", true)
	f("br, *", true)
	f("gzip;q=0", false)
	f("identity", false)
	f("br", false)
}

func TestMethods(t *testing.T) {
	f := func(method string, status int) {
		t.Helper()
		rec := httptest.NewRecorder()
		Handler().ServeHTTP(rec, httptest.NewRequest(method, "/", nil))
		if rec.Code != status {
			t.Errorf("%s / = %d, want %d", method, rec.Code, status)
		}
		if method == http.MethodHead && rec.Body.Len() != 0 {
			t.Errorf("HEAD / has a body")
		}
	}
	f(http.MethodGet, 200)
	f(http.MethodHead, 200)
	f(http.MethodPost, 405)
	f(http.MethodDelete, 405)
}

// TestNoInnerHTML keeps the dashboard's own code away from every HTML sink:
// payload text reaches the DOM only as text nodes and properties. (The
// Content-Security-Policy's Trusted Types would make such a sink throw in
// the browser; this catches it before.)
func TestNoInnerHTML(t *testing.T) {
	sinks := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|dangerouslySetInnerHTML|\beval\(|new Function\(|javascript:|setAttribute\(\s*['"]on`)
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(p, "static/vendor/") {
			return err
		}
		b, err := fs.ReadFile(static, p)
		if err != nil {
			return err
		}
		for i, line := range bytes.Split(b, []byte("\n")) {
			if m := sinks.Find(line); m != nil {
				t.Errorf("%s:%d uses %s", p, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAssetBudget keeps what a browser downloads for the dashboard small.
func TestAssetBudget(t *testing.T) {
	files, raw, gz := Assets()
	t.Logf("%d embedded files: %d bytes, %d bytes as served gzipped", files, raw, gz)
	const budget = 500 << 10
	if gz > budget {
		t.Errorf("embedded assets are %d bytes gzipped, over the %d budget", gz, budget)
	}
}

func TestAcceptsGzip(t *testing.T) {
	f := func(h string, want bool) {
		t.Helper()
		if got := acceptsGzip(h); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", h, got, want)
		}
	}
	f("", false)
	f("gzip", true)
	f("GZIP", true)
	f("gzip;q=0", false)
	f("gzip; q=0.001", true)
	f("gzip;q=0.0", false)
	f("x-gzip", false)
	f("deflate,br", false)
	f("*;q=0", false)
	f("*", true)
	f("gzip;q=bogus", true)
}

func BenchmarkServeAsset(b *testing.B) {
	path := AssetPrefix + load().version + "/views/timeline.js"
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	h := Handler()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
	}
}
