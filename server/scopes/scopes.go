// Package scopes knows the OAuth2 scopes of the service: which exist, what they mean in words on the
// consent page, how the SDK scopes expand (rule SC-3), which the user may decline (rule SC-4), and
// which need an approved application (rule AU-2).
package scopes

import (
	"slices"
	"strings"
)

// Scope names.
const (
	OpenID                 = "openid"
	Identify               = "identify"
	IdentifyPremium        = "identify.premium"
	Email                  = "email"
	Connections            = "connections"
	Guilds                 = "guilds"
	GuildsJoin             = "guilds.join"
	GuildsMembersRead      = "guilds.members.read"
	RelationshipsRead      = "relationships.read"
	RelationshipsWrite     = "relationships.write"
	ActivitiesRead         = "activities.read"
	ActivitiesWrite        = "activities.write"
	PresencesRead          = "presences.read"
	DMChannelsRead         = "dm_channels.read"
	DMChannelsMessagesRead = "dm_channels.messages.read"
	DMMessagesWrite        = "dm_channels.messages.write"
	LobbiesWrite           = "lobbies.write"
	Voice                  = "voice"
	GatewayConnect         = "gateway.connect"
	ApplicationsCommands   = "applications.commands"
	SocialLayer            = "sdk.social_layer"
	SocialLayerPresence    = "sdk.social_layer_presence"
)

// PresenceSet is what sdk.social_layer_presence expands to: the signed-in user, the friends list
// and rich presence (rule SC-3).
var PresenceSet = []string{
	Identify, RelationshipsRead, ActivitiesRead, ActivitiesWrite, PresencesRead, GatewayConnect,
}

// SocialSet is what sdk.social_layer adds to PresenceSet (communication includes presence, rule
// SC-3): friend requests, direct messages, lobbies and their linked channels, and voice.
var SocialSet = []string{
	RelationshipsWrite, DMChannelsRead, DMChannelsMessagesRead, DMMessagesWrite, LobbiesWrite,
	Guilds, GuildsJoin, Voice,
}

// descriptions are the consent page's words for each known scope.
var descriptions = map[string]string{
	OpenID:                 "Sign you in with your account (OpenID Connect)",
	Identify:               "Know your username, display name and avatar",
	IdentifyPremium:        "Know your premium subscription tier",
	Email:                  "Know your email address",
	Connections:            "Know the accounts you connected",
	Guilds:                 "Know which servers you are in",
	GuildsJoin:             "Join servers for you",
	GuildsMembersRead:      "Read your member details in your servers",
	RelationshipsRead:      "Know who your friends are",
	RelationshipsWrite:     "Send and answer friend requests for you",
	ActivitiesRead:         "See what you and your friends are playing",
	ActivitiesWrite:        "Update your rich presence while you play",
	PresencesRead:          "See whether your friends are online",
	DMChannelsRead:         "See your direct message conversations",
	DMChannelsMessagesRead: "Read your direct messages in this game",
	DMMessagesWrite:        "Send direct messages for you in this game",
	LobbiesWrite:           "Create and join lobbies for you",
	Voice:                  "Join voice calls for you",
	GatewayConnect:         "Stay connected to receive live updates",
	ApplicationsCommands:   "Use the app's commands",
	SocialLayer:            "Use your friends list, presence, messages, lobbies and voice in this game",
	SocialLayerPresence:    "Use your friends list and presence in this game",
}

// Known tells whether name is a scope of the service.
func Known(name string) bool { _, ok := descriptions[name]; return ok }

// Describe returns the consent page's words for a scope.
func Describe(name string) string {
	if d, ok := descriptions[name]; ok {
		return d
	}
	return name
}

// Parse splits a space-separated scope string, dropping duplicates and keeping the first order.
func Parse(s string) []string {
	out := strings.Fields(s)
	// The first of each name stays, in order (Fields' slice is this call's own).
	n := 0
	for _, f := range out {
		if !slices.Contains(out[:n], f) {
			out[n] = f
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return out[:n]
}

// Unknown returns the names in list that are not scopes of the service.
func Unknown(list []string) []string {
	var out []string
	for _, s := range list {
		if !Known(s) {
			out = append(out, s)
		}
	}
	return out
}

// Expand returns list with the SDK scopes expanded (rule SC-3): sdk.social_layer adds
// sdk.social_layer_presence, PresenceSet and SocialSet; sdk.social_layer_presence adds PresenceSet.
// The SDK scope names themselves stay in the result. The result is sorted and has no duplicates.
func Expand(list []string) []string {
	n := len(list)
	for _, s := range list {
		switch s {
		case SocialLayer:
			n += 1 + len(PresenceSet) + len(SocialSet)
		case SocialLayerPresence:
			n += len(PresenceSet)
		}
	}
	out := append(make([]string, 0, n), list...) // never nil, as callers may tell nil apart
	for _, s := range list {
		switch s {
		case SocialLayer:
			out = append(out, SocialLayerPresence)
			out = append(out, PresenceSet...)
			out = append(out, SocialSet...)
		case SocialLayerPresence:
			out = append(out, PresenceSet...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Required tells whether a requested scope is part of linking itself and so cannot be declined on
// the consent page: openid, identify and the SDK scopes. Every other requested scope is
// "additional" (rule SC-4): the page lists it with a checkbox, and only the checked ones are
// granted.
func Required(name string) bool {
	return name == OpenID || name == Identify || name == SocialLayer || name == SocialLayerPresence
}

// Policy is what an application may be granted beyond the ordinary scopes.
type Policy struct {
	PremiumApproved  bool // identify.premium (rule AU-2)
	SDKTermsAccepted bool // relationships.read, with no separate approval (rule AU-3)
}

// Grantable tells whether an application may be granted the scope at all: identify.premium only
// when the application is approved for it (rule AU-2), relationships.read only once it accepted
// the SDK terms (rule AU-3).
func Grantable(name string, p Policy) bool {
	switch name {
	case IdentifyPremium:
		return p.PremiumApproved
	case RelationshipsRead:
		return p.SDKTermsAccepted
	}
	return true
}

// Grant computes the scopes a token carries from what was requested and what the user ticked:
// required scopes always, additional scopes only when accepted; then the SDK scopes are expanded,
// and scopes the app may not have are dropped, also from the expansion.
func Grant(requested []string, accepted func(string) bool, p Policy) []string {
	// Those kept are all requested (as client_credentials keeps them) until one is not: only then
	// does the list need a slice of its own (Expand copies it).
	out := requested
	for i, s := range requested {
		if !Required(s) && !accepted(s) { // rule SC-4
			out = slices.Clone(requested[:i])
			for _, s := range requested[i+1:] {
				if Required(s) || accepted(s) {
					out = append(out, s)
				}
			}
			break
		}
	}
	// Expand's slice is this call's own: the scopes the app may have are kept in it, in order.
	granted := Expand(out)
	n := 0
	for _, s := range granted {
		if Grantable(s, p) { // rules AU-2, AU-3
			granted[n] = s
			n++
		}
	}
	clear(granted[n:])
	return granted[:n]
}

// Has tells whether the granted list contains scope.
func Has(granted []string, scope string) bool { return slices.Contains(granted, scope) }

// Subset tells whether every scope of a is in b.
func Subset(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

// Join writes a scope list the way the token response carries it.
func Join(list []string) string { return strings.Join(list, " ") }
