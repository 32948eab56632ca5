package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The deployment files cannot run here (no container runtime), so their
// joins with the binary are checked instead: every setting they pass is
// one the binary reads, the probes ask the path and port it serves, the
// data directory is the image's, and the proxy reaches the replicas by
// the name they accept in the Host header.

// readsEnv reports whether the binary reads the environment variable
// name: a quoted mention in its non-test sources.
func readsEnv(t *testing.T, name string) bool {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"`+name+`"`) {
			return true
		}
	}
	return false
}

// commentedEnv finds the settings a file offers commented out
// ("# NAME: value" or "# - name: NAME"), which a user will uncomment.
var commentedEnv = regexp.MustCompile(`#\s*(?:- name:\s*)?((?:OPSEARCH|OPENPROJECT)_[A-Z_]+)`)

func readYAML(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	for {
		var d map[string]any
		if err := dec.Decode(&d); err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, d)
	}
	for _, m := range commentedEnv.FindAllStringSubmatch(string(b), -1) {
		if !readsEnv(t, m[1]) {
			t.Errorf("%s offers %s (commented out), which the binary does not read", path, m[1])
		}
	}
	return docs
}

// at walks m along keys (map keys, or list indexes as ints).
func at(t *testing.T, m any, keys ...any) any {
	t.Helper()
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			mm, ok := m.(map[string]any)
			if !ok {
				t.Fatalf("%v is not a mapping (looking for %q)", m, k)
			}
			m = mm[k]
		case int:
			l, ok := m.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("%v is not a list of more than %d (looking for item %d)", m, k, k)
			}
			m = l[k]
		}
	}
	return m
}

func TestDeployComposeReplicas(t *testing.T) {
	root := filepath.Join("..", "..")
	docs := readYAML(t, filepath.Join(root, "deploy", "replicas", "compose.yaml"))
	c := docs[0]
	env, _ := at(t, c, "services", "opsearch", "environment").(map[string]any)
	for name := range env {
		if !readsEnv(t, name) {
			t.Errorf("compose.yaml sets %s, which the binary does not read", name)
		}
	}
	if u, _ := env["OPSEARCH_STORE_URL"].(string); !strings.HasPrefix(u, "postgres://") || !strings.Contains(u, "@postgres:5432/") {
		t.Errorf("OPSEARCH_STORE_URL %q does not name the compose file's postgres service", u)
	}
	if hc := at(t, c, "services", "opsearch", "healthcheck", "test"); !slices.Equal(anyStrings(hc), []string{"CMD", "/opsearch", "healthcheck"}) {
		t.Errorf("healthcheck %v; want the binary's own healthcheck command", hc)
	}
	if !slices.Contains(anyStrings(at(t, c, "services", "opsearch", "volumes")), "/data") {
		t.Error("the replicas keep their indexes elsewhere than the image's /data")
	}
	if _, ok := at(t, c, "services", "opsearch", "ports").([]any); ok {
		t.Error("the replicas publish ports themselves: only the proxy may, or scaling them collides")
	}

	conf, err := os.ReadFile(filepath.Join(root, "deploy", "replicas", "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	servers := regexp.MustCompile(`(?m)^\s*server\s+([^\s{;]+)[^{]*;`).FindAllStringSubmatch(string(conf), -1)
	if len(servers) == 0 {
		t.Fatal("nginx.conf has no upstream servers")
	}
	for _, s := range servers {
		if s[1] != "opsearch:8080" {
			t.Errorf("nginx.conf sends requests to %s; the replicas are the opsearch service on port 8080", s[1])
		}
	}
	host := regexp.MustCompile(`proxy_set_header\s+Host\s+(\S+);`).FindStringSubmatch(string(conf))
	allowed, _ := env["OPSEARCH_ALLOWED_HOSTS"].(string)
	if host == nil || !slices.Contains(strings.Split(allowed, ","), host[1]) {
		t.Errorf("nginx.conf passes Host %v, not among OPSEARCH_ALLOWED_HOSTS %q: every request would get 403", host, allowed)
	}
	for _, loc := range []string{"location /sse", "location /messages", "location /"} {
		if !strings.Contains(string(conf), loc) {
			t.Errorf("nginx.conf has no %q", loc)
		}
	}
}

func TestDeployKubernetes(t *testing.T) {
	docs := readYAML(t, filepath.Join("..", "..", "deploy", "kubernetes", "opsearch.yaml"))
	var dep, svc map[string]any
	for _, d := range docs {
		switch d["kind"] {
		case "Deployment":
			dep = d
		case "Service":
			svc = d
		}
	}
	if dep == nil || svc == nil {
		t.Fatalf("want a Deployment and a Service, have %d documents", len(docs))
	}
	ctr := at(t, dep, "spec", "template", "spec", "containers", 0)
	port := at(t, ctr, "ports", 0, "containerPort")
	if port != 8080 {
		t.Errorf("containerPort %v; the image serves on 8080", port)
	}
	for _, probe := range []string{"readinessProbe", "startupProbe", "livenessProbe"} {
		if p := at(t, ctr, probe, "httpGet", "path"); p != "/health" {
			t.Errorf("%s asks %v, want /health", probe, p)
		}
		if p := at(t, ctr, probe, "httpGet", "port"); p != port {
			t.Errorf("%s asks port %v, the container serves %v", probe, p, port)
		}
	}
	for _, e := range at(t, ctr, "env").([]any) {
		name, _ := at(t, e, "name").(string)
		if !readsEnv(t, name) {
			t.Errorf("the Deployment sets %s, which the binary does not read", name)
		}
	}
	if m := at(t, ctr, "volumeMounts", 0, "mountPath"); m != "/data" {
		t.Errorf("the index volume is mounted at %v, the image keeps its data in /data", m)
	}
	if p := at(t, svc, "spec", "ports", 0, "targetPort"); p != port {
		t.Errorf("the Service targets port %v, the container serves %v", p, port)
	}
	if got := at(t, dep, "spec", "template", "metadata", "labels", "app"); got != at(t, svc, "spec", "selector", "app") {
		t.Errorf("the Service selects app=%v, the pods are app=%v", at(t, svc, "spec", "selector", "app"), got)
	}
}

// TestDeployImage: the image keeps its data where the deployments mount
// their volumes, and serves on the port they use.
func TestDeployImage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"OPSEARCH_DATA_DIR=/data", "PORT=8080", `CMD ["serve", "--http", ":8080"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the Dockerfile lacks %s", want)
		}
	}
}

func anyStrings(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
