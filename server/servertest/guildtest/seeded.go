package guildtest

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/wire"
)

// Seeded is a dev service, with the guilds dev mode seeds, and bearer tokens (openid
// sdk.social_layer) of the three seeded users.
type Seeded struct {
	E                 *servertest.Env
	Alice, Bob, Carol string
}

// NewSeeded starts the service with opts and links the three users.
func NewSeeded(t testing.TB, opts ...servertest.Option) *Seeded {
	t.Helper()
	e := servertest.Start(t, opts...)
	return &Seeded{E: e, Alice: e.Token(t, "alice", "openid sdk.social_layer").AccessToken,
		Bob:   e.Token(t, "bob", "openid sdk.social_layer").AccessToken,
		Carol: e.Token(t, "carol", "openid sdk.social_layer").AccessToken}
}

// Guilds is GET /users/@me/guilds with the token; it requires 200.
func (f *Seeded) Guilds(t testing.TB, tok string) []wire.PartialGuild {
	t.Helper()
	var out []wire.PartialGuild
	OK(t, Do(t, http.MethodGet, f.E.APIURL+"/users/@me/guilds", nil, Bearer(tok)), &out)
	return out
}

// Channels is GET /guilds/{guild}/channels with the token; it requires 200.
func (f *Seeded) Channels(t testing.TB, tok string, guild wire.Snowflake) []wire.GuildChannel {
	t.Helper()
	var out []wire.GuildChannel
	OK(t, Do(t, http.MethodGet, f.E.APIURL+"/guilds/"+guild.String()+"/channels", nil, Bearer(tok)), &out)
	return out
}

// OwnGuild returns the guild the token's user owns.
func (f *Seeded) OwnGuild(t testing.TB, tok string) wire.PartialGuild {
	t.Helper()
	for _, g := range f.Guilds(t, tok) {
		if g.Owner {
			return g
		}
	}
	require.FailNow(t, "no owned guild")
	return wire.PartialGuild{}
}

// ChannelNamed is the channel of list with that name.
func ChannelNamed(t testing.TB, list []wire.GuildChannel, name string) wire.GuildChannel {
	t.Helper()
	for _, c := range list {
		if c.Name == name {
			return c
		}
	}
	require.FailNow(t, "no channel", "%q", name)
	return wire.GuildChannel{}
}
