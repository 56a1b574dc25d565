package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Claims is a bucket of claims in JetStream's key-value store: each key is held by one holder
// at a time (a string naming it, for example a node and its process's life), and lapses TTL
// after it was last written unless its holder renews it. Every change is conditional on the
// revision the caller saw, so that two nodes never both believe they hold a key.
type Claims struct {
	kv jetstream.KeyValue
}

// Claims opens (creating it if needed) the bucket of claims named name, whose claims lapse ttl
// after their last write.
func (b *Bus) Claims(ctx context.Context, name string, ttl time.Duration) (*Claims, error) {
	storage := jetstream.FileStorage
	if b.memory {
		storage = jetstream.MemoryStorage
	}
	kv, err := b.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "sdkpp_" + name, TTL: ttl, Storage: storage})
	if err != nil {
		return nil, fmt.Errorf("bus: claims %s: %w", name, err)
	}
	return &Claims{kv: kv}, nil
}

// claimAttempts bounds Claim's retries when the key goes between its create and its read.
const claimAttempts = 5

// Claim claims key for holder unless someone holds it: it returns the key's holder (holder
// itself when the claim succeeded) and the revision of that holding.
func (c *Claims) Claim(ctx context.Context, key, holder string) (string, uint64, error) {
	for range claimAttempts {
		rev, err := c.kv.Create(ctx, key, []byte(holder))
		if err == nil {
			return holder, rev, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return "", 0, fmt.Errorf("bus: claim %s: %w", key, err)
		}
		e, err := c.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue // released meanwhile: claim again
		}
		if err != nil {
			return "", 0, fmt.Errorf("bus: claim %s: %w", key, err)
		}
		return string(e.Value()), e.Revision(), nil
	}
	return "", 0, fmt.Errorf("bus: claim %s: it keeps changing hands", key)
}

// Replace gives key to holder if its holding is still the one of revision rev (its holder's
// renewal, or a holder taking over a holding it knows is stale), and returns the new revision.
func (c *Claims) Replace(ctx context.Context, key, holder string, rev uint64) (uint64, error) {
	rev, err := c.kv.Update(ctx, key, []byte(holder), rev)
	if err != nil {
		return 0, fmt.Errorf("bus: replace claim %s: %w", key, err)
	}
	return rev, nil
}

// Release gives key up if its holding is still the one of revision rev.
func (c *Claims) Release(ctx context.Context, key string, rev uint64) error {
	if err := c.kv.Delete(ctx, key, jetstream.LastRevision(rev)); err != nil {
		return fmt.Errorf("bus: release claim %s: %w", key, err)
	}
	return nil
}
