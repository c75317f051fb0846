package collector

import (
	"net/http"
	"net/netip"

	"github.com/hookwatch/hookwatch/ingest"
)

// ArchivesResponse is the body of GET /v1/sessions/{id}/archives: the
// transcripts archived when the session's agents compacted, oldest first
// (see ingest.ListArchives), each with the PostCompact summary beside it.
type ArchivesResponse struct {
	Archives []ingest.Archive `json:"archives"`
}

// handleArchives is GET /v1/sessions/{id}/archives, of a session the
// caller may read (404 and 403 as for the session itself). The archive
// lives in the home the collector shares with the hooks
// (Config.ArchiveDir); a collector without one lists none.
func (s *Server) handleArchives(w http.ResponseWriter, r *http.Request) {
	if _, err := s.resolve(r.Context(), r.PathValue("id")); err != nil {
		s.storeError(w, r, err)
		return
	}
	resp := ArchivesResponse{Archives: []ingest.Archive{}}
	if s.cfg.ArchiveDir != "" {
		list, err := ingest.ListArchives(s.cfg.ArchiveDir, r.PathValue("id"))
		if err != nil {
			writeError(w, http.StatusInternalServerError, "cannot list the archives: "+err.Error())
			return
		}
		resp.Archives = append(resp.Archives, list...)
	}
	writeJSON(w, http.StatusOK, resp)
}

// fromLoopback reports whether r came from this machine.
func fromLoopback(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}
