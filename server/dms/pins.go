package dms

import (
	"time"

	"sdkpp/server/httpx"
	"sdkpp/server/scopes"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// registerPins adds the pin routes of DM channels, on the patterns of the guild channels' (both
// users of the channel may pin; bots too): Get Channel Pins, Pin Message, Unpin Message and the
// deprecated routes, as package messages serves them for guild channels.
func (s *Service) registerPins(mux httpx.Router) {
	mux.HandleFunc("GET /channels/{channel_id}/messages/pins", s.route(scopes.DMChannelsMessagesRead, s.listPins))
	mux.HandleFunc("PUT /channels/{channel_id}/messages/pins/{message_id}", s.route(scopes.DMMessagesWrite, s.pin))
	mux.HandleFunc("DELETE /channels/{channel_id}/messages/pins/{message_id}", s.route(scopes.DMMessagesWrite, s.unpin))
	mux.HandleFunc("GET /channels/{channel_id}/pins", s.route(scopes.DMChannelsMessagesRead, s.pinnedMessages))
	mux.HandleFunc("PUT /channels/{channel_id}/pins/{message_id}", s.route(scopes.DMMessagesWrite, s.pin))
	mux.HandleFunc("DELETE /channels/{channel_id}/pins/{message_id}", s.route(scopes.DMMessagesWrite, s.unpin))
}

// pin pins the path's message of the caller's DM channel: 204; CHANNEL_PINS_UPDATE to both users
// when it was not pinned yet; 30003 beyond wire.MaxPins.
func (s *Service) pin(q *request) (any, error) {
	return nil, s.pathTx(q, func(st store.Store, emit func(event)) error {
		c, m, err := q.channelMessage(st)
		if err != nil {
			return err
		}
		if at, err := st.DirectMessagePinnedAt(q.ctx, c.ID, m.ID); err != nil || !at.IsZero() {
			return err // pinned already: nothing changes
		}
		if n, err := st.CountDMPins(q.ctx, c.ID); err != nil {
			return err
		} else if n >= wire.MaxPins {
			return wire.Coded(wire.CodeMaxPins, "Maximum number of pins reached (250)")
		}
		if _, err := st.PinDirectMessage(q.ctx, c.ID, m.ID, s.Clock.Now()); err != nil {
			return err
		}
		return s.pinsChanged(q, st, emit, c)
	})
}

// unpin unpins the path's message: 204; CHANNEL_PINS_UPDATE when it was pinned.
func (s *Service) unpin(q *request) (any, error) {
	return nil, s.pathTx(q, func(st store.Store, emit func(event)) error {
		c, m, err := q.channelMessage(st)
		if err != nil {
			return err
		}
		if unpinned, err := st.UnpinDirectMessage(q.ctx, c.ID, m.ID); err != nil || !unpinned {
			return err
		}
		return s.pinsChanged(q, st, emit, c)
	})
}

// pinsChanged queues CHANNEL_PINS_UPDATE (no guild_id) with the time of the channel's newest
// remaining pin to both users (a bot's sessions by DIRECT_MESSAGES).
func (s *Service) pinsChanged(q *request, st store.Store, emit func(event), c *store.DMChannel) error {
	newest, err := st.ListDMPins(q.ctx, c.ID, time.Time{}, 1)
	if err != nil {
		return err
	}
	d := wire.ChannelPinsUpdate{ChannelID: wire.Snowflake(c.ID)}
	if len(newest) == 1 {
		at := timestamp(newest[0].PinnedAt)
		d.LastPinTimestamp = &at
	}
	e, err := audience(q.ctx, st, event{name: gwire.EventChannelPinsUpdate, data: d}, c.UserLow, c.UserHigh)
	if err != nil {
		return err
	}
	emit(e)
	return nil
}

// listPins serves GET /channels/{channel_id}/messages/pins?before=&limit= for a DM channel: the
// pins made before before, the most recent first, limit 1 to 50 (default 50), and has_more.
func (s *Service) listPins(q *request) (any, error) {
	limit, before, err := httpx.QueryTimePage(q.URL.Query(), wire.MaxPinsPage, wire.MaxPinsPage)
	if err != nil {
		return nil, err
	}
	c, err := q.channel(s.Store)
	if err != nil {
		return nil, err
	}
	pins, err := s.Store.ListDMPins(q.ctx, c.ID, before, limit+1)
	if err != nil {
		return nil, err
	}
	out := wire.ChannelPinsOf[wire.Message]{Items: []wire.ChannelPinOf[wire.Message]{}, HasMore: len(pins) > limit}
	for _, p := range pins[:min(len(pins), limit)] {
		m, err := messageObject(q.ctx, s.Store, &p.Message)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, wire.ChannelPinOf[wire.Message]{PinnedAt: timestamp(p.PinnedAt), Message: m})
	}
	return out, nil
}

// pinnedMessages serves the deprecated GET /channels/{channel_id}/pins for a DM channel: its 50
// most recent pins as an array of messages.
func (s *Service) pinnedMessages(q *request) (any, error) {
	c, err := q.channel(s.Store)
	if err != nil {
		return nil, err
	}
	pins, err := s.Store.ListDMPins(q.ctx, c.ID, time.Time{}, wire.MaxPinsPage)
	if err != nil {
		return nil, err
	}
	out := make([]wire.Message, 0, len(pins))
	for _, p := range pins {
		m, err := messageObject(q.ctx, s.Store, &p.Message)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
