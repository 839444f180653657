// Package store keeps sessions in memory with expiry.
package store

import (
	"errors"
	"sync"
	"time"

	cfg "example.com/app/internal/config"
)

import "fmt"

// ErrNotFound is returned when a session id is unknown.
var ErrNotFound = errors.New("session not found")

// Session is one logged-in user.
type Session struct {
	ID      string
	UserID  int
	Expires time.Time
}

type (
	Clock func() time.Time
	Store interface {
		Get(id string) (*Session, error)
	}
)

// MemoryStore is a Store backed by a map.
type MemoryStore struct {
	mu       sync.Mutex
	sessions map[string]*Session
	now      Clock
}

// NewMemoryStore returns an empty store using the given clock.
func NewMemoryStore(now Clock) *MemoryStore {
	return &MemoryStore{sessions: map[string]*Session{}, now: now}
}

// Get returns the session with the given id, if it has not expired.
func (m *MemoryStore) Get(id string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok || m.now().After(s.Expires) {
		return nil, ErrNotFound
	}
	return s, nil
}

// Put stores a session for the configured lifetime.
func (m *MemoryStore) Put(s *Session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.Expires = m.now().Add(cfg.SessionLifetime)
	m.sessions[s.ID] = s
}

func describe(s *Session) string {
	format := func(t time.Time) string { return t.Format(time.RFC3339) }
	return fmt.Sprintf("%s (user %d, until %s)", s.ID, s.UserID, format(s.Expires))
}
