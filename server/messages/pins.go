package messages

import (
	"context"
	"time"

	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// pinRoutes are the pin routes of guild channels (rule PIN-1): Get Channel Pins, Pin Message and
// Unpin Message under /messages/pins, and the deprecated routes they replace, which are still
// served: Get Pinned Messages (GET /channels/{id}/pins, a plain array of at most 50 messages)
// and the old pin and unpin routes. DM channels share their patterns (Shared).
func (s *Service) pinRoutes() guildaccess.Routes {
	return guildaccess.Routes{
		"GET /channels/{channel_id}/messages/pins":                 s.listPins,
		"PUT /channels/{channel_id}/messages/pins/{message_id}":    s.pin,
		"DELETE /channels/{channel_id}/messages/pins/{message_id}": s.unpin,
		"GET /channels/{channel_id}/pins":                          s.pinnedMessages,
		"PUT /channels/{channel_id}/pins/{message_id}":             s.pin,
		"DELETE /channels/{channel_id}/pins/{message_id}":          s.unpin,
	}
}

// PinPermission is the permission pinning and unpinning need at t: PIN_MESSAGES from
// wire.PinPermissionFrom, MANAGE_MESSAGES before (rules VER-1, ERR-1).
func PinPermission(t time.Time) uint64 {
	if t.Before(wire.PinPermissionFrom) {
		return guildaccess.PermManageMessages
	}
	return wire.PermPinMessages
}

// pinnable loads the path's channel and message for a pin or an unpin: VIEW_CHANNEL and the pin
// permission of the moment (50013 without), a known message (10008).
func (s *Service) pinnable(q *guildaccess.Caller) (*store.GuildChannel, *store.GuildMessage, error) {
	ch, _, perms, err := s.GuildChannel(q)
	if err != nil {
		return nil, nil, err
	}
	if perms&PinPermission(s.Clock.Now()) == 0 {
		return nil, nil, wire.MissingPermissions()
	}
	m, err := s.message(q, ch)
	if err != nil {
		return nil, nil, err
	}
	return ch, m, nil
}

// pin serves PUT /channels/{channel_id}/messages/pins/{message_id} (and the deprecated
// /pins/{message_id}): 204, and CHANNEL_PINS_UPDATE when the message was not pinned yet. A
// channel holds at most wire.MaxPins pins (30003).
func (s *Service) pin(q *guildaccess.Caller) (any, error) {
	ch, m, err := s.pinnable(q)
	if err != nil {
		return nil, err
	}
	if at, err := s.Store.GuildMessagePinnedAt(q.Ctx, ch.ID, m.ID); err != nil || !at.IsZero() {
		return nil, err // pinned already: nothing changes
	}
	n, err := s.Store.CountGuildPins(q.Ctx, ch.ID)
	if err != nil {
		return nil, err
	}
	if n >= wire.MaxPins {
		return nil, wire.Coded(wire.CodeMaxPins, "Maximum number of pins reached (250)")
	}
	pinned, err := s.Store.PinGuildMessage(q.Ctx, ch.ID, m.ID, s.Clock.Now())
	if err != nil || !pinned {
		return nil, err
	}
	s.pinsChanged(q.Ctx, ch)
	return nil, nil
}

// unpin serves DELETE /channels/{channel_id}/messages/pins/{message_id} (and the deprecated
// /pins/{message_id}): 204, and CHANNEL_PINS_UPDATE when the message was pinned.
func (s *Service) unpin(q *guildaccess.Caller) (any, error) {
	ch, m, err := s.pinnable(q)
	if err != nil {
		return nil, err
	}
	unpinned, err := s.Store.UnpinGuildMessage(q.Ctx, ch.ID, m.ID)
	if err != nil || !unpinned {
		return nil, err
	}
	s.pinsChanged(q.Ctx, ch)
	return nil, nil
}

// pinsChanged sends CHANNEL_PINS_UPDATE, with the time of the channel's newest remaining pin, to
// the guild's bots with the GUILDS intent that can view the channel.
func (s *Service) pinsChanged(ctx context.Context, ch *store.GuildChannel) {
	if s.Bots == nil {
		return
	}
	newest, err := s.Store.ListGuildPins(ctx, ch.ID, time.Time{}, 1)
	if err != nil {
		s.Logger.Warn("pins update not sent", "channel_id", ch.ID, "err", err)
		return
	}
	d := wire.ChannelPinsUpdate{GuildID: wire.Snowflake(ch.GuildID), ChannelID: wire.Snowflake(ch.ID)}
	if len(newest) == 1 {
		at := guildaccess.Timestamp(newest[0].PinnedAt)
		d.LastPinTimestamp = &at
	}
	s.Bots.DispatchBots(s.ChannelViewers(ctx, ch), gwire.IntentGuilds, gwire.EventChannelPinsUpdate, d)
}

// listPins serves GET /channels/{channel_id}/messages/pins?before=&limit=: needs VIEW_CHANNEL and
// READ_MESSAGE_HISTORY; the pins made before before (an ISO 8601 timestamp), the most recent
// first, limit 1 to 50 (default 50), and has_more when older ones remain.
func (s *Service) listPins(q *guildaccess.Caller) (any, error) {
	limit, before, err := httpx.QueryTimePage(q.URL.Query(), wire.MaxPinsPage, wire.MaxPinsPage)
	if err != nil {
		return nil, err
	}
	ch, err := s.readable(q)
	if err != nil {
		return nil, err
	}
	pins, err := s.Store.ListGuildPins(q.Ctx, ch.ID, before, limit+1)
	if err != nil {
		return nil, err
	}
	hasMore := len(pins) > limit
	pins = pins[:min(len(pins), limit)]
	msgs, err := readerMessages(s, q, pins, func(p *store.GuildPin) *store.GuildMessage { return &p.Message })
	if err != nil {
		return nil, err
	}
	out := wire.ChannelPins{Items: make([]wire.ChannelPin, len(pins)), HasMore: hasMore}
	for i, m := range msgs {
		out.Items[i] = wire.ChannelPin{PinnedAt: guildaccess.Timestamp(pins[i].PinnedAt), Message: m}
	}
	return out, nil
}

// pinnedMessages serves the deprecated GET /channels/{channel_id}/pins: the channel's 50 most
// recent pins as an array of messages.
func (s *Service) pinnedMessages(q *guildaccess.Caller) (any, error) {
	ch, err := s.readable(q)
	if err != nil {
		return nil, err
	}
	pins, err := s.Store.ListGuildPins(q.Ctx, ch.ID, time.Time{}, wire.MaxPinsPage)
	if err != nil {
		return nil, err
	}
	return readerMessages(s, q, pins, func(p *store.GuildPin) *store.GuildMessage { return &p.Message })
}
