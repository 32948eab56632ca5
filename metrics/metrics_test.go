package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/metrics"
	"github.com/opsearch/opsearch/sync"
)

// scrape fetches the metrics over HTTP as Prometheus would.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("scrape: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return string(body)
}

// wantSample asserts that the exposition has a sample line with exactly
// this name+labels and value.
func wantSample(t *testing.T, text, series string, value float64) {
	t.Helper()
	want := fmt.Sprintf("%s %v", series, value)
	for line := range strings.SplitSeq(text, "\n") {
		if line == want {
			return
		}
		if strings.HasPrefix(line, series+" ") {
			t.Errorf("got %q, want %q", line, want)
			return
		}
	}
	t.Errorf("no sample %q in:\n%s", want, grepOpsearch(text))
}

func grepOpsearch(text string) string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(line, "opsearch_") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func TestMetricsScrape(t *testing.T) {
	m := metrics.New()

	m.ObserveSync(sync.Report{Duration: 2 * time.Second, Kinds: map[kind.Kind]*sync.KindReport{
		kind.WorkPackage: {Fetched: 10},
		kind.WikiPage:    {Err: errors.New("boom")},
		kind.Meeting:     {Unsupported: true},
	}}, errors.New("wiki_page: boom"))
	m.ObserveSync(sync.Report{Duration: time.Second, Kinds: map[kind.Kind]*sync.KindReport{
		kind.WorkPackage: {},
		kind.Project:     {Err: fmt.Errorf("stopped: %w", context.Canceled)},
	}}, nil)
	m.ObserveSync(sync.Report{}, errors.New("identity check failed"))
	m.ObserveSync(sync.Report{}, nil) // nothing ran, nothing failed: not counted

	m.ObserveSearch(3*time.Millisecond, "openproject_search")
	m.ObserveSearch(40*time.Millisecond, "openproject_search")
	m.ObserveSearch(time.Millisecond, "openproject_search_meetings")

	m.SetDocuments("1", "work_package", 100)
	m.SetDocuments("2", "work_package", 50)
	m.SetDocuments("2", "work_package", 60) // replaces user 2's count
	m.SetDocuments("2", "meeting", 7)
	m.SetActiveUsers(2)

	text := scrape(t, m)
	wantSample(t, text, `opsearch_syncs_total{kind="work_package",outcome="ok"}`, 2)
	wantSample(t, text, `opsearch_syncs_total{kind="wiki_page",outcome="error"}`, 1)
	wantSample(t, text, `opsearch_syncs_total{kind="meeting",outcome="unsupported"}`, 1)
	wantSample(t, text, `opsearch_syncs_total{kind="project",outcome="canceled"}`, 1)
	wantSample(t, text, `opsearch_syncs_total{kind="all",outcome="error"}`, 1)
	wantSample(t, text, `opsearch_sync_duration_seconds_count`, 2)
	wantSample(t, text, `opsearch_sync_duration_seconds_sum`, 3)
	wantSample(t, text, `opsearch_search_duration_seconds_count{tool="openproject_search"}`, 2)
	wantSample(t, text, `opsearch_search_duration_seconds_bucket{tool="openproject_search",le="0.005"}`, 1)
	wantSample(t, text, `opsearch_search_duration_seconds_bucket{tool="openproject_search",le="0.05"}`, 2)
	wantSample(t, text, `opsearch_search_duration_seconds_count{tool="openproject_search_meetings"}`, 1)
	wantSample(t, text, `opsearch_documents{kind="work_package"}`, 160)
	wantSample(t, text, `opsearch_documents{kind="meeting"}`, 7)
	wantSample(t, text, `opsearch_active_users`, 2)
	if !strings.Contains(text, "go_goroutines ") {
		t.Error("the Go runtime collector is missing")
	}

	m.ForgetUser("1")
	text = scrape(t, m)
	wantSample(t, text, `opsearch_documents{kind="work_package"}`, 60)
	m.ForgetUser("2")
	text = scrape(t, m)
	wantSample(t, text, `opsearch_documents{kind="work_package"}`, 0)
	wantSample(t, text, `opsearch_documents{kind="meeting"}`, 0)
}

func TestTransportCountsByClassWithoutSecrets(t *testing.T) {
	const key, login = "secret-api-key-0123456789", "alice.wonderland"
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v3/ok":
			w.WriteHeader(http.StatusOK)
		case "/api/v3/moved":
			w.WriteHeader(http.StatusNotModified)
		case "/api/v3/missing":
			w.WriteHeader(http.StatusNotFound)
		default:
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer upstream.Close()

	m := metrics.New()
	client := &http.Client{Transport: m.Transport(nil)}
	get := func(path string) {
		req, err := http.NewRequest(http.MethodGet, upstream.URL+path+"?login="+login+"&apiKey="+key, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("apikey", key)
		req.Header.Set("X-OpenProject-Api-Key", key)
		resp, err := client.Do(req)
		if err != nil {
			return
		}
		resp.Body.Close()
	}
	get("/api/v3/ok")
	get("/api/v3/ok")
	get("/api/v3/moved")
	get("/api/v3/missing")
	get("/api/v3/fail")
	// A request that gets no response at all.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	if req, err := http.NewRequest(http.MethodGet, deadURL+"/users/"+login, nil); err == nil {
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			t.Error("a request to a closed server succeeded")
		}
	}
	// Documents and searches of a user, to check their labels too.
	m.SetDocuments(login, "work_package", 3)
	m.SetDocuments(key, "wiki_page", 1)
	m.ObserveSearch(time.Millisecond, "openproject_search")

	text := scrape(t, m)
	wantSample(t, text, `opsearch_openproject_requests_total{class="2xx"}`, 2)
	wantSample(t, text, `opsearch_openproject_requests_total{class="3xx"}`, 1)
	wantSample(t, text, `opsearch_openproject_requests_total{class="4xx"}`, 1)
	wantSample(t, text, `opsearch_openproject_requests_total{class="5xx"}`, 1)
	wantSample(t, text, `opsearch_openproject_requests_total{class="error"}`, 1)

	for _, secret := range []string{key, login, "alice", "apikey", "/api/v3", "127.0.0.1", strings.TrimPrefix(upstream.URL, "http://")} {
		if strings.Contains(text, secret) {
			t.Errorf("the exposition contains %q", secret)
		}
	}
	// Every label value of an opsearch metric comes from a small fixed set.
	allowed := regexp.MustCompile(`^(2xx|3xx|4xx|5xx|error|ok|unsupported|canceled|all|work_packages?|wiki_pages?|meetings?|projects?|openproject_search[a-z_]*|[0-9.e+]+|\+Inf)$`)
	labels := regexp.MustCompile(`([a-z_]+)="([^"]*)"`)
	for line := range strings.SplitSeq(grepOpsearch(text), "\n") {
		for _, l := range labels.FindAllStringSubmatch(line, -1) {
			if !allowed.MatchString(l[2]) {
				t.Errorf("label %s=%q in %q is not from the fixed set", l[1], l[2], line)
			}
		}
	}
}

func TestNilMetricsIgnoresCalls(t *testing.T) {
	var m *metrics.Metrics
	m.ObserveSync(sync.Report{}, errors.New("x"))
	m.ObserveSearch(time.Second, "openproject_search")
	m.SetDocuments("u", "work_package", 1)
	m.ForgetUser("u")
	m.SetActiveUsers(1)
	if m.Transport(http.DefaultTransport) != http.DefaultTransport {
		t.Error("a nil Metrics should return the base transport unchanged")
	}
}

// TestRegistriesAreIndependent checks there is no shared state between
// two Metrics.
func TestRegistriesAreIndependent(t *testing.T) {
	a, b := metrics.New(), metrics.New()
	a.SetActiveUsers(5)
	wantSample(t, scrape(t, a), "opsearch_active_users", 5)
	wantSample(t, scrape(t, b), "opsearch_active_users", 0)
}
