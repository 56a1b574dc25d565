package messages

import (
	"context"
	"errors"
	"net/http"

	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// PostInteractionMessage creates the message of a CHANNEL_MESSAGE_WITH_SOURCE interaction
// response: botUserID's, in the guild text channel, with interaction_metadata. No permission of
// the bot is needed (the interaction's token is the credential). The guild's bots that view the
// channel get MESSAGE_CREATE, without content for a session lacking MESSAGE_CONTENT that may not
// read it.
func (s *Service) PostInteractionMessage(ctx context.Context, ch *store.GuildChannel, botUserID uint64, content string,
	meta *wire.InteractionMetadata) (wire.InteractionMessage, error) {
	if err := checkContent(&content, true); err != nil {
		return wire.InteractionMessage{}, err
	}
	m := &store.GuildMessage{ID: s.IDs.Next(), ChannelID: ch.ID, GuildID: ch.GuildID, AuthorID: botUserID, Content: content,
		CreatedAt: s.Clock.Now()}
	var err error
	if m.Mentions, err = s.mentions(ctx, ch.GuildID, content); err != nil {
		return wire.InteractionMessage{}, err
	}
	if err := s.saveMessage(ctx, m, true, nil); err != nil {
		return wire.InteractionMessage{}, err
	}
	msg, err := s.messageObject(ctx, m)
	if err != nil {
		return wire.InteractionMessage{}, err
	}
	out := wire.InteractionMessage{GuildMessage: msg, InteractionMetadata: meta}
	if s.Bots == nil {
		return out, nil
	}
	t := ch.Type
	msg.ChannelType = &t
	for _, id := range s.ChannelViewers(ctx, ch) {
		with := wire.InteractionMessage{GuildMessage: msg, InteractionMetadata: meta}
		redacted, _ := contentFor(msg, id, false)
		without := wire.InteractionMessage{GuildMessage: redacted, InteractionMetadata: meta}
		s.Bots.DispatchBotsSplit([]uint64{id}, gwire.IntentGuildMessages, gwire.IntentMessageContent,
			gwire.EventMessageCreate, with, without)
	}
	return out, nil
}

// InteractionTarget returns the message id of channel ch as an interaction's resolved message
// (with content: the invoking user reads it): 404 10008 for an unknown message.
func (s *Service) InteractionTarget(ctx context.Context, ch *store.GuildChannel, id uint64) (wire.GuildMessage, error) {
	m, err := s.Store.GetGuildMessage(ctx, ch.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return wire.GuildMessage{}, &wire.APIError{Status: http.StatusNotFound, Code: 10008, Message: "Unknown Message"}
	}
	if err != nil {
		return wire.GuildMessage{}, err
	}
	return s.messageObject(ctx, m)
}
