package interop_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// BenchmarkStdioSearch10kTypeScript times openproject_search over stdio
// as the official TypeScript SDK's client sees it (the client Claude
// Desktop, VS Code and most MCP hosts are built on): from the call to
// the answer the client has parsed and checked. The data and queries
// are BenchmarkStdioSearch10k's (mcp), so the two compare: 10,000 work packages (seed 42), the admin key, the first
// three words of 64 subjects. It reports the median and p90 wall time,
// the engine's median (the tookMs each answer states) and the median of
// what the rest of each call added (issue 13: at most 1 ms):
//
//	go test ./interop/ -run '^$' -bench StdioSearch10kTypeScript -benchtime 2000x
func BenchmarkStdioSearch10kTypeScript(b *testing.B) {
	if testing.Short() {
		b.Skip("installs npm packages, syncs 10,000 work packages and runs a Node.js client")
	}
	node := tool(b, "node")
	dir := install(b)
	bin := buildBinary(b)
	data := opgen.Generate(opgen.GenOptions{Seed: 42, WorkPackages: 10000})
	_, base := optesting.Start(b, data, optest.Options{})
	var queries []string
	for i := 0; len(queries) < 64; i += len(data.WorkPackages) / 64 {
		f := strings.Fields(data.WorkPackages[i].Subject)
		queries = append(queries, strings.Join(f[:min(3, len(f))], " "))
	}
	qjson, err := json.Marshal(queries)
	if err != nil {
		b.Fatal(err)
	}
	dataDir := b.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dataDir, "OPENPROJECT_BASE_URL=" + base,
		"OPENPROJECT_API_KEY=" + optest.AdminKey, "OPSEARCH_DATA_DIR=" + dataDir,
		"OPSEARCH_SYNC_SCHEDULE=@every 1h", "OPSEARCH_BIN=" + bin, "OPSEARCH_QUERIES=" + string(qjson),
	}
	sync := exec.Command(bin, "sync")
	sync.Env = env
	if out, err := sync.CombinedOutput(); err != nil {
		b.Fatalf("opsearch sync: %v\n%s", err, out)
	}

	b.Run("client=ts-sdk", func(b *testing.B) {
		// One client run makes all b.N calls; its start and warm-up are
		// outside the figures it reports.
		cmd := exec.CommandContext(b.Context(), node, "stdio-bench.mjs")
		cmd.Dir = dir
		cmd.Env = append(slices.Clone(env), fmt.Sprintf("OPSEARCH_CALLS=%d", b.N))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("node stdio-bench.mjs: %v\n%s%s", err, out, stderr.String())
		}
		var res struct {
			Version, Node   string
			Wall, Engine    []float64
			StructuredBytes int
		}
		if err := json.Unmarshal(bytes.TrimSpace(out), &res); err != nil {
			b.Fatalf("client output %q: %v", out, err)
		}
		if len(res.Wall) != b.N || len(res.Engine) != b.N {
			b.Fatalf("the client timed %d calls (%d engine times), want %d", len(res.Wall), len(res.Engine), b.N)
		}
		overhead := make([]float64, b.N)
		for i := range overhead {
			overhead[i] = res.Wall[i] - res.Engine[i]
		}
		b.ReportMetric(quantile(res.Wall, 0.5), "median-ms")
		b.ReportMetric(quantile(res.Wall, 0.9), "p90-ms")
		b.ReportMetric(quantile(res.Engine, 0.5), "engine-median-ms")
		b.ReportMetric(quantile(overhead, 0.5), "overhead-median-ms")
		b.ReportMetric(float64(res.StructuredBytes), "structured-bytes")
		b.Logf("@modelcontextprotocol/sdk %s on Node.js %s, %d calls", res.Version, res.Node, b.N)
	})
}

// quantile is the q-quantile of xs (nearest rank), which it sorts.
func quantile(xs []float64, q float64) float64 {
	slices.Sort(xs)
	return xs[min(len(xs)-1, int(q*float64(len(xs))))]
}
