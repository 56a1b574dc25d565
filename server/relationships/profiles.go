package relationships

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"sdkpp/server/internal/outbox"
	"sdkpp/server/order"
	"sdkpp/server/store"
	"sdkpp/server/users"
	gwire "sdkpp/wire/gateway"
)

// ProfileTx runs fn, a change of users' game profiles or user objects (a rename, a merge, an
// unmerge, a ban: users.ProfileTx), in a transaction and, once committed, sends each changed
// user with its game profiles in each application fn names to the sessions of that
// application of the players who see the user (profileUpdate). With a Notifier that is an
// outbox.Stager (the gateway), the updates are staged in the transaction and published from it:
// on a cluster, a node that dies after the commit leaves them for the next holder of the
// user's order lock, on any node, to publish.
//
// Each update is staged under its subject's key (userKey), held, with this node's mutex of it,
// from the transaction until the update is handed on, and not under the keys of those it goes
// to: an update carries the subject's whole current state, so what each player must get in
// commit order is every event that carries the subject, the subject's own updates and the
// relationship events of the subject's friendships, which carry the subject's user object and
// are made holding the subject's key too. Holding the key of every friend and lobby co-member
// would make a rename wait for all of their relationship changes for nothing. The keys of
// subjects are taken first; when fn changed another user, it is run again in a fresh
// transaction with that user's key held too, so that no update is staged under a key not held.
func (s *Service) ProfileTx(ctx context.Context, subjects []uint64, fn func(st store.Store) (users.Changed, error)) error {
	for range maxProfileRuns {
		more, err := s.profileTx(ctx, subjects, fn)
		if err != nil || len(more) == 0 {
			return err
		}
		subjects = append(slices.Clip(subjects), more...)
	}
	return fmt.Errorf("relationships: profile change of %v: the users it changes keep changing", subjects)
}

// maxProfileRuns is how many times ProfileTx runs a change that keeps changing users whose
// keys it does not hold.
const maxProfileRuns = 4

// profileTx is one run of ProfileTx holding the keys of subjects: it returns, and rolls back,
// the users fn changed whose keys it does not hold.
func (s *Service) profileTx(ctx context.Context, subjects []uint64, fn func(st store.Store) (users.Changed, error)) (more []uint64, err error) {
	keys := make([]string, len(subjects))
	for i, u := range subjects {
		keys[i] = userKey(u)
	}
	held := order.Held{Store: s.Store, Release: func() {}}
	if len(keys) > 0 {
		defer s.order.Lock(keys...)()
		if held, err = order.HoldAll(ctx, s.Order, keys, nil, s.Store); err != nil {
			return nil, err
		}
	}
	defer held.Release() // once the updates are sent
	stager, staging := s.Notifier.(outbox.Stager)
	var (
		updates []outbox.Dispatch
		publish []func()
	)
	errMore := errors.New("relationships: more users changed")
	// On a cluster the commit runs on the lock's session: the next holder sees it.
	err = held.Store.WithTx(ctx, func(st store.Store) error {
		changed, err := fn(st)
		if err != nil {
			return err
		}
		apps := slices.Sorted(maps.Keys(changed))
		for _, app := range apps {
			for _, u := range changed[app] {
				if !slices.Contains(subjects, u) && !slices.Contains(more, u) {
					more = append(more, u)
				}
			}
		}
		if len(more) > 0 {
			return errMore
		}
		for _, app := range apps {
			for _, u := range changed[app] {
				d, ok, err := profileUpdate(ctx, st, app, u)
				switch {
				case err != nil:
					return err
				case !ok:
				case !staging:
					updates = append(updates, d)
				default:
					p, err := stager.Stage(ctx, st, userKey(u), []outbox.Dispatch{d})
					if err != nil {
						return err
					}
					publish = append(publish, p)
				}
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, errMore):
		return more, nil
	case err != nil:
		return nil, err
	}
	for _, p := range publish {
		p()
	}
	if s.Notifier != nil {
		for _, d := range updates {
			s.Notifier.DispatchAppMany(d.App, d.Users, d.Event, d.Data) // duplicates go once
		}
	}
	return nil, nil
}

// profileUpdate is the update of user userID with its game profiles in appID, as st has them,
// to the sessions of appID of the user, the user's friends and the user's lobby co-members
// there (APPLICATION_PROFILES_UPDATE); none (false) for a user that is no more.
func profileUpdate(ctx context.Context, st store.Store, appID, userID uint64) (outbox.Dispatch, bool, error) {
	u, err := st.GetUser(ctx, userID)
	if errors.Is(err, store.ErrNotFound) {
		return outbox.Dispatch{}, false, nil
	}
	if err != nil {
		return outbox.Dispatch{}, false, err
	}
	profiles, err := users.Profiles(ctx, st, u, appID)
	if err != nil {
		return outbox.Dispatch{}, false, err
	}
	obj := users.Object(u, false)
	obj.ApplicationProfiles = profiles
	audience := []uint64{userID}
	friends, err := Friends(ctx, st, userID)
	if err != nil {
		return outbox.Dispatch{}, false, err
	}
	audience = append(audience, slices.Sorted(maps.Keys(friends))...)
	lobbies, err := st.ListUserLobbies(ctx, appID, userID)
	if err != nil {
		return outbox.Dispatch{}, false, err
	}
	for _, l := range lobbies {
		members, err := st.ListLobbyMemberIDs(ctx, l.ID)
		if err != nil {
			return outbox.Dispatch{}, false, err
		}
		for _, m := range members {
			if !slices.Contains(audience, m) {
				audience = append(audience, m)
			}
		}
	}
	return outbox.Dispatch{Users: audience, App: appID, Event: gwire.EventApplicationProfilesUpdate, Data: obj}, true, nil
}
