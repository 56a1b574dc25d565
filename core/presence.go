package core

import (
	"context"
	"encoding/json"

	gwire "sdkpp/wire/gateway"

	"sdkpp/core/internal/sdkerr"
	"sdkpp/core/records"
	"sdkpp/core/social"
	"sdkpp/wire"
)

// sendPresence sends the player's presence on the gateway; an error means it was not sent.
func (c *Client) sendPresence(ctx context.Context) error {
	gw := c.gateway()
	p, _ := c.social.state.Own()
	if gw == nil {
		return sdkerr.ErrNotReady
	}
	return gw.Send(ctx, gwire.OpPresenceUpdate, p)
}

// resendPresence sends the player's presence again once a session is Ready: the service forgets
// it when the player's last connection ends.
func (c *Client) resendPresence() {
	if _, set := c.social.state.Own(); set {
		c.sendPresenceLater("restoring the rich presence failed")
	}
}

// sendPresenceLater sends the player's presence on a goroutine of c; a failure is logged after
// what.
func (c *Client) sendPresenceLater(what string) {
	c.start(func(ctx context.Context) {
		if err := c.sendPresence(ctx); err != nil {
			c.logf(LoggingSeverityWarning, "%s: %v", what, err)
		}
	})
}

// presenceCall changes the player's presence with change and sends it; cb gets the result once
// the service shows it back (social.Taken: an invite sent then finds its party on any node), or
// social.TakenWait after the send. A validation error of check comes first and changes nothing.
func (c *Client) presenceCall(what string, check func() error, change func(), cb Callback[func(*ClientResult)]) {
	once := resultOnce(c, cb)
	if err := check(); err != nil {
		once.Fire(func() { cb.Fn(resultOf(err)) })
		return
	}
	if c.GetStatus() != ClientStatusReady {
		once.Fire(func() { cb.Fn(resultOf(sdkerr.ErrNotReady)) })
		return
	}
	change()
	taken := c.social.state.AwaitOwn(c.users.Current()) // before the send: its echo may come first
	c.start(func(ctx context.Context) {
		defer taken.Drop()
		err := c.sendPresence(ctx)
		if err != nil {
			c.logf(LoggingSeverityWarning, "%s: %v", what, err)
			err = sdkerr.NotReady(err)
		} else if !taken.Wait(ctx, c.clock, social.TakenWait) {
			c.logf(LoggingSeverityVerbose, "%s: sent; the service has not shown it back yet", what)
		}
		once.Fire(func() { cb.Fn(resultOf(err)) })
	})
}

// UpdateRichPresence sets the player's rich presence in this game. The activity is checked as
// the service checks it (lengths, http(s) URLs, at most two buttons) and refused with a
// validation error, sending nothing, when it is not valid.
func (c *Client) UpdateRichPresence(activity *Activity, cb Callback[ClientUpdateRichPresenceCallback]) {
	var w wire.Activity
	if activity != nil {
		w = records.ActivityToWire(activity)
	}
	c.presenceCall("UpdateRichPresence", func() error {
		if activity == nil {
			return sdkerr.Invalid("UpdateRichPresence: no activity")
		}
		if err := wire.ValidateActivity("activity", &w); err != nil {
			raw, _ := json.Marshal(err.Errors)
			return sdkerr.Invalid("UpdateRichPresence: %s: %s", err.Message, raw)
		}
		return nil
	}, func() { c.social.state.SetActivity(&w) }, Callback[func(*ClientResult)](cb))
}

// ClearRichPresence clears the player's rich presence.
func (c *Client) ClearRichPresence() {
	c.social.state.SetActivity(nil)
	if c.GetStatus() == ClientStatusReady {
		c.sendPresenceLater("ClearRichPresence")
	}
}

// SetOnlineStatus sets the player's status: Online, Idle, Dnd or Invisible (Offline is taken as
// Invisible).
func (c *Client) SetOnlineStatus(status StatusType, cb Callback[ClientUpdateStatusCallback]) {
	c.presenceCall("SetOnlineStatus", func() error {
		switch status {
		case StatusTypeOnline, StatusTypeIdle, StatusTypeDnd, StatusTypeInvisible, StatusTypeOffline:
			return nil
		}
		return sdkerr.Invalid("SetOnlineStatus: %s cannot be set", status)
	}, func() { c.social.state.SetStatus(records.StatusName(status)) }, Callback[func(*ClientResult)](cb))
}

// ---- invites

func (c *Client) sendInvite(what string, userID uint64, body wire.ActivityInviteRequest, cb Callback[ClientSendActivityInviteCallback]) {
	check := sdkerr.First(sdkerr.InvalidIf(userID == 0, "%s: userId is 0", what),
		sdkerr.InvalidIf(len(body.Content) > 4*wire.MaxInviteContent, "%s: the content is longer than %d characters", what, wire.MaxInviteContent))
	authCall(c, what, check, cb, func(ctx context.Context, auth string) error {
		return c.api.Do(ctx, social.Invite(auth, userID, body), nil)
	})
}

// SendActivityJoinRequestReply answers a join request with an invite to the player's party.
func (c *Client) SendActivityJoinRequestReply(invite *ActivityInvite, cb Callback[ClientSendActivityInviteCallback]) {
	if invite == nil || invite.Type() != ActivityActionTypesJoinRequest {
		err := sdkerr.Invalid("SendActivityJoinRequestReply: the invite is not a join request")
		resultOnce(c, cb).Fire(func() { cb.Fn(resultOf(err)) })
		return
	}
	c.sendInvite("SendActivityJoinRequestReply", invite.SenderId(),
		wire.ActivityInviteRequest{Type: wire.ActivityActionJoin, ReplyTo: wire.Snowflake(records.InviteID(invite))}, cb)
}

// AcceptActivityInvite accepts an invite; the callback gets the secret to join with. Every
// connected session of the player hears of it through the invite-created callback (rule EVT-1).
func (c *Client) AcceptActivityInvite(invite *ActivityInvite, cb Callback[ClientAcceptActivityInviteCallback]) {
	var id uint64
	if invite != nil {
		id = records.InviteID(invite)
	}
	check := sdkerr.First(sdkerr.InvalidIf(id == 0, "AcceptActivityInvite: the invite has no message id"),
		sdkerr.InvalidIf(invite != nil && invite.Type() != ActivityActionTypesJoin, "AcceptActivityInvite: only a Join invite can be accepted"))
	authCall1(c, "AcceptActivityInvite", check, cb, func(ctx context.Context, auth string) (string, error) {
		var out wire.ActivityInviteAccepted
		if err := c.api.Do(ctx, social.AcceptInvite(auth, id), &out); err != nil {
			return "", err
		}
		Secrets.Add(out.JoinSecret)
		return out.JoinSecret, nil
	})
}
