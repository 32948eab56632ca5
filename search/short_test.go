package search_test

// skipShort is why a test skips under -short. The README ("Run the
// tests") says which tests the race run keeps and why.
const skipShort = "checks results, not concurrency: runs in the full suite, not again under -race -short"
