package messages

import (
	"context"
	"fmt"
	"slices"
	"time"

	"sdkpp/server/guildaccess"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// page is what the wire form of a set of guild messages needs from the store besides the
// messages themselves, read for the whole set at once: the messages they reply to, pins and
// attachments (a query each per channel, one for a channel's page), users (one query) and
// members with their roles (two per guild). A page of 100 costs what a page of one does.
type page struct {
	refs    map[uint64]*store.GuildMessage // the messages replied to, by id
	pinned  map[uint64]time.Time           // by message id
	atts    map[uint64][]store.GuildAttachment
	users   map[uint64]*store.User
	members map[[2]uint64]store.MemberWithRoles // by guild and user id

	// The wire forms, made once per page: a page's messages share few authors.
	userObjects   map[uint64]wire.User
	memberObjects map[[2]uint64]*wire.Member
}

// loadPage reads the page of msgs.
func (s *Service) loadPage(ctx context.Context, msgs []*store.GuildMessage) (*page, error) {
	p := &page{refs: map[uint64]*store.GuildMessage{}, pinned: map[uint64]time.Time{},
		atts: map[uint64][]store.GuildAttachment{}, members: map[[2]uint64]store.MemberWithRoles{},
		userObjects: map[uint64]wire.User{}, memberObjects: map[[2]uint64]*wire.Member{}}
	var refIDs []uint64
	for _, m := range msgs {
		if r := m.Reference; r != nil && r.Type == store.ReferenceReply {
			refIDs = append(refIDs, r.MessageID)
		}
	}
	all := msgs
	if len(refIDs) > 0 {
		// A reply mostly answers a message shortly before it, on the same page: only the others
		// are read (and what they show besides, below).
		onPage := make(map[uint64]*store.GuildMessage, len(msgs))
		for _, m := range msgs {
			onPage[m.ID] = m
		}
		off := refIDs[:0]
		for _, id := range refIDs {
			if onPage[id] == nil {
				off = append(off, id)
			}
		}
		var found map[uint64]*store.GuildMessage
		if len(off) > 0 {
			var err error
			if found, err = s.Store.GuildMessagesByID(ctx, off); err != nil {
				return nil, fmt.Errorf("messages: replied messages: %w", err)
			}
		}
		for _, m := range msgs {
			if r := m.Reference; r != nil && r.Type == store.ReferenceReply {
				if ref := onPage[r.MessageID]; ref != nil && ref.ChannelID == r.ChannelID {
					p.refs[ref.ID] = ref
				} else if ref, ok := found[r.MessageID]; ok && ref.ChannelID == r.ChannelID {
					p.refs[ref.ID] = ref
					all = append(all, ref)
				}
			}
		}
	}
	byChannel := map[uint64][]uint64{}
	byGuild := map[uint64][]uint64{} // authors and mentions, whose members are shown
	var userIDs []uint64
	for _, m := range all {
		byChannel[m.ChannelID] = append(byChannel[m.ChannelID], m.ID)
		byGuild[m.GuildID] = append(append(byGuild[m.GuildID], m.AuthorID), m.Mentions...)
		userIDs = append(append(userIDs, m.AuthorID), m.Mentions...)
		if m.Snapshot != nil {
			userIDs = append(userIDs, m.Snapshot.Mentions...)
		}
	}
	for ch, ids := range byChannel {
		pinned, err := s.Store.GuildMessagesPinnedAt(ctx, ch, ids)
		if err != nil {
			return nil, fmt.Errorf("messages: pins of channel %d: %w", ch, err)
		}
		atts, err := s.Store.GuildAttachmentsOf(ctx, ch, ids)
		if err != nil {
			return nil, fmt.Errorf("messages: attachments of channel %d: %w", ch, err)
		}
		for id, at := range pinned {
			p.pinned[id] = at
		}
		for id, list := range atts {
			p.atts[id] = list
		}
	}
	var err error
	if p.users, err = s.Store.UsersByID(ctx, distinct(userIDs)); err != nil {
		return nil, fmt.Errorf("messages: users: %w", err)
	}
	for g, ids := range byGuild {
		members, err := s.Store.GuildMembersByID(ctx, g, distinct(ids))
		if err != nil {
			return nil, fmt.Errorf("messages: members of guild %d: %w", g, err)
		}
		for id, m := range members {
			p.members[[2]uint64{g, id}] = m
		}
	}
	return p, nil
}

// messageObjects is messageObject of each of msgs, from one page.
func (s *Service) messageObjects(ctx context.Context, msgs []*store.GuildMessage) ([]wire.GuildMessage, error) {
	p, err := s.loadPage(ctx, msgs)
	if err != nil {
		return nil, err
	}
	out := make([]wire.GuildMessage, 0, len(msgs))
	for _, m := range msgs {
		obj, err := s.fields(p, m)
		if err != nil {
			return nil, err
		}
		if r := m.Reference; r != nil && r.Type == store.ReferenceReply {
			obj.ReferencedMessage.Present = true // null once deleted
			if ref, ok := p.refs[r.MessageID]; ok {
				fields, err := s.fields(p, ref)
				if err != nil {
					return nil, err
				}
				obj.ReferencedMessage.Message = &fields
			}
		}
		out = append(out, obj)
	}
	return out, nil
}

// fields is the wire form of m without referenced_message, from p.
func (s *Service) fields(p *page, m *store.GuildMessage) (wire.GuildMessage, error) {
	out := wire.GuildMessage{ID: wire.Snowflake(m.ID), ChannelID: wire.Snowflake(m.ChannelID), GuildID: wire.Snowflake(m.GuildID),
		Content: m.Content, Timestamp: guildaccess.Timestamp(m.CreatedAt), Mentions: []wire.Mention{}, MentionRoles: []string{},
		Attachments: []wire.Attachment{}, Embeds: []struct{}{}, Components: []struct{}{}}
	if !m.EditedAt.IsZero() {
		e := guildaccess.Timestamp(m.EditedAt)
		out.EditedTimestamp = &e
	}
	_, out.Pinned = p.pinned[m.ID]
	if author, ok := p.user(m.AuthorID); ok {
		out.Author = author
	} else {
		out.Author = wire.User{ID: wire.Snowflake(m.AuthorID), Discriminator: "0"}
	}
	out.Member = p.member(m.GuildID, m.AuthorID)
	for _, id := range m.Mentions {
		if u, ok := p.user(id); ok {
			out.Mentions = append(out.Mentions, wire.Mention{User: u, Member: p.member(m.GuildID, id)})
		}
	}
	out.Attachments = s.attachmentObjects(p.atts[m.ID])
	if err := interactionFields(m, &out); err != nil {
		return out, fmt.Errorf("messages: interaction of message %d: %w", m.ID, err)
	}
	s.referenceFields(p, m, &out)
	return out, nil
}

// user is the wire user of id; false when there is none.
func (p *page) user(id uint64) (wire.User, bool) {
	if obj, ok := p.userObjects[id]; ok {
		return obj, true
	}
	u, ok := p.users[id]
	if !ok {
		return wire.User{}, false
	}
	obj := guildaccess.UserObject(u)
	p.userObjects[id] = obj
	return obj, true
}

// member is the wire member of userID in guildID, nil when it is not one. The messages of a
// page share it: it is not to be changed.
func (p *page) member(guildID, userID uint64) *wire.Member {
	key := [2]uint64{guildID, userID}
	if obj, ok := p.memberObjects[key]; ok {
		return obj
	}
	m, ok := p.members[key]
	if !ok {
		return nil
	}
	obj := guildaccess.MemberFields(&m.Member, m.Roles)
	p.memberObjects[key] = &obj
	return &obj
}

// distinct returns ids sorted, each once.
func distinct(ids []uint64) []uint64 {
	slices.Sort(ids)
	return slices.Compact(ids)
}
