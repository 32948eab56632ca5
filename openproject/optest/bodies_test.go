package optest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestBodyBuffers: a buffer given back is lent again, emptied, to an
// answer it can hold without growing; a small one is never handed to a
// big answer (nor lost for small ones), and an oversized one is not kept.
func TestBodyBuffers(t *testing.T) {
	sized := func(n int) *[]byte { b := make([]byte, 3, n); return &b }
	tests := []struct {
		name string
		put  []*[]byte
		hint int
		// want is the index in put of the buffer get returns, -1 for a
		// new one.
		want int
		// kept are the indexes in put that must still be free after get.
		kept []int
	}{
		{"reused", []*[]byte{sized(4096)}, 1000, 0, nil},
		{"none free", nil, 1000, -1, nil},
		{"small not grown into a big answer", []*[]byte{sized(4096)}, 1 << 20, -1, []int{0}},
		{"the big one that fits", []*[]byte{sized(bigBody), sized(2 << 20)}, 1 << 20, 1, []int{0}},
		{"oversized dropped", []*[]byte{sized(maxKeptBody + 1)}, bigBody, -1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBodyBuffers()
			for _, p := range tt.put {
				b.put(p)
			}
			got := b.get(tt.hint)
			if len(*got) != 0 || cap(*got) < tt.hint {
				t.Errorf("get(%d) = len %d cap %d, want empty with room for the hint", tt.hint, len(*got), cap(*got))
			}
			for i, p := range tt.put {
				if (p == got) != (i == tt.want) {
					t.Errorf("get returned put[%d]: %v, want %v", i, p == got, i == tt.want)
				}
			}
			free := map[*[]byte]bool{}
			for _, list := range []chan *[]byte{b.small, b.big} {
				for len(list) > 0 {
					free[<-list] = true
				}
			}
			for _, i := range tt.kept {
				if !free[tt.put[i]] {
					t.Errorf("put[%d] (cap %d) is no longer free", i, cap(*tt.put[i]))
				}
			}
		})
	}
}

// TestBodyHintPerRoute: the hint for an endpoint is the size of its last
// answer, so the next page of a listing gets a buffer it fits in.
func TestBodyHintPerRoute(t *testing.T) {
	b := newBodyBuffers()
	if h := b.hint("GET /api/v3/work_packages"); h != 0 {
		t.Fatalf("hint before any answer = %d, want 0", h)
	}
	b.rendered("GET /api/v3/work_packages", 7<<20)
	b.rendered("GET /api/v3/work_packages/{id}/activities", 2400)
	if h := b.hint("GET /api/v3/work_packages"); h != 7<<20 {
		t.Errorf("listing hint = %d, want %d", h, 7<<20)
	}
	if h := b.hint("GET /api/v3/work_packages/{id}/activities"); h != 2400 {
		t.Errorf("activities hint = %d, want 2400", h)
	}
}

// TestConcurrentAnswersKeepTheirBodies: answers waiting out the latency
// hold their buffers; a buffer lent to another answer before its own was
// written would mix their bytes. Many concurrent answers over HTTP, gzip
// included, must equal the same answers fetched one at a time.
func TestConcurrentAnswersKeepTheirBodies(t *testing.T) {
	s := NewServer(srvDataset(), Options{Latency: 3 * time.Millisecond, Now: func() time.Time { return srvClock }})
	defer s.Close()
	srv := httptest.NewServer(s)
	defer srv.Close()
	var paths []string
	for off := 1; off <= 12; off++ {
		paths = append(paths, fmt.Sprintf("/api/v3/work_packages?pageSize=%d&offset=%d&filters=%%5B%%5D", 1+off%4, off))
	}
	for id := 10; id < 40; id++ {
		paths = append(paths, fmt.Sprintf("/api/v3/work_packages/%d", id), fmt.Sprintf("/api/v3/work_packages/%d/activities", id))
	}
	get := func(path string) (string, error) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if err != nil {
			return "", err
		}
		req.SetBasicAuth("apikey", AdminKey)
		resp, err := srv.Client().Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%s: status %d: %s", path, resp.StatusCode, body)
		}
		return string(body), err
	}
	alone := map[string]string{}
	compressed := 0
	for _, p := range paths {
		body, err := get(p)
		if err != nil {
			t.Fatal(err)
		}
		alone[p] = body
		if len(body) >= gzipMinSize {
			compressed++
		}
	}
	if compressed < len(paths)/2 {
		t.Fatalf("only %d of %d answers are large enough to be compressed", compressed, len(paths))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(paths))
	for range 4 {
		for _, p := range paths {
			wg.Go(func() {
				body, err := get(p)
				if err == nil && body != alone[p] {
					err = fmt.Errorf("%s: concurrent answer differs from the one fetched alone", p)
				}
				if err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
