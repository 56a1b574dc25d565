package messages

import (
	"context"
	"encoding/json"
	"errors"

	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// interactionRecord is what a guild message keeps of the interaction it answers
// (store.GuildMessage.Interaction).
type interactionRecord struct {
	Type int                      `json:"type"`
	App  wire.Snowflake           `json:"application_id"`
	Meta wire.InteractionMetadata `json:"interaction_metadata"`
}

// interactionType is the message type of a response to the interaction meta describes:
// CHAT_INPUT_COMMAND (20) for a slash command's, CONTEXT_MENU_COMMAND (23) for a user or
// message command's (which has a target), DEFAULT for a modal submission's.
func interactionType(meta *wire.InteractionMetadata) int {
	switch {
	case meta.Type != wire.InteractionApplicationCommand:
		return 0
	case meta.TargetUser != nil || meta.TargetMessageID != nil:
		return wire.MessageTypeContextMenuCommand
	default:
		return wire.MessageTypeChatInputCommand
	}
}

// interactionFields sets out's type, application_id, webhook_id and interaction_metadata from
// m's record, when m answers an interaction.
func interactionFields(m *store.GuildMessage, out *wire.GuildMessage) error {
	if m.Interaction == nil {
		return nil
	}
	var rec interactionRecord
	if err := json.Unmarshal(m.Interaction, &rec); err != nil {
		return err
	}
	app := rec.App
	out.Type, out.ApplicationID, out.WebhookID, out.InteractionMetadata = rec.Type, &app, &app, &rec.Meta
	return nil
}

// PostInteractionMessage creates the message of an interaction's response or follow-up:
// botUserID's, in the guild text channel, of the interaction's type, with application_id,
// webhook_id and interaction_metadata. No permission of the bot is needed (the interaction's
// token is the credential). An ephemeral one (flags 64) is not kept in the channel and goes to
// no bot: the caller delivers it to the invoking user. Otherwise the guild's bots that view the
// channel get MESSAGE_CREATE, without content for a session lacking MESSAGE_CONTENT that may not
// read it. allowed (nil: all) says which of content's mentions ping.
func (s *Service) PostInteractionMessage(ctx context.Context, ch *store.GuildChannel, botUserID, appID uint64, content string,
	flags int, allowed *wire.AllowedMentions, meta *wire.InteractionMetadata) (wire.GuildMessage, error) {
	if err := checkContent(&content, true); err != nil {
		return wire.GuildMessage{}, err
	}
	rec, err := json.Marshal(interactionRecord{Type: interactionType(meta), App: wire.Snowflake(appID), Meta: *meta})
	if err != nil {
		return wire.GuildMessage{}, err
	}
	m := &store.GuildMessage{ID: s.IDs.Next(), ChannelID: ch.ID, GuildID: ch.GuildID, AuthorID: botUserID, Content: content,
		CreatedAt: s.Clock.Now(), Interaction: rec}
	if m.Mentions, err = s.pings(ctx, m, allowed); err != nil {
		return wire.GuildMessage{}, err
	}
	if flags&wire.MessageFlagEphemeral != 0 {
		out, err := s.messageFields(ctx, m)
		out.Flags = wire.MessageFlagEphemeral
		return out, err
	}
	if err := s.saveMessage(ctx, m, true, nil); err != nil {
		return wire.GuildMessage{}, err
	}
	out, err := s.messageObject(ctx, m)
	if err != nil {
		return wire.GuildMessage{}, err
	}
	s.messageEvent(ctx, ch, gwire.EventMessageCreate, out)
	return out, nil
}

// InteractionMessage returns message id of channel ch, one that answers an interaction (404
// 10008 for any other).
func (s *Service) InteractionMessage(ctx context.Context, ch *store.GuildChannel, id uint64) (wire.GuildMessage, error) {
	m, err := s.interactionMessage(ctx, ch, id)
	if err != nil {
		return wire.GuildMessage{}, err
	}
	return s.messageObject(ctx, m)
}

func (s *Service) interactionMessage(ctx context.Context, ch *store.GuildChannel, id uint64) (*store.GuildMessage, error) {
	m, err := s.Store.GetGuildMessage(ctx, ch.ID, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && m.Interaction == nil) {
		return nil, wire.UnknownMessage()
	}
	return m, err
}

// EditInteractionMessage replaces the content of message id of channel ch, an interaction's
// response or follow-up; the guild's bots get MESSAGE_UPDATE. allowed (nil: all) says which of
// content's mentions ping.
func (s *Service) EditInteractionMessage(ctx context.Context, ch *store.GuildChannel, id uint64, content string,
	allowed *wire.AllowedMentions) (wire.GuildMessage, error) {
	if err := checkContent(&content, true); err != nil {
		return wire.GuildMessage{}, err
	}
	m, err := s.interactionMessage(ctx, ch, id)
	if err != nil {
		return wire.GuildMessage{}, err
	}
	m.Content, m.EditedAt = content, s.Clock.Now()
	if m.Mentions, err = s.pings(ctx, m, allowed); err != nil {
		return wire.GuildMessage{}, err
	}
	if err := s.saveMessage(ctx, m, false, nil); err != nil {
		return wire.GuildMessage{}, err
	}
	out, err := s.messageObject(ctx, m)
	if err != nil {
		return wire.GuildMessage{}, err
	}
	s.messageEvent(ctx, ch, gwire.EventMessageUpdate, out)
	return out, nil
}

// DeleteInteractionMessage deletes message id of channel ch, an interaction's response or
// follow-up; the guild's bots get MESSAGE_DELETE.
func (s *Service) DeleteInteractionMessage(ctx context.Context, ch *store.GuildChannel, id uint64) error {
	if _, err := s.interactionMessage(ctx, ch, id); err != nil {
		return err
	}
	if err := s.Store.DeleteGuildMessage(ctx, ch.ID, id); err != nil {
		return err
	}
	s.messageEvent(ctx, ch, gwire.EventMessageDelete, wire.GuildMessageDelete{ID: wire.Snowflake(id),
		ChannelID: wire.Snowflake(ch.ID), GuildID: wire.Snowflake(ch.GuildID)})
	return nil
}

// InteractionTarget returns the message id of channel ch as an interaction's resolved message
// (with content: the invoking user reads it): 404 10008 for an unknown message.
func (s *Service) InteractionTarget(ctx context.Context, ch *store.GuildChannel, id uint64) (wire.GuildMessage, error) {
	m, err := s.Store.GetGuildMessage(ctx, ch.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return wire.GuildMessage{}, wire.UnknownMessage()
	}
	if err != nil {
		return wire.GuildMessage{}, err
	}
	return s.messageObject(ctx, m)
}
