package wire

// EventApplicationProfilesUpdate (sdkpp) gives the sessions of one application the game
// profiles another user has in it: d is that user's user object with application_profiles (of
// that application only; absent when none). The service sends it before a platform
// RELATIONSHIP_ADD or RELATIONSHIP_UPDATE, which reach the sessions of every application and so
// cannot carry one application's profiles; relationship objects of READY, of GET
// /users/@me/relationships and of GAME_RELATIONSHIP_* events carry them in their user instead.
// It is sent too when a merge, an unmerge or a ban moves an external identity to or from a user,
// and when a provisional user's display name (which is also the profiles' username) changes, to
// the user's sessions of that application and those of the user's friends and lobby co-members
// there.
const EventApplicationProfilesUpdate = "APPLICATION_PROFILES_UPDATE"
