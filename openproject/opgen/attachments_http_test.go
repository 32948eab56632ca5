package opgen_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// fetch sends a GET with an API key, following redirects without the
// key (as a client of an instance with external storage must), and
// returns the status, the headers and the body.
func fetch(t *testing.T, url, key string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("apikey", key)
	c := &http.Client{CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		r.Header.Del("Authorization")
		return nil
	}}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

// TestGeneratedAttachmentsOverHTTP serves a generated data set with mixed
// permissions: every user sees an attachment exactly when they see its
// container, and the content served is the generated file, with the
// size and digest the metadata gives, from local or external storage.
func TestGeneratedAttachmentsOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	for _, external := range []bool{false, true} {
		t.Run("external="+strconv.FormatBool(external), func(t *testing.T) {
			o := mixedOpts
			o.ExternalAttachments = external
			d := opgen.Generate(o)
			srv, base := optesting.Start(t, d, optest.Options{})
			if len(d.Attachments) < 20 {
				t.Fatalf("%d attachments", len(d.Attachments))
			}
			keys := []string{optest.AdminKey, optest.AliceKey, optest.BobKey, opgen.CarolKey, opgen.DaveKey, opgen.ErinKey}
			if external {
				keys = keys[:1]
			}
			for _, key := range keys {
				hidden := 0
				for _, a := range d.Attachments {
					container, _, _ := fetch(t, base+a.Container.Href, key)
					meta, _, raw := fetch(t, fmt.Sprintf("%s/api/v3/attachments/%d", base, a.ID), key)
					if container != meta {
						t.Errorf("%s: container %s answers %d, attachment %d %d", key, a.Container.Href, container, a.ID, meta)
					}
					if meta != 200 {
						hidden++
						continue
					}
					// The administrator downloads every file (the 11 MB one
					// not in short mode).
					if key != optest.AdminKey || opgen.AttachmentKind(a) == opgen.FileOversized && (external || testing.Short()) {
						continue
					}
					var m struct {
						FileSize int64 `json:"fileSize"`
						Digest   struct {
							Hash string `json:"hash"`
						} `json:"digest"`
					}
					if err := json.Unmarshal(raw, &m); err != nil {
						t.Fatal(err)
					}
					status, h, body := fetch(t, fmt.Sprintf("%s/api/v3/attachments/%d/content", base, a.ID), key)
					sum := md5.Sum(body)
					if status != 200 || !bytes.Equal(body, a.Bytes()) || int64(len(body)) != m.FileSize || hex.EncodeToString(sum[:]) != m.Digest.Hash ||
						h.Get("Content-Type") != a.ContentType {
						t.Errorf("content of %d (%s): %d, %d bytes, metadata %+v, type %q", a.ID, a.FileName, status, len(body), m, h.Get("Content-Type"))
					}
				}
				if key == optest.AdminKey && hidden != 0 {
					t.Errorf("the administrator misses %d attachments", hidden)
				}
				if key == opgen.DaveKey && hidden == 0 {
					t.Error("dave sees every attachment")
				}
			}
			if external && srv.StorageRequests() == 0 {
				t.Error("nothing was downloaded from the storage")
			}
			// The client lists the attachments of a work package.
			c, err := openproject.New(openproject.Config{BaseURL: base, APIKey: optest.AdminKey})
			if err != nil {
				t.Fatal(err)
			}
			var wp int64
			for _, a := range d.Attachments {
				if a.Container.Href == "/api/v3/work_packages/"+strconv.FormatInt(a.Container.ID, 10) {
					wp = a.Container.ID
					break
				}
			}
			list, err := c.WorkPackageAttachments(context.Background(), wp)
			if err != nil || len(list) == 0 || list[0].Container.ID != wp || list[0].FileSize == 0 {
				t.Errorf("client list of work package %d = %+v, %v", wp, list, err)
			}
		})
	}
}
