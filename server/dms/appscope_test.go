package dms_test

import (
	"fmt"
	"testing"

	"sdkpp/server/servertest/world"
	"sdkpp/wire"
)

// Issue 12, class 2: the author's token of another game can neither edit nor delete a message sent
// from this game (404, as if it were not there); the same player's token of this game can.
func TestMessageActionsCheckTheApplication(t *testing.T) {
	e := newEnv(t)
	a, b := e.user("ann", e.app), e.user("bob", e.app)
	ch := e.open(a, b)
	path := fmt.Sprintf("/channels/%d/messages", ch.ID)
	var m wire.Message
	e.api.Do("POST", path, a.auth, map[string]any{"content": "hi bob"}).OK(t, 200, &m)
	mpath := fmt.Sprintf("%s/%d", path, m.ID)

	elsewhere := e.w.Token(a.id, e.other, world.SocialScopes())
	e.api.Do("PATCH", mpath, elsewhere, map[string]any{"content": "edited from another game"}).Fails(t, 404, wire.CodeUnknownMessage, "")
	e.api.Do("DELETE", mpath, elsewhere, nil).Fails(t, 404, wire.CodeUnknownMessage, "")
	e.api.Do("PATCH", mpath, a.auth, map[string]any{"content": "edited here"}).OK(t, 200, &m)
	e.api.Do("DELETE", mpath, a.auth, nil).OK(t, 204, nil)
}
