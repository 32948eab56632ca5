package openproject_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/openproject"
)

// TestAttachmentContent: a file is downloaded from the instance or,
// through its redirect, from external storage on another origin, which
// never receives the key; a file over the limit is refused, read no
// further than the limit.
func TestAttachmentContent(t *testing.T) {
	const key = "content-test-key"
	file := []byte("%PDF-1.4 quarterly report\n")
	big := bytes.Repeat([]byte("x"), 4096)
	var storageAuth []string
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		storageAuth = append(storageAuth, r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") != "" {
			http.Error(w, "Only one auth mechanism allowed", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(file)
	}))
	defer storage.Close()
	var sent int
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "apikey" || p != key {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/api/v3/attachments/1/content":
			w.Header().Set("Content-Type", "application/pdf")
			_, _ = w.Write(file)
		case "/api/v3/attachments/2/content":
			http.Redirect(w, r, storage.URL+"/bucket/2/report.pdf?X-Amz-Signature=abc", http.StatusFound)
		case "/api/v3/attachments/3/content":
			w.Header().Set("Content-Type", "application/octet-stream")
			for range 64 { // 256 KB, in chunks
				n, err := w.Write(big)
				sent += n
				if err != nil {
					return
				}
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer api.Close()
	c, err := openproject.New(openproject.Config{BaseURL: api.URL, APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range []int64{1, 2} {
		data, ctype, err := c.AttachmentContent(ctx, id, 1<<20)
		if err != nil {
			t.Fatalf("attachment %d: %v", id, err)
		}
		if !bytes.Equal(data, file) || ctype != "application/pdf" {
			t.Errorf("attachment %d: got %q (%s), want the file", id, data, ctype)
		}
	}
	if len(storageAuth) != 1 || storageAuth[0] != "" {
		t.Errorf("external storage saw Authorization %q, want none", storageAuth)
	}
	_, _, err = c.AttachmentContent(ctx, 3, 10_000)
	if !errors.Is(err, openproject.ErrTooLarge) {
		t.Errorf("over the limit: err = %v, want ErrTooLarge", err)
	}
	if err != nil && strings.Contains(err.Error(), key) {
		t.Errorf("error holds the key: %v", err)
	}
	_, _, err = c.AttachmentContent(ctx, 4, 100)
	if !errors.Is(err, openproject.ErrNotFound) {
		t.Errorf("missing: err = %v, want ErrNotFound", err)
	}
	for _, bad := range []struct{ id, max int64 }{{0, 10}, {1, 0}} {
		if _, _, err := c.AttachmentContent(ctx, bad.id, bad.max); err == nil {
			t.Errorf("id %d max %d: no error", bad.id, bad.max)
		}
	}
}

// TestAttachmentDigest: the digest decodes from the object the code
// renders and from the string the spec describes.
func TestAttachmentDigest(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/hal+json")
		switch r.URL.Path {
		case "/api/v3/attachments/1":
			_, _ = w.Write([]byte(`{"_type":"Attachment","id":1,"fileName":"a.txt","fileSize":3,"digest":{"algorithm":"md5","hash":"abc"},"_links":{"container":{"href":"/api/v3/meetings/4","title":"Weekly"}}}`))
		case "/api/v3/attachments/2":
			_, _ = w.Write([]byte(`{"_type":"Attachment","id":2,"fileName":"b.txt","filesize":5,"digest":"md5:def","_links":{"container":{"href":"/api/v3/work_packages/9"}}}`))
		}
	}))
	defer api.Close()
	c, err := openproject.New(openproject.Config{BaseURL: api.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int64]string{1: "md5:abc", 2: "md5:def"} {
		a, err := c.Attachment(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if a.Digest != want || a.FileSize == 0 || a.Container.ID == 0 {
			t.Errorf("attachment %d: %+v, want digest %s", id, a, want)
		}
	}
}
