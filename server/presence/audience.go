package presence

import (
	"context"
	"fmt"

	"sdkpp/server/store"
	"sdkpp/wire"
)

// An invite belongs to one game and its siblings: the applications of one family, a parent
// application and its children (rule INV-1: the invite's application_id tells a sibling which
// of them it is for). Its events reach the recipient's sessions of that family only, every
// device of them (rule EVT-1), never a session of an unrelated game.

// familyRoot is the parent of a child application, else the application itself.
func familyRoot(appID, parentID uint64) uint64 {
	if parentID != 0 {
		return parentID
	}
	return appID
}

// inviteRoot is the family of an invite's application.
func inviteRoot(inv *wire.ActivityInvite) uint64 {
	var parent uint64
	if inv.ParentApplicationID != nil {
		parent = uint64(*inv.ParentApplicationID)
	}
	return familyRoot(uint64(inv.ApplicationID), parent)
}

// familyApps returns the applications of the family root that userID authorized: the only ones
// of the family whose gateway sessions userID can have, since a session needs a token.
func (s *Service) familyApps(ctx context.Context, userID, root uint64) ([]uint64, error) {
	auths, err := s.Store.ListAuthorizationsByUser(ctx, userID)
	if err != nil {
		return nil, fmt.Errorf("presence: authorizations of %d: %w", userID, err)
	}
	var out []uint64
	seen := map[uint64]bool{}
	for _, a := range auths {
		if seen[a.AppID] {
			continue
		}
		seen[a.AppID] = true
		app, err := s.Store.GetApplication(ctx, a.AppID)
		if err != nil {
			return nil, fmt.Errorf("presence: application %d: %w", a.AppID, err)
		}
		if familyRoot(app.ID, app.ParentID) == root {
			out = append(out, app.ID)
		}
	}
	return out, nil
}

// dispatchInvite sends an invite event to userID's sessions of the given applications.
func (s *Service) dispatchInvite(userID uint64, apps []uint64, event string, inv wire.ActivityInvite) {
	for _, app := range apps {
		s.Hub.DispatchApp(app, userID, event, inv)
	}
}

// dmChannel returns the id of the direct-message channel of a and b, opening it if needed: the
// channel an invite's message belongs to.
func (s *Service) dmChannel(ctx context.Context, a, b uint64) (uint64, error) {
	c, err := s.Store.PutDMChannel(ctx, &store.DMChannel{ID: s.IDs.Next(), UserLow: a, UserHigh: b, CreatedAt: s.Clock.Now()})
	if err != nil {
		return 0, fmt.Errorf("presence: DM channel of %d and %d: %w", a, b, err)
	}
	return c.ID, nil
}

// sameFamily tells whether two applications are one game or siblings (one family root): the
// applications an invite of one may be seen and acted on from (rule INV-1).
func (s *Service) sameFamily(ctx context.Context, a, b uint64) (bool, error) {
	if a == b {
		return true, nil
	}
	root := func(id uint64) (uint64, error) {
		app, err := s.Store.GetApplication(ctx, id)
		if err != nil {
			return 0, fmt.Errorf("presence: application %d: %w", id, err)
		}
		return familyRoot(app.ID, app.ParentID), nil
	}
	ra, err := root(a)
	if err != nil {
		return false, err
	}
	rb, err := root(b)
	if err != nil {
		return false, err
	}
	return ra == rb, nil
}
