package store

import (
	"context"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
)

// The store never holds an API key. To serve its index offline (OpenProject
// down or slow) only to the key it belongs to, it keeps a slow, salted
// verifier of each key that OpenProject confirmed for its user: PBKDF2
// with SHA-256, the iteration count OWASP gives for it, so a stolen store
// file does not yield the key by brute force, and a key checked against it
// costs a fraction of a second once per start.
const (
	keyIterations   = 600_000
	keySaltLen      = 16
	keyHashLen      = 32
	maxKeyVerifiers = 4 // a user may use a few keys (clients, rotation)
)

var keyVerifiers = []byte("key_verifiers")

// keyVerifier is one remembered key, as salt and derived hash.
type keyVerifier struct {
	Salt       []byte `json:"salt"`
	Hash       []byte `json:"hash"`
	Iterations int    `json:"iterations"`
}

func (v keyVerifier) matches(key string) bool {
	if v.Iterations <= 0 || len(v.Salt) == 0 || len(v.Hash) == 0 {
		return false
	}
	h, err := pbkdf2.Key(sha256.New, key, v.Salt, v.Iterations, len(v.Hash))
	return err == nil && subtle.ConstantTimeCompare(h, v.Hash) == 1
}

func (s *Store) verifiers() ([]keyVerifier, error) {
	var vs []keyVerifier
	err := s.view(func(tx *ReadTx) error {
		raw := tx.tx.bucket(bucketMeta).get(keyVerifiers)
		if raw == nil {
			return nil
		}
		if err := json.Unmarshal(raw, &vs); err != nil {
			return fmt.Errorf("decode key verifiers: %w", err)
		}
		return nil
	})
	return vs, err
}

// KeyVerified reports whether key is one OpenProject confirmed for this
// store's user (RememberKey). Only then may the index answer for the key
// before OpenProject has been asked.
func (s *Store) KeyVerified(key string) (bool, error) {
	if key == "" {
		return false, nil
	}
	vs, err := s.verifiers()
	if err != nil {
		return false, err
	}
	for _, v := range vs {
		if v.matches(key) {
			return true, nil
		}
	}
	return false, nil
}

// RememberKey records a verifier of key, which OpenProject has just
// confirmed belongs to this store's user; the newest few are kept. The
// key itself is not stored.
func (s *Store) RememberKey(key string) error {
	if key == "" {
		return errors.New("remember key: empty key")
	}
	if ok, err := s.KeyVerified(key); err != nil || ok {
		return err
	}
	salt := make([]byte, keySaltLen)
	if _, err := rand.Read(salt); err != nil {
		return fmt.Errorf("remember key: %w", err)
	}
	h, err := pbkdf2.Key(sha256.New, key, salt, s.keyIterations, keyHashLen)
	if err != nil {
		return fmt.Errorf("remember key: %w", err)
	}
	vs, err := s.verifiers()
	if err != nil {
		return err
	}
	vs = append([]keyVerifier{{Salt: salt, Hash: h, Iterations: s.keyIterations}}, vs...)
	vs = vs[:min(len(vs), maxKeyVerifiers)]
	return s.Update(context.Background(), func(tx *WriteTx) error {
		return tx.putJSON(bucketMeta, keyVerifiers, vs)
	})
}

// ForgetKeys drops every remembered key: after OpenProject rejected one,
// none is trusted offline until confirmed again.
func (s *Store) ForgetKeys() error {
	return s.Update(context.Background(), func(tx *WriteTx) error {
		if err := tx.tx.bucket(bucketMeta).delete(keyVerifiers); err != nil {
			return fmt.Errorf("forget keys: %w", err)
		}
		return nil
	})
}
