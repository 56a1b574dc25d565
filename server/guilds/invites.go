package guilds

import (
	"context"

	"sdkpp/server/invites"
)

// Invite is invites.Invite, under the name package oauth's invite page knows it by.
//
// Deprecated: use invites.Invite; this alias and the two methods below go once package oauth
// takes an *invites.Service.
type Invite = invites.Invite

// LookupInvite is Service.Invites.LookupInvite, for package oauth's invite page.
//
// Deprecated: use invites.Service.LookupInvite.
func (s *Service) LookupInvite(ctx context.Context, code string) (*Invite, error) {
	return s.Invites.LookupInvite(ctx, code)
}

// AcceptInvite is Service.Invites.AcceptInvite, for package oauth's invite page.
//
// Deprecated: use invites.Service.AcceptInvite.
func (s *Service) AcceptInvite(ctx context.Context, code string, userID uint64) (*Invite, error) {
	return s.Invites.AcceptInvite(ctx, code, userID)
}
