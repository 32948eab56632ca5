package opgen_test

// skipShort is why a test skips under -short: see short_test.go.
const skipShort = "checks results, not concurrency: runs in the full suite, not again under -race -short"
