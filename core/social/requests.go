package social

import (
	"net/http"
	"strconv"

	"sdkpp/core/rest"
	"sdkpp/wire"
)

// Path is the route of the player's relationship with userID in the platform's graph or, when
// game, the game's; userID 0 is the collection.
func Path(game bool, userID uint64) string {
	base := "/users/@me/relationships"
	if game {
		base = "/users/@me/game-relationships"
	}
	if userID == 0 {
		return base
	}
	return base + "/" + strconv.FormatUint(userID, 10)
}

// Put is the request that sends userID a friend request, or accepts theirs.
func Put(game bool, userID uint64) rest.Request {
	return rest.Request{Method: http.MethodPut, Path: Path(game, userID), JSON: struct{}{}}
}

// Delete is the request that ends the relationship with userID: it rejects or cancels a
// request, removes a friend or unblocks.
func Delete(game bool, userID uint64) rest.Request {
	return rest.Request{Method: http.MethodDelete, Path: Path(game, userID)}
}

// ByName is the request that sends a friend request by unique username, or accepts theirs.
func ByName(game bool, username string) rest.Request {
	return rest.Request{Method: http.MethodPost, Path: Path(game, 0), JSON: wire.FriendRequest{Username: username}}
}

// Block is the request that blocks userID on the platform.
func Block(userID uint64) rest.Request {
	blocked := TypeBlocked
	return rest.Request{Method: http.MethodPut, Path: Path(false, userID), JSON: wire.RelationshipPut{Type: &blocked}}
}

// Invite is the request that sends userID an activity invite (or a join request, or a reply).
func Invite(auth string, userID uint64, body wire.ActivityInviteRequest) rest.Request {
	return rest.Request{Method: http.MethodPost, Path: "/users/" + strconv.FormatUint(userID, 10) + "/activity-invites", Auth: auth, JSON: body}
}

// AcceptInvite is the request that accepts the activity invite of message id; the answer holds
// the join secret.
func AcceptInvite(auth string, id uint64) rest.Request {
	return rest.Request{Method: http.MethodPost, Path: "/activity-invites/" + strconv.FormatUint(id, 10) + "/accept", Auth: auth, JSON: struct{}{}}
}
