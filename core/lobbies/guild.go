package lobbies

import (
	"context"
	"errors"
	"strings"

	"sdkpp/core/rest"
	"sdkpp/wire"
)

// ErrProvisional is JoinGuildURL's answer for a provisional player, who cannot join a guild: the
// account must be merged first.
var ErrProvisional = errors.New("a provisional account must be merged before it joins a guild")

// JoinGuildURL makes a single-use invite, valid one hour and bound to the player, to the guild of
// lobby id's linked channel, and returns its web URL under webBase: the service's invite page,
// where the player signs in and joins (rule LOB-5). cached reports whether the player is a
// provisional account when the SDK knows it (known), else the service is asked. A provisional
// player gets ErrProvisional and no request is made for the invite.
func JoinGuildURL(ctx context.Context, api *rest.Client, auth string, id uint64, webBase string, cached func() (provisional, known bool)) (string, error) {
	provisional, known := cached()
	if !known {
		var u wire.User
		if err := api.Do(ctx, rest.Request{Path: "/users/@me", Auth: auth}, &u); err != nil {
			return "", err
		}
		provisional = u.IsProvisional
	}
	if provisional {
		return "", ErrProvisional
	}
	var inv wire.InviteCode
	if err := api.Do(ctx, GuildInvite(auth, id), &inv); err != nil {
		return "", err
	}
	return strings.TrimRight(webBase, "/") + "/invite/" + inv.Code, nil
}
