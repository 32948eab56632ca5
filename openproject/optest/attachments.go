package optest

import (
	"cmp"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/opsearch/opsearch/openproject"
)

// Attachment is a file attached to a work package, a wiki page or a
// meeting: the API's metadata plus the file's content.
//
// Container.Href names the container: "/api/v3/work_packages/N",
// "/api/v3/wiki_pages/N" or "/api/v3/meetings/N"; Container.ID, when set,
// must be N. FileSize 0 means the length of the content. DownloadURL, when
// set, is rendered as the downloadLocation link instead of the one the
// server would choose.
//
// The content is Content or, when Content is nil, what Source returns.
// Generated data sets (package opgen) describe their files with a Source,
// so that an instance of 100,000 work packages does not hold every file
// in memory: the bytes are made when served and for the digest. A Source
// must return the same bytes on every call and be safe for concurrent
// use. It is not encoded (nor is the content it makes, so encoding a
// generated data set stays cheap); SaveDataset writes what it returns as
// content, and the size as fileSize, so a saved data set serves the same
// files.
type Attachment struct {
	openproject.Attachment
	// Content is the file. A data set holds it in memory; a JSON data set
	// file holds it base64-encoded.
	Content []byte `json:"content,omitempty"`
	// External stores the file in an external object storage: the
	// content route redirects to a presigned URL of the server's storage
	// listener (see Options.StorageAddr), as a real server with S3
	// storage does, and downloadLocation is that URL.
	External bool `json:"external,omitempty"`
	// Source makes the content on demand when Content is nil.
	Source func() []byte `json:"-"`
}

// Bytes returns the attachment's content: Content, else what Source
// makes, else nil.
func (a *Attachment) Bytes() []byte {
	if a.Content != nil || a.Source == nil {
		return a.Content
	}
	return a.Source()
}

// cloneAttachment deep-copies an attachment (Source is shared: it is a
// pure function).
func cloneAttachment(a Attachment) Attachment {
	if a.Content != nil {
		a.Content = slices.Clone(a.Content)
	}
	return a
}

// containerKind is what an attachment can be attached to.
type containerKind uint8

const (
	containerWP containerKind = iota + 1
	containerWiki
	containerMeeting
)

// base is the API path of the kind's resources, with a trailing slash.
func (k containerKind) base() string {
	switch k {
	case containerWP:
		return "/api/v3/work_packages/"
	case containerWiki:
		return "/api/v3/wiki_pages/"
	case containerMeeting:
		return "/api/v3/meetings/"
	}
	return ""
}

// container names one container of attachments.
type container struct {
	kind containerKind
	id   int64
}

func (c container) href() string { return c.kind.base() + itoa(c.id) }

// parseContainer reads the container an attachment's Ref names: its Href
// must be a container path; an ID, when set, must agree with it.
func parseContainer(r openproject.Ref) (container, bool) {
	for _, k := range []containerKind{containerWP, containerWiki, containerMeeting} {
		rest, ok := strings.CutPrefix(r.Href, k.base())
		if !ok {
			continue
		}
		id, ok := parseID(rest)
		if !ok || (r.ID != 0 && r.ID != id) {
			return container{}, false
		}
		return container{k, id}, true
	}
	return container{}, false
}

// storedAttachment is an attachment in the store, with the container it
// was filed under and the size and digest of its content, worked out
// once, when first needed. Stored attachments never change; deleting one
// removes it from the store.
type storedAttachment struct {
	Attachment
	in container

	facts  sync.Once
	size   int64
	digest string
}

// sizeAndDigest returns the size the API reports (FileSize, else the
// content's length) and the MD5 of the content.
func (a *storedAttachment) sizeAndDigest() (int64, string) {
	a.facts.Do(func() {
		b := a.Bytes()
		sum := md5.Sum(b)
		a.digest = hex.EncodeToString(sum[:])
		a.size = cmp.Or(a.FileSize, int64(len(b)))
	})
	return a.size, a.digest
}

// contentType is the attachment's media type, with the real server's
// default for an unknown one.
func (a *storedAttachment) contentType() string {
	return cmp.Or(a.ContentType, "application/octet-stream")
}

// newStoredAttachment files a (cloned) attachment under c.
func newStoredAttachment(a Attachment, c container) *storedAttachment {
	a = cloneAttachment(a)
	a.Container = openproject.Ref{ID: c.id, Href: c.href()}
	if a.FileSize == 0 && a.Content != nil {
		a.FileSize = int64(len(a.Content))
	}
	return &storedAttachment{Attachment: a, in: c}
}

// --- store ---

// addAttachment files a in the store. The caller holds the write lock
// (or owns the store) and has checked that a's id is free.
func (s *store) addAttachment(a *storedAttachment) {
	s.atts[a.ID] = a
	list := s.attsIn[a.in]
	i, _ := slices.BinarySearch(list, a.ID)
	s.attsIn[a.in] = slices.Insert(list, i, a.ID)
	s.nextAttachment = max(s.nextAttachment, a.ID)
}

// removeAttachment deletes one attachment and returns it.
func (s *store) removeAttachment(id int64) (*storedAttachment, bool) {
	a, ok := s.atts[id]
	if !ok {
		return nil, false
	}
	delete(s.atts, id)
	list := s.attsIn[a.in]
	if i, found := slices.BinarySearch(list, id); found {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(s.attsIn, a.in)
	} else {
		s.attsIn[a.in] = list
	}
	return a, true
}

// removeAttachmentsOf deletes the attachments of a container (deleted
// with it, as on the real server).
func (s *store) removeAttachmentsOf(c container) {
	for _, id := range slices.Clone(s.attsIn[c]) {
		s.removeAttachment(id)
	}
}

// attachmentsOf returns a container's attachments, ascending ids.
func (s *store) attachmentsOf(c container) []*storedAttachment {
	ids := s.attsIn[c]
	out := make([]*storedAttachment, 0, len(ids))
	for _, id := range ids {
		out = append(out, s.atts[id])
	}
	return out
}

// containerInfo returns the project and the title (subject) of an
// existing container.
func (s *store) containerInfo(c container) (project int64, title string, ok bool) {
	switch c.kind {
	case containerWP:
		if wp, found := s.wps[c.id]; found {
			return wp.Project.ID, wp.Subject, true
		}
	case containerWiki:
		if w, found := s.wikis[c.id]; found {
			return w.Project.ID, w.Title, true
		}
	case containerMeeting:
		if m, found := s.meetings[c.id]; found {
			return m.Project.ID, m.Title, true
		}
	}
	return 0, "", false
}

// seesContainer reports whether u sees a container, by the checks of its
// own GET: view_work_packages or a share for a work package,
// view_wiki_pages for a wiki page, view_meetings for a meeting.
func (s *store) seesContainer(u *User, c container) bool {
	switch c.kind {
	case containerWP:
		wp, ok := s.wps[c.id]
		return ok && s.canSeeWP(u, wp)
	case containerWiki:
		w, ok := s.wikis[c.id]
		return ok && s.allowed(u, w.Project.ID, PermViewWikiPages)
	case containerMeeting:
		m, ok := s.meetings[c.id]
		return ok && s.allowed(u, m.Project.ID, PermViewMeetings)
	}
	return false
}

// touchContainer moves a container's updatedAt to now without changing
// its lockVersion, as Attachments::CreateService#touch_journable (and
// the delete service) do on the real server.
func (s *store) touchContainer(c container, now time.Time) {
	switch c.kind {
	case containerWP:
		if wp, ok := s.wps[c.id]; ok {
			wp.UpdatedAt = now
		}
	case containerWiki:
		if w, ok := s.wikis[c.id]; ok {
			w.UpdatedAt = now
		}
	case containerMeeting:
		if m, ok := s.meetings[c.id]; ok {
			m.UpdatedAt = now
		}
	}
}

// --- rendering ---

// attachment renders an attachment as the real AttachmentRepresenter
// does. The property is spelled fileSize as in the code (the spec example
// says filesize). downloadLocation is the content route, or for an
// external file the storage's presigned URL.
func (r *renderer) attachment(a *storedAttachment) obj {
	self := "/api/v3/attachments/" + itoa(a.ID)
	pid, title, _ := r.st.containerInfo(a.in)
	size, digest := a.sizeAndDigest()
	download := self + "/content"
	switch {
	case a.DownloadURL != "":
		download = a.DownloadURL
	case a.External && r.srv != nil:
		if u, err := r.srv.storage.presign(a, r.host, r.srv.clock()); err == nil {
			download = u
		}
	}
	links := obj{
		{"self", link(self, a.FileName)},
		{"container", link(a.in.href(), title)},
		{"author", r.userLink(a.Author.ID)},
		{"staticDownloadLocation", link(self+"/content", "")},
		{"downloadLocation", link(download, "")},
	}
	// The real condition: edit permission on the container, or being the
	// author (attachment_model.yml).
	if r.st.canWrite(r.caller, pid) || (a.Author.ID != 0 && a.Author.ID == r.caller.ID) {
		links = append(links, kv{"delete", actionLink(self, "delete", "")})
	}
	return obj{
		{"_type", "Attachment"},
		{"_links", links},
		{"id", a.ID},
		{"fileName", a.FileName},
		{"fileSize", size},
		{"description", formattable("plain", a.Description)},
		{"contentType", a.contentType()},
		{"digest", obj{{"algorithm", "md5"}, {"hash", digest}}},
		{"createdAt", fmtTime(a.CreatedAt)},
	}
}

// attachmentCollection renders a container's attachments as the real
// AttachmentCollectionRepresenter: an unpaginated collection.
func (r *renderer) attachmentCollection(c container) obj {
	atts := r.st.attachmentsOf(c)
	elems := make([]obj, 0, len(atts))
	for _, a := range atts {
		elems = append(elems, r.attachment(a))
	}
	return unpaginatedCollection(c.href()+"/attachments", elems)
}

// --- handlers ---

const msgAttachmentNotFound = "The specified attachment does not exist."

func (s *Server) listWorkPackageAttachments(ex *exchange, args []string) {
	s.listAttachments(ex, containerWP, args[0], msgWPNotFound)
}

func (s *Server) listWikiAttachments(ex *exchange, args []string) {
	s.listAttachments(ex, containerWiki, args[0], msgNotFound)
}

func (s *Server) listMeetingAttachments(ex *exchange, args []string) {
	s.listAttachments(ex, containerMeeting, args[0], msgNotFound)
}

// listAttachments answers GET /{container}/{id}/attachments, or 404 with
// the container's own message when the caller cannot see it.
func (s *Server) listAttachments(ex *exchange, kind containerKind, arg, notFound string) {
	id, ok := parseID(arg)
	var o obj
	s.st.mu.RLock()
	c := container{kind, id}
	ok = ok && s.st.seesContainer(ex.user, c)
	if ok {
		o = s.attachmentRenderer(ex).attachmentCollection(c)
	}
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(notFound))
		return
	}
	ex.sendHAL(http.StatusOK, o)
}

// attachmentRenderer is a renderer that knows the request's host, for
// presigned URLs.
func (s *Server) attachmentRenderer(ex *exchange) *renderer {
	r := s.newRenderer(ex.user)
	r.host = ex.r.Host
	return r
}

// visibleAttachment returns an attachment whose container the caller
// sees. The caller holds the store lock.
func (s *Server) visibleAttachment(u *User, arg string) (*storedAttachment, bool) {
	return visibleByID(arg, s.st.atts, func(a *storedAttachment) bool { return s.st.seesContainer(u, a.in) })
}

// getAttachment answers GET /attachments/{id}.
func (s *Server) getAttachment(ex *exchange, args []string) {
	s.st.mu.RLock()
	var o obj
	a, ok := s.visibleAttachment(ex.user, args[0])
	if ok {
		o = s.attachmentRenderer(ex).attachment(a)
	}
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(msgAttachmentNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, o)
}

// getAttachmentContent answers GET /attachments/{id}/content: the file
// itself with its content type and a download disposition, or, for an
// external file, a redirect to a presigned URL of the storage (as
// lib/api/helpers/attachment_renderer.rb does with fog storage).
func (s *Server) getAttachmentContent(ex *exchange, args []string) {
	s.st.mu.RLock()
	a, ok := s.visibleAttachment(ex.user, args[0])
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(msgAttachmentNotFound))
		return
	}
	if a.External {
		loc := a.DownloadURL
		if loc == "" {
			u, err := s.storage.presign(a, ex.r.Host, s.clock())
			if err != nil {
				ex.sendError(http.StatusInternalServerError, "InternalServerError", msgInternal, nil)
				return
			}
			loc = u
		}
		// Grape's redirect: 302 with a short text body.
		ex.sendRaw(http.StatusFound, "text/plain; charset=utf-8",
			[]byte("This resource has been moved temporarily to "+loc+"."), map[string]string{"Location": loc})
		return
	}
	ex.sendRaw(http.StatusOK, a.contentType(), a.Bytes(), map[string]string{
		"Content-Disposition": contentDisposition("attachment", a.FileName),
	})
}

// deleteAttachment answers DELETE /attachments/{id} with 204. Like the
// delete link it needs the right to edit in the container's project, or
// to be the attachment's author.
func (s *Server) deleteAttachment(ex *exchange, args []string) {
	now := s.clock()
	s.st.mu.Lock()
	a, ok := s.visibleAttachment(ex.user, args[0])
	var apiErr *apiError
	switch {
	case !ok:
		apiErr = errNotFound(msgAttachmentNotFound)
	default:
		pid, _, _ := s.st.containerInfo(a.in)
		if !s.st.canWrite(ex.user, pid) && a.Author.ID != ex.user.ID {
			apiErr = errForbidden(msgForbidden)
			break
		}
		s.st.removeAttachment(a.ID)
		s.st.touchContainer(a.in, now)
	}
	s.st.mu.Unlock()
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	ex.respond(http.StatusNoContent)
}

// contentDisposition formats a Content-Disposition header as Rails'
// ActionDispatch::Http::ContentDisposition.format does: an ASCII
// filename (non-ASCII characters become "?", and everything outside a
// safe set is percent-escaped, quotes included) followed by the exact
// name in RFC 5987 form.
func contentDisposition(disposition, name string) string {
	var ascii, utf strings.Builder
	for _, c := range name {
		if c >= utf8.RuneSelf {
			c = '?'
		}
		if c == ' ' || traditionalSafe(byte(c)) {
			ascii.WriteRune(c)
		} else {
			ascii.WriteString(percent(byte(c)))
		}
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; rfc5987Safe(c) {
			utf.WriteByte(c)
		} else {
			utf.WriteString(percent(c))
		}
	}
	return disposition + `; filename="` + ascii.String() + `"; filename*=UTF-8''` + utf.String()
}

func percent(c byte) string {
	return "%" + strings.ToUpper(strconv.FormatUint(uint64(c)|0x100, 16)[1:])
}

// traditionalSafe is Rails' TRADITIONAL_ESCAPED_CHAR complement (without
// the space, which the caller allows).
func traditionalSafe(c byte) bool {
	return alnum(c) || strings.IndexByte("!#$+.^_`|~-", c) >= 0
}

// rfc5987Safe is Rails' RFC_5987_ESCAPED_CHAR complement.
func rfc5987Safe(c byte) bool {
	return alnum(c) || strings.IndexByte("!#$&+.^_`|~-", c) >= 0
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
