package store

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestRememberKey(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The production cost (600,000 rounds) makes each check take a
	// second under the race detector; the logic is the same.
	s.keyIterations = 1000
	const key = "secret-api-key-of-alice-0123456789"
	if ok, err := s.KeyVerified(key); err != nil || ok {
		t.Fatalf("unknown key verified: %v %v", ok, err)
	}
	if err := s.RememberKey(key); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.KeyVerified(key); err != nil || !ok {
		t.Fatalf("remembered key not verified: %v %v", ok, err)
	}
	for _, other := range []string{"", "secret-api-key-of-alice-012345678", key + "x", "bob"} {
		if ok, _ := s.KeyVerified(other); ok {
			t.Errorf("key %q verified", other)
		}
	}
	// A few keys are kept, the oldest dropped.
	for i := range maxKeyVerifiers {
		if err := s.RememberKey(key + string(rune('a'+i))); err != nil {
			t.Fatal(err)
		}
	}
	if ok, _ := s.KeyVerified(key); ok {
		t.Errorf("the oldest of %d keys is still verified", maxKeyVerifiers+1)
	}
	if ok, _ := s.KeyVerified(key + "a"); !ok {
		t.Errorf("a recent key is not verified")
	}
	if err := s.ForgetKeys(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.KeyVerified(key + "a"); ok {
		t.Errorf("a forgotten key is verified")
	}
	if err := s.RememberKey(key); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The key itself never reaches the disk.
	raw, err := os.ReadFile(filepath.Join(dir, "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(key)) || bytes.Contains(raw, []byte("secret-api-key")) {
		t.Error("the store file holds the API key")
	}
}
