package relationships

import (
	"context"
	"errors"
	"maps"
	"slices"

	"sdkpp/server/store"
	"sdkpp/server/users"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// ProfilesChanged sends each user's game profiles in the application, as they are now after a
// merge, an unmerge or a ban, to the sessions of that application of the players who see them
// (SendProfiles); failures are logged.
func (s *Service) ProfilesChanged(ctx context.Context, appID uint64, userIDs []uint64) {
	for _, id := range userIDs {
		if err := s.SendProfiles(ctx, appID, id); err != nil {
			s.Logger.Warn("game profile update failed", "user_id", id, "app_id", appID, "err", err)
		}
	}
}

// Renamed sends a user's game profiles, which carry the new display name, and the user object
// with it, to those who see the user in each game the user has profiles in; failures are logged.
func (s *Service) Renamed(ctx context.Context, userID uint64) {
	u, err := s.Store.GetUser(ctx, userID)
	var all map[uint64][]wire.ApplicationProfile
	if err == nil {
		all, err = users.AllProfiles(ctx, s.Store, u)
	}
	if err != nil {
		s.Logger.Warn("display name update not sent", "user_id", userID, "err", err)
		return
	}
	for _, app := range slices.Sorted(maps.Keys(all)) {
		if err := s.SendProfiles(ctx, app, userID); err != nil {
			s.Logger.Warn("display name update failed", "user_id", userID, "app_id", app, "err", err)
		}
	}
}

// SendProfiles sends the user with its game profiles in appID to the sessions of appID of the
// user, the user's friends and the user's lobby co-members there (APPLICATION_PROFILES_UPDATE).
func (s *Service) SendProfiles(ctx context.Context, appID, userID uint64) error {
	u, err := s.Store.GetUser(ctx, userID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	profiles, err := users.Profiles(ctx, s.Store, u, appID)
	if err != nil {
		return err
	}
	obj := users.Object(u, false)
	obj.ApplicationProfiles = profiles
	audience := []uint64{userID}
	friends, err := Friends(ctx, s.Store, userID)
	if err != nil {
		return err
	}
	audience = append(audience, slices.Sorted(maps.Keys(friends))...)
	lobbies, err := s.Store.ListUserLobbies(ctx, appID, userID)
	if err != nil {
		return err
	}
	for _, l := range lobbies {
		members, err := s.Store.ListLobbyMemberIDs(ctx, l.ID)
		if err != nil {
			return err
		}
		audience = append(audience, members...)
	}
	if s.Notifier != nil {
		s.Notifier.DispatchAppMany(appID, audience, gwire.EventApplicationProfilesUpdate, obj) // duplicates go once
	}
	return nil
}
