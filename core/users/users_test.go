package users

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/wire"
)

func ptr[T any](v T) *T { return &v }

func TestOf(t *testing.T) {
	assert.Nil(t, Of(nil))
	assert.Nil(t, Of(&wire.User{Username: "no id"}))
	u := Of(&wire.User{ID: 7, Username: "ann", GlobalName: ptr("Ann"), Avatar: ptr("h"), IsProvisional: true})
	require.NotNil(t, u)
	assert.Equal(t, User{ID: 7, Username: "ann", GlobalName: ptr("Ann"), Avatar: ptr("h"), IsProvisional: true}, *u)
}

func TestDisplayName(t *testing.T) {
	for _, tc := range []struct {
		global *string
		want   string
	}{{nil, "ann"}, {ptr(""), "ann"}, {ptr("  "), "ann"}, {ptr("Ann"), "Ann"}} {
		assert.Equal(t, tc.want, User{Username: "ann", GlobalName: tc.global}.DisplayName())
	}
}

func TestCache(t *testing.T) {
	var c Cache
	_, ok := c.Get(1)
	assert.False(t, ok)
	assert.Zero(t, c.Current())
	c.Put(nil, &User{ID: 1, Username: "a"}, &User{ID: 2, Username: "b"})
	u, ok := c.Get(1)
	require.True(t, ok)
	assert.Equal(t, "a", u.Username)
	c.Put(&User{ID: 1, Username: "a2"})
	u, _ = c.Get(1)
	assert.Equal(t, "a2", u.Username, "a newer copy replaces the old")
	c.SetCurrent(&User{ID: 3, Username: "me"})
	assert.Equal(t, uint64(3), c.Current())
	u, ok = c.Get(3)
	require.True(t, ok, "the current user is cached")
	assert.Equal(t, "me", u.Username)
}

// Profiles are published as snapshots: a reader keeps what it read, an unchanged update
// publishes nothing, and one update of many users copies once.
func TestProfiles(t *testing.T) {
	var c Cache
	assert.Nil(t, c.ProfilesOf(1))
	p := wire.ApplicationProfile{Username: "in-game", ProviderID: ptr("p1"), ProviderType: "OIDC"}
	require.True(t, c.SetProfiles(map[uint64][]wire.ApplicationProfile{1: {p}, 2: nil}))
	first := c.ProfilesOf(1)
	require.Len(t, first, 1)
	assert.Equal(t, p, *first[0])
	assert.False(t, c.SetProfiles(map[uint64][]wire.ApplicationProfile{1: {p}}), "the same profiles change nothing")
	same := p
	same.ProviderID = ptr("p1") // another pointer to an equal value
	assert.False(t, c.SetProfiles(map[uint64][]wire.ApplicationProfile{1: {same}}))
	other := p
	other.ProviderID = ptr("p2")
	require.True(t, c.SetProfiles(map[uint64][]wire.ApplicationProfile{1: {other}}))
	assert.Equal(t, "p1", *first[0].ProviderID, "a snapshot already read does not change")
	assert.Equal(t, "p2", *c.ProfilesOf(1)[0].ProviderID)
	assert.NotNil(t, c.ProfilesOf(2), "a user with no profiles is known to have none")
}

// Readers and writers from many goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	var c Cache
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				id := uint64(g*1000 + i)
				c.Put(&User{ID: id})
				c.SetProfiles(map[uint64][]wire.ApplicationProfile{id: {{Username: "x"}}})
				_, _ = c.Get(id)
				_ = c.ProfilesOf(id)
				_ = c.Current()
			}
		}()
	}
	wg.Wait()
	for g := range 4 {
		_, ok := c.Get(uint64(g*1000 + 199))
		assert.True(t, ok)
		assert.Len(t, c.ProfilesOf(uint64(g*1000+199)), 1)
	}
}

// READY stores the relationships' users before between runs, and the session's user after it.
func TestApplyReady(t *testing.T) {
	var c Cache
	p := wire.ApplicationProfile{Username: "in-game", ProviderType: "OIDC"}
	friend := &wire.User{ID: 2, Username: "friend", ApplicationProfiles: []wire.ApplicationProfile{p}}
	ran := false
	c.ApplyReady(&wire.User{ID: 1, Username: "me"}, []*wire.User{friend, {Username: "no id"}}, func() {
		ran = true
		_, ok := c.Get(2)
		assert.True(t, ok, "the friend is cached first")
		assert.Zero(t, c.Current(), "the session's user comes last")
	})
	require.True(t, ran)
	assert.Equal(t, uint64(1), c.Current())
	require.Len(t, c.ProfilesOf(2), 1)
	assert.Equal(t, p, *c.ProfilesOf(2)[0])
}
