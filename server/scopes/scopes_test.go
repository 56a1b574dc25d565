package scopes

import (
	"slices"
	"testing"
)

func TestSocialLayerExpandsToEverythingIncludingPresence(t *testing.T) {
	got := Expand([]string{OpenID, SocialLayer})
	for _, s := range append(append([]string{OpenID, SocialLayer, SocialLayerPresence}, PresenceSet...), SocialSet...) {
		if !slices.Contains(got, s) {
			t.Errorf("rule SC-3: sdk.social_layer expansion lacks %s: %v", s, got)
		}
	}
	presence := Expand([]string{OpenID, SocialLayerPresence})
	for _, s := range PresenceSet {
		if !slices.Contains(presence, s) { // rule SC-3
			t.Errorf("rule SC-3: sdk.social_layer_presence expansion lacks %s", s)
		}
	}
	for _, s := range SocialSet {
		if slices.Contains(presence, s) {
			t.Errorf("rule SC-3: presence expansion must not include %s", s)
		}
	}
	if !slices.IsSorted(got) {
		t.Error("expansion not sorted")
	}
}

func TestGrantKeepsOnlyAcceptedAdditionalScopes(t *testing.T) {
	req := []string{OpenID, SocialLayerPresence, Email, Guilds, IdentifyPremium}
	granted := Grant(req, func(s string) bool { return s == Email || s == IdentifyPremium }, Policy{SDKTermsAccepted: true})
	if !slices.Contains(granted, Email) || slices.Contains(granted, Guilds) { // rule SC-4
		t.Fatalf("rule SC-4: granted %v", granted)
	}
	if slices.Contains(granted, IdentifyPremium) { // rule AU-2
		t.Fatalf("rule AU-2: identify.premium granted to an unapproved app: %v", granted)
	}
	if !slices.Contains(Grant(req, func(s string) bool { return true }, Policy{PremiumApproved: true}), IdentifyPremium) { // rule AU-2
		t.Fatal("rule AU-2: approved app did not get identify.premium")
	}
	if got := Parse("  a b a  c "); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("Parse: %v", got)
	}
	if u := Unknown([]string{"identify", "bogus"}); !slices.Equal(u, []string{"bogus"}) {
		t.Fatalf("Unknown: %v", u)
	}
}

// rule AU-3: relationships.read is available once the app accepted the SDK terms, with no separate
// approval; before that neither a request nor the SDK scopes' expansion grants it.
func TestRelationshipsReadNeedsTheSDKTerms(t *testing.T) {
	all := func(string) bool { return true }
	for _, req := range [][]string{{OpenID, SocialLayer}, {OpenID, SocialLayerPresence}, {OpenID, RelationshipsRead}} {
		if got := Grant(req, all, Policy{}); slices.Contains(got, RelationshipsRead) {
			t.Errorf("rule AU-3: %v granted relationships.read without the SDK terms: %v", req, got)
		}
		if got := Grant(req, all, Policy{SDKTermsAccepted: true}); !slices.Contains(got, RelationshipsRead) {
			t.Errorf("rule AU-3: %v did not grant relationships.read after the SDK terms: %v", req, got)
		}
	}
	if got := Grant([]string{OpenID, SocialLayer}, all, Policy{}); !slices.Contains(got, LobbiesWrite) {
		t.Errorf("the rest of the expansion must stay: %v", got)
	}
	if Grantable(RelationshipsRead, Policy{PremiumApproved: true}) || !Grantable(RelationshipsRead, Policy{SDKTermsAccepted: true}) {
		t.Error("rule AU-3: relationships.read depends on the SDK terms alone")
	}
}
