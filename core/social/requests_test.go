package social

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"sdkpp/core/rest"
	"sdkpp/wire"
)

func TestRequests(t *testing.T) {
	blocked := TypeBlocked
	for name, tc := range map[string]struct {
		got, want rest.Request
	}{
		"put platform": {Put(false, 7), rest.Request{Method: http.MethodPut, Path: "/users/@me/relationships/7", JSON: struct{}{}}},
		"put game":     {Put(true, 7), rest.Request{Method: http.MethodPut, Path: "/users/@me/game-relationships/7", JSON: struct{}{}}},
		"delete game":  {Delete(true, 9), rest.Request{Method: http.MethodDelete, Path: "/users/@me/game-relationships/9"}},
		"by name":      {ByName(false, "ann"), rest.Request{Method: http.MethodPost, Path: "/users/@me/relationships", JSON: wire.FriendRequest{Username: "ann"}}},
		"block":        {Block(3), rest.Request{Method: http.MethodPut, Path: "/users/@me/relationships/3", JSON: wire.RelationshipPut{Type: &blocked}}},
	} {
		assert.Equal(t, tc.want, tc.got, name)
	}
}
