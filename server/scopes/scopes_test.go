package scopes

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSocialLayerExpandsToEverythingIncludingPresence(t *testing.T) {
	got := Expand([]string{OpenID, SocialLayer})
	for _, s := range append(append([]string{OpenID, SocialLayer, SocialLayerPresence}, PresenceSet...), SocialSet...) {
		assert.Contains(t, got, s, "rule SC-3: sdk.social_layer expansion lacks %s: %v", s, got)
	}
	presence := Expand([]string{OpenID, SocialLayerPresence})
	for _, s := range PresenceSet {
		assert.Contains(t, presence, s, "rule SC-3: sdk.social_layer_presence expansion lacks %s", s)
	}
	for _, s := range SocialSet {
		assert.NotContains(t, presence, s, "rule SC-3: presence expansion must not include %s", s)
	}
	assert.True(t, slices.IsSorted(got), "expansion not sorted")
}

func TestGrantKeepsOnlyAcceptedAdditionalScopes(t *testing.T) {
	req := []string{OpenID, SocialLayerPresence, Email, Guilds, IdentifyPremium}
	granted := Grant(req, func(s string) bool { return s == Email || s == IdentifyPremium }, Policy{SDKTermsAccepted: true})
	require.Contains(t, granted, Email, "rule SC-4: granted %v", granted)
	require.NotContains(t, granted, Guilds, "rule SC-4: granted %v", granted)
	require.NotContains(t, granted, IdentifyPremium, "rule AU-2: identify.premium granted to an unapproved app: %v", granted)
	require.Contains(t, Grant(req, func(s string) bool { return true }, Policy{PremiumApproved: true}), IdentifyPremium, "rule AU-2: approved app did not get identify.premium")
	require.Equal(t, []string{"a", "b", "c"}, Parse("  a b a  c "), "Parse")
	require.Equal(t, []string{"bogus"}, Unknown([]string{"identify", "bogus"}), "Unknown")
}

// rule AU-3: relationships.read is available once the app accepted the SDK terms, with no separate
// approval; before that neither a request nor the SDK scopes' expansion grants it.
func TestRelationshipsReadNeedsTheSDKTerms(t *testing.T) {
	all := func(string) bool { return true }
	for _, req := range [][]string{{OpenID, SocialLayer}, {OpenID, SocialLayerPresence}, {OpenID, RelationshipsRead}} {
		assert.NotContains(t, Grant(req, all, Policy{}), RelationshipsRead, "rule AU-3: %v granted relationships.read without the SDK terms", req)
		assert.Contains(t, Grant(req, all, Policy{SDKTermsAccepted: true}), RelationshipsRead, "rule AU-3: %v did not grant relationships.read after the SDK terms", req)
	}
	assert.Contains(t, Grant([]string{OpenID, SocialLayer}, all, Policy{}), LobbiesWrite, "the rest of the expansion must stay")
	assert.False(t, Grantable(RelationshipsRead, Policy{PremiumApproved: true}), "rule AU-3: relationships.read depends on the SDK terms alone")
	assert.True(t, Grantable(RelationshipsRead, Policy{SDKTermsAccepted: true}), "rule AU-3: relationships.read depends on the SDK terms alone")
}

func TestParseExpandGrantShapes(t *testing.T) {
	assert.Nil(t, Parse(""), "no scope: nil, as before")
	assert.Nil(t, Parse("   "))
	assert.Equal(t, []string{Identify}, Parse(Identify))
	assert.Equal(t, []string{"b", "a"}, Parse("b a b a"), "the first of each, in order")

	empty := Expand(nil)
	assert.NotNil(t, empty, "Expand gives a slice, also empty (callers tell nil from empty)")
	assert.Empty(t, empty)
	assert.Equal(t, []string{Identify, OpenID}, Expand([]string{OpenID, Identify, OpenID}), "sorted, no duplicates")
	in := []string{SocialLayer, Identify}
	all := Expand(in)
	assert.Equal(t, []string{SocialLayer, Identify}, in, "its argument is left as it was")
	want := append(append([]string{SocialLayer, SocialLayerPresence, Identify}, PresenceSet...), SocialSet...)
	slices.Sort(want)
	assert.Equal(t, slices.Compact(want), all, "rule SC-3")

	g := Grant([]string{Identify}, func(string) bool { return false }, Policy{})
	assert.Equal(t, []string{Identify}, g)
	assert.NotNil(t, Grant(nil, func(string) bool { return true }, Policy{}))
}

// rule SC-4: Grant keeps the required scopes and the accepted ones, in any place of the request,
// and leaves the request as it was; when it keeps them all, Expand's slice is all it allocates.
func TestGrantKeepsWhatIsAccepted(t *testing.T) {
	req := []string{Email, Identify, Guilds, Connections}
	for _, tc := range []struct {
		accepted []string
		want     []string
	}{
		{nil, []string{Identify}},
		{[]string{Email}, []string{Email, Identify}},
		{[]string{Guilds, Connections}, []string{Connections, Guilds, Identify}},
		{[]string{Email, Guilds, Connections}, []string{Connections, Email, Guilds, Identify}},
	} {
		in := slices.Clone(req)
		got := Grant(in, func(s string) bool { return slices.Contains(tc.accepted, s) }, Policy{})
		assert.Equal(t, tc.want, got, "accepted %v", tc.accepted)
		assert.Equal(t, req, in, "the request is left as it was")
	}
	bot := []string{Identify}
	all := func(string) bool { return true }
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { _ = Grant(bot, all, Policy{}) }))
}

func BenchmarkGrantIdentify(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Grant(Parse(Identify), func(string) bool { return true }, Policy{})
	}
}
