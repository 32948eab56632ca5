package optest

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// srvAttachmentsIn are the attachments of srvDataset by container.
var srvAttachmentsIn = map[string][]int64{
	"/api/v3/work_packages/1": {2, 5},
	"/api/v3/work_packages/4": {3},
	"/api/v3/work_packages/2": {},
	"/api/v3/wiki_pages/1":    {1},
	"/api/v3/wiki_pages/2":    {},
	"/api/v3/meetings/1":      {4},
	"/api/v3/meetings/2":      {6},
}

// TestAttachmentVisibility checks, for users of permDataset with
// different permissions, that an attachment is visible exactly when its
// container is: its metadata, its content and its container's list.
func TestAttachmentVisibility(t *testing.T) {
	_, base := Start(t, permDataset(), Options{Now: func() time.Time { return srvClock }})
	tests := []struct {
		key        string
		containers []string // visible; the other containers answer 404
	}{
		{AdminKey, []string{"/api/v3/work_packages/1", "/api/v3/work_packages/2", "/api/v3/work_packages/4", "/api/v3/wiki_pages/1", "/api/v3/wiki_pages/2", "/api/v3/meetings/1", "/api/v3/meetings/2"}},
		{AliceKey, []string{"/api/v3/work_packages/1", "/api/v3/work_packages/2", "/api/v3/wiki_pages/1", "/api/v3/meetings/1"}},
		// bob: a non-member of demo, whose Non member role shows work
		// packages only; everything of bob-private.
		{BobKey, []string{"/api/v3/work_packages/1", "/api/v3/work_packages/2", "/api/v3/work_packages/4", "/api/v3/wiki_pages/2", "/api/v3/meetings/2"}},
		{srvCarolKey, []string{"/api/v3/work_packages/1", "/api/v3/work_packages/2"}},
		// dave reads only demo's wiki.
		{permDaveKey, []string{"/api/v3/wiki_pages/1"}},
		// erin: work package 4 is shared with her, not the rest of
		// bob-private.
		{permErinKey, []string{"/api/v3/work_packages/1", "/api/v3/work_packages/2", "/api/v3/work_packages/4"}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			for c, atts := range srvAttachmentsIn {
				visible := slices.Contains(tt.containers, c)
				r := srvGet(t, base, c+"/attachments", tt.key)
				switch {
				case visible:
					if r.status != 200 || r.body["_type"] != "Collection" || !slices.Equal(elementIDs(r.body), atts) ||
						jnum(r.body["total"]) != len(atts) || r.body["pageSize"] != nil || jget(r.body, "_links", "self", "href") != c+"/attachments" {
						t.Errorf("%s/attachments = %d %s, want %v", c, r.status, r.raw, atts)
					}
				case strings.Contains(c, "work_packages"):
					wantError(t, r, 404, "NotFound", msgWPNotFound)
				default:
					wantError(t, r, 404, "NotFound", msgNotFound)
				}
				for _, id := range atts {
					for _, suffix := range []string{"", "/content"} {
						// Without following the redirect of external files.
						res, raw := download(t, fmt.Sprintf("%s/api/v3/attachments/%d%s", base, id, suffix), tt.key, nil)
						r := srvResp{status: res.StatusCode, header: res.Header, raw: raw}
						if !visible {
							_ = json.Unmarshal(raw, &r.body)
							wantError(t, r, 404, "NotFound", msgAttachmentNotFound)
							continue
						}
						if r.status != 200 && r.status != 302 {
							t.Errorf("attachment %d%s = %d %s", id, suffix, r.status, r.raw)
						}
					}
				}
			}
		})
	}
	for _, path := range []string{"/api/v3/attachments/99", "/api/v3/attachments/abc", "/api/v3/attachments/99/content", "/api/v3/attachments/0/content"} {
		wantError(t, srvGet(t, base, path, AdminKey), 404, "NotFound", msgAttachmentNotFound)
	}
	// Without credentials: 401, as everywhere.
	if r := srvDo(t, http.MethodGet, base+"/api/v3/attachments/2/content", "", nil); r.status != 401 {
		t.Errorf("anonymous content = %d", r.status)
	}
}

// TestAttachmentRepresentation checks the metadata against the real
// AttachmentRepresenter, through the client where it has a method.
func TestAttachmentRepresentation(t *testing.T) {
	_, base := srvStart(t, Options{})
	sum := md5.Sum([]byte(srvCatPNG))
	tests := []struct {
		id   int64
		key  string
		path string // dot-separated
		want any
	}{
		{2, AliceKey, "_type", "Attachment"},
		{2, AliceKey, "id", float64(2)},
		{2, AliceKey, "fileName", "cat.png"},
		{2, AliceKey, "fileSize", float64(len(srvCatPNG))},
		{2, AliceKey, "contentType", "image/png"},
		{2, AliceKey, "createdAt", "2024-01-06T00:00:00.000Z"},
		{2, AliceKey, "updatedAt", nil},
		{2, AliceKey, "description.format", "plain"},
		{2, AliceKey, "description.raw", "A picture of a cute cat"},
		{2, AliceKey, "description.html", "<p>A picture of a cute cat</p>"},
		{2, AliceKey, "digest.algorithm", "md5"},
		{2, AliceKey, "digest.hash", hex.EncodeToString(sum[:])},
		{2, AliceKey, "_links.self.href", "/api/v3/attachments/2"},
		{2, AliceKey, "_links.self.title", "cat.png"},
		{2, AliceKey, "_links.container.href", "/api/v3/work_packages/1"},
		{2, AliceKey, "_links.container.title", "Login page broken"},
		{2, AliceKey, "_links.author.href", "/api/v3/users/2"},
		{2, AliceKey, "_links.author.title", "Alice Doe"},
		{2, AliceKey, "_links.staticDownloadLocation.href", "/api/v3/attachments/2/content"},
		{2, AliceKey, "_links.downloadLocation.href", "/api/v3/attachments/2/content"},
		{2, AliceKey, "_links.delete.href", "/api/v3/attachments/2"},
		{2, AliceKey, "_links.delete.method", "delete"},
		// carol sees work package 1 but may not edit it.
		{2, srvCarolKey, "_links.delete", nil},
		// bob may delete what he wrote.
		{3, BobKey, "_links.delete.href", "/api/v3/attachments/3"},
		{3, BobKey, "_links.container.title", "Bob secret plan"},
		{3, BobKey, "description.raw", ""},
		{3, BobKey, "description.html", ""},
		{4, AliceKey, "_links.container.href", "/api/v3/meetings/1"},
		{4, AliceKey, "_links.container.title", "Weekly sync"},
		{4, AliceKey, "contentType", "text/markdown"},
		{4, AliceKey, "fileSize", float64(len("# Weekly sync\n\nWe fixed the *login*.\n"))},
		// The inline attachment of a wiki page: the declared size, the
		// digest of no content.
		{1, AliceKey, "_links.container.href", "/api/v3/wiki_pages/1"},
		{1, AliceKey, "_links.container.title", "Getting Started"},
		{1, AliceKey, "fileSize", float64(2048)},
		{1, AliceKey, "digest.hash", "d41d8cd98f00b204e9800998ecf8427e"},
		{1, AliceKey, "_links.downloadLocation.href", "/api/v3/attachments/1/content"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%s/%s", tt.id, tt.key, tt.path), func(t *testing.T) {
			r := srvGet(t, base, fmt.Sprintf("/api/v3/attachments/%d", tt.id), tt.key)
			var keys []any
			for _, k := range strings.Split(tt.path, ".") {
				keys = append(keys, k)
			}
			if got := jget(r.body, keys...); got != tt.want {
				t.Errorf("= %v, want %v (%s)", got, tt.want, r.raw)
			}
		})
	}

	// The client reads the lists of work packages and wiki pages.
	c, err := openproject.New(openproject.Config{BaseURL: base, APIKey: AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	wpAtts, err := c.WorkPackageAttachments(ctx, 1)
	if err != nil || len(wpAtts) != 2 || wpAtts[0].FileName != "cat.png" || wpAtts[0].FileSize != int64(len(srvCatPNG)) ||
		wpAtts[0].Container.ID != 1 || wpAtts[0].Author.ID != 2 || wpAtts[0].DownloadURL != "/api/v3/attachments/2/content" {
		t.Errorf("client work package attachments = %+v, %v", wpAtts, err)
	}
	// The external file's download location is the storage's URL.
	if len(wpAtts) == 2 && !strings.HasPrefix(wpAtts[1].DownloadURL, "http://127.0.0.1:") {
		t.Errorf("external download location = %q", wpAtts[1].DownloadURL)
	}
	wikiAtts, err := c.WikiPageAttachments(ctx, 1)
	if err != nil || len(wikiAtts) != 1 || wikiAtts[0].ID != 1 || wikiAtts[0].Container.ID != 1 {
		t.Errorf("client wiki attachments = %+v, %v", wikiAtts, err)
	}
	one, err := c.Attachment(ctx, 4)
	if err != nil || one.FileName != "minutes.md" || one.Container.Href != "/api/v3/meetings/1" {
		t.Errorf("client attachment = %+v, %v", one, err)
	}
	if _, err := c.Attachment(ctx, 3); !errors.Is(err, openproject.ErrNotFound) {
		t.Errorf("client attachment of a hidden work package: %v", err)
	}
	// A meeting embeds its attachments, as the real representer does.
	r := srvGet(t, base, "/api/v3/meetings/1")
	if ids := elementIDs(jget(r.body, "_embedded", "attachments").(map[string]any)); !slices.Equal(ids, []int64{4}) {
		t.Errorf("meeting's embedded attachments = %v", ids)
	}
}

// download sends a GET as key without following redirects.
func download(t *testing.T, rawURL, key string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.SetBasicAuth("apikey", key)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

func TestAttachmentContent(t *testing.T) {
	s, base := srvStart(t, Options{})
	tests := []struct {
		name        string
		id          int64
		header      map[string]string
		body        string
		contentType string
		disposition string
	}{
		{"binary", 2, nil, srvCatPNG, "image/png", `attachment; filename="cat.png"; filename*=UTF-8''cat.png`},
		// Files are never gzipped, whatever the client accepts.
		{"gzip accepted", 4, map[string]string{"Accept-Encoding": "gzip"}, "# Weekly sync\n\nWe fixed the *login*.\n", "text/markdown", `attachment; filename="minutes.md"; filename*=UTF-8''minutes.md`},
		// The inline attachments of older data sets have no content.
		{"metadata only", 1, nil, "", "application/pdf", `attachment; filename="guide.pdf"; filename*=UTF-8''guide.pdf`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := fmt.Sprintf("/api/v3/attachments/%d/content", tt.id)
			before := s.RequestCount(path)
			res, body := download(t, base+path, AliceKey, tt.header)
			if res.StatusCode != 200 || string(body) != tt.body {
				t.Fatalf("content = %d %q, want %q", res.StatusCode, body, tt.body)
			}
			h := res.Header
			if h.Get("Content-Type") != tt.contentType || h.Get("Content-Disposition") != tt.disposition ||
				h.Get("Content-Length") != strconv.Itoa(len(tt.body)) || h.Get("Content-Encoding") != "" {
				t.Errorf("headers = %v", h)
			}
			if got := s.RequestCount(path) - before; got != 1 {
				t.Errorf("RequestCount(%s) grew by %d", path, got)
			}
		})
	}
	// HEAD: the headers without the body.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodHead, base+"/api/v3/attachments/2/content", nil)
	req.SetBasicAuth("apikey", AliceKey)
	if r := srvSend(t, req); r.status != 200 || len(r.raw) != 0 || r.header.Get("Content-Length") != strconv.Itoa(len(srvCatPNG)) {
		t.Errorf("HEAD = %d %q %v", r.status, r.raw, r.header)
	}
	// Faults apply to downloads as to any request.
	s.SetFaults(Faults{PathPrefix: "/api/v3/attachments/2/content", FailNext: 1})
	if res, _ := download(t, base+"/api/v3/attachments/2/content", AliceKey, nil); res.StatusCode != 503 {
		t.Errorf("faulted download = %d", res.StatusCode)
	}
}

func TestContentDisposition(t *testing.T) {
	tests := []struct{ name, want string }{
		{"cat.png", `attachment; filename="cat.png"; filename*=UTF-8''cat.png`},
		{`export 2024 "final".csv`, `attachment; filename="export 2024 %22final%22.csv"; filename*=UTF-8''export%202024%20%22final%22.csv`},
		{"Übersicht ä.pdf", `attachment; filename="%3Fbersicht %3F.pdf"; filename*=UTF-8''%C3%9Cbersicht%20%C3%A4.pdf`},
		{`a;b,c\d.txt`, `attachment; filename="a%3Bb%2Cc%5Cd.txt"; filename*=UTF-8''a%3Bb%2Cc%5Cd.txt`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := contentDisposition("attachment", tt.name)
			if got != tt.want {
				t.Errorf("= %s\nwant %s", got, tt.want)
			}
			// What a client parses back is the exact name.
			if _, params, err := mime.ParseMediaType(got); err != nil || params["filename"] != tt.name {
				t.Errorf("parsed back: %v, %v", params, err)
			}
		})
	}
}

// TestAttachmentExternal follows the redirect of an External attachment
// to the storage listener: with the API's credentials the storage
// refuses, without them it serves the file; a changed or expired
// signature is refused.
func TestAttachmentExternal(t *testing.T) {
	s, base := srvStart(t, Options{})
	const path = "/api/v3/attachments/5/content"
	const want = "id,subject\n1,Login page broken\n"
	res, body := download(t, base+path, AliceKey, nil)
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusFound || !strings.Contains(string(body), loc) {
		t.Fatalf("redirect = %d %q %s", res.StatusCode, loc, body)
	}
	u, err := url.Parse(loc)
	api, _ := url.Parse(base)
	if err != nil || u.Hostname() != "127.0.0.1" || u.Host == api.Host || u.Query().Get("X-Amz-Expires") != "300" || u.Query().Get("X-Amz-Signature") == "" ||
		!strings.HasPrefix(u.Path, "/opsearch-attachments/attachments/5/") {
		t.Fatalf("presigned URL = %s", loc)
	}
	if s.RequestCount(path) != 1 {
		t.Errorf("RequestCount(%s) = %d", path, s.RequestCount(path))
	}

	tests := []struct {
		name   string
		url    string
		header map[string]string
		status int
		code   string // S3 error code
	}{
		{"presigned", loc, nil, 200, ""},
		{"with the API's credentials", loc, map[string]string{"Authorization": "Basic YXBpa2V5Om9wc2VhcmNoLWFsaWNl"}, 400, "InvalidArgument"},
		{"signature changed", strings.Replace(loc, "X-Amz-Signature=", "X-Amz-Signature=00", 1), nil, 403, "SignatureDoesNotMatch"},
		{"unsigned", u.Scheme + "://" + u.Host + u.Path, nil, 403, "SignatureDoesNotMatch"},
		{"other file", strings.Replace(loc, "/attachments/5/", "/attachments/2/", 1), nil, 403, "SignatureDoesNotMatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := download(t, tt.url, "", tt.header)
			if res.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d: %s", res.StatusCode, tt.status, body)
			}
			if tt.code != "" {
				if res.Header.Get("Content-Type") != "application/xml" || !strings.Contains(string(body), "<Code>"+tt.code+"</Code>") {
					t.Errorf("error = %s", body)
				}
				return
			}
			if string(body) != want || res.Header.Get("Content-Type") != "text/csv" || res.Header.Get("ETag") == "" ||
				res.Header.Get("Content-Disposition") != contentDisposition("attachment", `export 2024 "final".csv`) {
				t.Errorf("storage = %q %v", body, res.Header)
			}
		})
	}
	if n := s.StorageRequests(); n != len(tests) {
		t.Errorf("StorageRequests = %d, want %d", n, len(tests))
	}

	// A client that follows the redirect and drops the API's credentials
	// gets the file. Go's own client keeps them (same host name), and the
	// storage refuses.
	for _, tt := range []struct {
		name   string
		check  func(*http.Request, []*http.Request) error
		status int
	}{
		{"drops Authorization", func(r *http.Request, _ []*http.Request) error { r.Header.Del("Authorization"); return nil }, 200},
		{"Go's default", nil, 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
			req.SetBasicAuth("apikey", AliceKey)
			res, err := (&http.Client{CheckRedirect: tt.check}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != tt.status || (tt.status == 200 && string(b) != want) {
				t.Errorf("followed = %d %q", res.StatusCode, b)
			}
		})
	}

	// An expired URL is refused.
	s.SetClock(func() time.Time { return srvClock.Add(presignExpiry + time.Second) })
	if res, body := download(t, loc, "", nil); res.StatusCode != 403 || !strings.Contains(string(body), "<Code>AccessDenied</Code>") {
		t.Errorf("expired = %d %s", res.StatusCode, body)
	}
	// A deleted file is gone from the storage too.
	s.SetClock(func() time.Time { return srvClock })
	if err := s.DeleteAttachment(5); err != nil {
		t.Fatal(err)
	}
	if res, body := download(t, loc, "", nil); res.StatusCode != 404 || !strings.Contains(string(body), "NoSuchKey") {
		t.Errorf("deleted = %d %s", res.StatusCode, body)
	}
}

// TestStorageLifecycle checks that the storage starts on demand, names
// the configured host, and stops with the server.
func TestStorageLifecycle(t *testing.T) {
	s := NewServer(srvDataset(), Options{StorageAddr: "localhost:0"})
	s.st.mu.RLock()
	a := s.st.atts[5]
	s.st.mu.RUnlock()
	if s.storage.ln != nil {
		t.Fatal("storage listens before it is needed")
	}
	loc, err := s.storage.presign(a, "", s.clock())
	if err != nil || !strings.HasPrefix(loc, "http://localhost:") {
		t.Fatalf("presign = %q, %v", loc, err)
	}
	res, err := http.Get(loc)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("storage = %d", res.StatusCode)
	}
	s.Close()
	s.Close() // idempotent
	if _, err := http.Get(loc); err == nil {
		t.Error("storage still answers after Close")
	}
	if _, err := s.storage.presign(a, "", s.clock()); !errors.Is(err, errStorageClosed) {
		t.Errorf("presign after Close: %v", err)
	}
	// The API then answers the external file's content with 500.
	rec := newRecorder()
	req, _ := http.NewRequest(http.MethodGet, "/api/v3/attachments/5/content", nil)
	req.SetBasicAuth("apikey", AdminKey)
	s.ServeHTTP(rec, req)
	if rec.status != 500 {
		t.Errorf("content after Close = %d", rec.status)
	}
}

func TestAttachmentMutations(t *testing.T) {
	s, base := srvStart(t, Options{})
	later := srvClock.Add(time.Hour)
	s.SetClock(func() time.Time { return later })
	const laterJSON = "2025-01-15T13:00:00.000Z"
	tests := []struct {
		name      string
		container string
		lock      string // the container's lockVersion property, "" when none
	}{
		{"work package", "/api/v3/work_packages/2", "lockVersion"},
		{"wiki page", "/api/v3/wiki_pages/2", "lockVersion"},
		{"meeting", "/api/v3/meetings/3", "lockVersion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := srvGet(t, base, tt.container, AdminKey)
			a, err := s.AddAttachment(Attachment{Attachment: openproject.Attachment{FileName: "n.txt", ContentType: "text/plain",
				Container: openproject.Ref{Href: tt.container}, Author: openproject.Ref{ID: 1}}, Content: []byte("hello " + tt.name)})
			if err != nil || a.ID <= 6 || a.FileSize != int64(len("hello "+tt.name)) || !a.CreatedAt.Equal(later) {
				t.Fatalf("add = %+v, %v", a, err)
			}
			after := srvGet(t, base, tt.container, AdminKey)
			if after.body["updatedAt"] != laterJSON || after.body[tt.lock] != before.body[tt.lock] {
				t.Errorf("container after add: updatedAt %v (was %v), %s %v (was %v)", after.body["updatedAt"], before.body["updatedAt"],
					tt.lock, after.body[tt.lock], before.body[tt.lock])
			}
			r := srvGet(t, base, tt.container+"/attachments", AdminKey)
			if !slices.Contains(elementIDs(r.body), a.ID) {
				t.Errorf("list after add = %v", elementIDs(r.body))
			}
			content := fmt.Sprintf("/api/v3/attachments/%d/content", a.ID)
			if res, body := download(t, base+content, AdminKey, nil); res.StatusCode != 200 || string(body) != "hello "+tt.name {
				t.Errorf("content = %d %q", res.StatusCode, body)
			}

			if err := s.DeleteAttachment(a.ID); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteAttachment(a.ID); !errors.Is(err, ErrUnknownEntity) {
				t.Errorf("second delete: %v", err)
			}
			r = srvGet(t, base, tt.container+"/attachments", AdminKey)
			if slices.Contains(elementIDs(r.body), a.ID) {
				t.Errorf("list after delete = %v", elementIDs(r.body))
			}
			wantError(t, srvGet(t, base, fmt.Sprintf("/api/v3/attachments/%d", a.ID), AdminKey), 404, "NotFound", msgAttachmentNotFound)
			wantError(t, srvGet(t, base, content, AdminKey), 404, "NotFound", msgAttachmentNotFound)
		})
	}

	// Bad input.
	for _, tt := range []struct {
		name string
		a    Attachment
	}{
		{"no container", Attachment{}},
		{"unknown container", Attachment{Attachment: openproject.Attachment{Container: openproject.Ref{Href: "/api/v3/work_packages/999"}}}},
		{"not a container", Attachment{Attachment: openproject.Attachment{Container: openproject.Ref{Href: "/api/v3/projects/1"}}}},
		{"id disagrees", Attachment{Attachment: openproject.Attachment{Container: openproject.Ref{ID: 2, Href: "/api/v3/work_packages/1"}}}},
		{"id taken", Attachment{Attachment: openproject.Attachment{ID: 2, Container: openproject.Ref{Href: "/api/v3/work_packages/1"}}}},
	} {
		if _, err := s.AddAttachment(tt.a); !errors.Is(err, ErrInvalidEntity) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}

	// Deleting a container deletes its attachments.
	for _, tt := range []struct {
		del  func() error
		gone []int64
	}{
		{func() error { return s.DeleteWorkPackage(1) }, []int64{2, 5}},
		{func() error { return s.DeleteWikiPage(1) }, []int64{1}},
		{func() error { return s.DeleteMeeting(1) }, []int64{4}},
	} {
		if err := tt.del(); err != nil {
			t.Fatal(err)
		}
		for _, id := range tt.gone {
			wantError(t, srvGet(t, base, fmt.Sprintf("/api/v3/attachments/%d", id), AdminKey), 404, "NotFound", msgAttachmentNotFound)
		}
	}
	d := s.Dataset()
	var left []int64
	for _, a := range d.Attachments {
		left = append(left, a.ID)
	}
	if !slices.Equal(left, []int64{3, 6}) {
		t.Errorf("attachments left = %v", left)
	}
}

// TestAttachmentHTTPDelete deletes through the API: the author or an
// editor of the container may, others get 403.
func TestAttachmentHTTPDelete(t *testing.T) {
	s, base := srvStart(t, Options{})
	tests := []struct {
		key    string
		id     int64
		status int
	}{
		{srvCarolKey, 2, 403}, // sees work package 1, may not edit there
		{AliceKey, 3, 404},    // cannot see work package 4
		{AliceKey, 2, 204},    // a member of demo
		{BobKey, 3, 204},      // the author
		{AliceKey, 2, 404},    // already gone
	}
	for _, tt := range tests {
		r := srvDo(t, http.MethodDelete, fmt.Sprintf("%s/api/v3/attachments/%d", base, tt.id), tt.key, nil)
		if r.status != tt.status {
			t.Errorf("DELETE %d as %s = %d, want %d: %s", tt.id, tt.key, r.status, tt.status, r.raw)
		}
	}
	if got := s.RequestCount("DELETE /api/v3/attachments/2"); got != 3 {
		t.Errorf("RequestCount = %d", got)
	}
}

func TestDatasetAttachments(t *testing.T) {
	d := srvDataset()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	// The snapshot holds every attachment once, the inline one of the
	// wiki page folded in.
	snap := NewServer(d, Options{}).Dataset()
	var ids []int64
	for _, a := range snap.Attachments {
		ids = append(ids, a.ID)
	}
	if !slices.Equal(ids, []int64{1, 2, 3, 4, 5, 6}) || len(snap.WikiPages[0].Attachments) != 0 ||
		snap.Attachments[0].Container.Href != "/api/v3/wiki_pages/1" || snap.Attachments[0].FileSize != 2048 {
		t.Errorf("snapshot attachments = %v, wiki inline %d, first %+v", ids, len(snap.WikiPages[0].Attachments), snap.Attachments[0])
	}
	if err := snap.Validate(); err != nil {
		t.Errorf("snapshot: %v", err)
	}
	tests := []struct {
		name   string
		change func(d *Dataset)
		want   string
	}{
		{"duplicate id", func(d *Dataset) { d.Attachments[1].ID = 2 }, "attachment id 2 is missing or duplicated"},
		{"clash with inline", func(d *Dataset) { d.Attachments[0].ID = 1 }, "attachment id 1 (wiki page 1) is missing or duplicated"},
		{"unknown container", func(d *Dataset) { d.Attachments[0].Container = openproject.Ref{Href: "/api/v3/meetings/9"} }, "unknown container /api/v3/meetings/9"},
		{"not a container", func(d *Dataset) { d.Attachments[0].Container = openproject.Ref{Href: "/api/v3/users/1"} }, "is not a work package, wiki page or meeting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := srvDataset()
			tt.change(d)
			if err := d.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestAttachmentSource checks content made on demand: served, digested
// and encoded as if it were Content.
func TestAttachmentSource(t *testing.T) {
	d := srvDataset()
	var calls atomic.Int32
	d.Attachments = append(d.Attachments, Attachment{
		Attachment: openproject.Attachment{ID: 7, FileName: "made.txt", ContentType: "text/plain", Container: openproject.Ref{Href: "/api/v3/work_packages/2"}},
		Source:     func() []byte { calls.Add(1); return []byte("made on demand") },
	})
	s, base := Start(t, d, Options{})
	r := srvGet(t, base, "/api/v3/attachments/7")
	sum := md5.Sum([]byte("made on demand"))
	if jnum(r.body["fileSize"]) != len("made on demand") || jget(r.body, "digest", "hash") != hex.EncodeToString(sum[:]) {
		t.Errorf("metadata = %s", r.raw)
	}
	srvGet(t, base, "/api/v3/work_packages/2/attachments")
	if n := calls.Load(); n != 1 {
		t.Errorf("digest made the content %d times", n)
	}
	if res, body := download(t, base+"/api/v3/attachments/7/content", AliceKey, nil); string(body) != "made on demand" || res.Header.Get("Content-Length") != "14" {
		t.Errorf("content = %q %v", body, res.Header)
	}
	// Encoding leaves the Source out; SaveDataset writes its content.
	snap := s.Dataset()
	if b, err := json.Marshal(snap.Attachments[len(snap.Attachments)-1]); err != nil || strings.Contains(string(b), `"content"`) {
		t.Errorf("encoded = %s, %v", b, err)
	}
	path := filepath.Join(t.TempDir(), "data.json")
	if err := SaveDataset(path, snap); err != nil {
		t.Fatal(err)
	}
	back, err := LoadDataset(path)
	if err != nil {
		t.Fatal(err)
	}
	a := back.Attachments[len(back.Attachments)-1]
	if string(a.Content) != "made on demand" || a.FileSize != 14 || a.Source != nil {
		t.Errorf("loaded = %+v", a)
	}
	if snap.Attachments[len(snap.Attachments)-1].Content != nil {
		t.Error("SaveDataset changed the data set it saved")
	}
}
