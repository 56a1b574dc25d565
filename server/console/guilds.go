package console

import (
	"errors"
	"net/http"
	"strconv"

	"sdkpp/server/store"
)

// guildMessages bounds the recent messages and audit log entries the guild page shows.
const guildMessages = 50

type guildsData struct {
	Guilds []store.Guild
}

func (h *Handler) guilds(w http.ResponseWriter, r *http.Request, rq *request) (string, any, error) {
	if err := openByID(w, r, "guild", "/console/guilds/"); err != nil {
		return "", nil, err
	}
	gs, err := h.Store.ListGuilds(r.Context(), listLimit)
	return "guilds", guildsData{Guilds: gs}, err
}

type guildChannel struct {
	store.GuildChannel
	Lobby uint64 // the lobby linked to the channel, 0 when none
}

type guildMember struct {
	store.GuildMember
	Username string
}

type guildMessage struct {
	store.GuildMessage
	Author   string
	Channel  string
	Mentions []string
}

type guildAudit struct {
	store.AuditEntry
	User string
}

type guildData struct {
	Guild    *store.Guild
	Owner    string
	Features []string
	Channels []guildChannel
	Members  []guildMember
	// MoreMembers tells that the guild has more members than the page lists.
	MoreMembers bool
	Messages    []guildMessage
	Audit       []guildAudit
}

// guild shows a guild: its metadata, channels (with their linked lobbies), members, recent
// messages across its channels with what the moderation of a message looks at (author,
// mentions, edits, replies and forwards), and its audit log.
func (h *Handler) guild(w http.ResponseWriter, r *http.Request, rq *request) (string, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return "", nil, err
	}
	ctx := r.Context()
	g, err := h.Store.GetGuild(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil, notFound("Guild")
	}
	if err != nil {
		return "", nil, err
	}
	username := h.usernames(r)
	d := guildData{Guild: g, Owner: username(g.OwnerID)}
	if d.Features, err = h.Store.GetGuildFeatures(ctx, id); err != nil {
		return "", nil, err
	}
	chs, err := h.Store.ListGuildChannels(ctx, id)
	if err != nil {
		return "", nil, err
	}
	names := map[uint64]string{}
	for _, c := range chs {
		names[c.ID] = c.Name
		gc := guildChannel{GuildChannel: c}
		link, err := h.Store.GetChannelLink(ctx, c.ID)
		switch {
		case err == nil:
			gc.Lobby = link.LobbyID
		case !errors.Is(err, store.ErrNotFound):
			return "", nil, err
		}
		d.Channels = append(d.Channels, gc)
	}
	ms, err := h.Store.ListGuildMembers(ctx, id, 0, listLimit+1)
	if err != nil {
		return "", nil, err
	}
	if len(ms) > listLimit {
		ms, d.MoreMembers = ms[:listLimit], true
	}
	for _, m := range ms {
		d.Members = append(d.Members, guildMember{GuildMember: m, Username: username(m.UserID)})
	}
	msgs, err := h.Store.ListRecentGuildMessages(ctx, id, guildMessages)
	if err != nil {
		return "", nil, err
	}
	for _, m := range msgs {
		gm := guildMessage{GuildMessage: m, Author: username(m.AuthorID), Channel: names[m.ChannelID]}
		for _, u := range m.Mentions {
			gm.Mentions = append(gm.Mentions, username(u))
		}
		d.Messages = append(d.Messages, gm)
	}
	audit, err := h.Store.ListAuditEntries(ctx, id, store.AuditQuery{Limit: guildMessages})
	if err != nil {
		return "", nil, err
	}
	for _, e := range audit {
		d.Audit = append(d.Audit, guildAudit{AuditEntry: e, User: username(e.UserID)})
	}
	return "guild", d, nil
}

// referenceKind names a message reference's type for the guild page.
func referenceKind(t int) string {
	switch t {
	case store.ReferenceReply:
		return "reply to"
	case store.ReferenceForward:
		return "forward of"
	}
	return "reference to"
}

// channelType names the platform's channel types the guild page shows.
func channelType(t int) string {
	if n, ok := map[int]string{0: "text", 2: "voice", 4: "category", 5: "announcement", 13: "stage", 15: "forum"}[t]; ok {
		return n
	}
	return "type " + strconv.Itoa(t)
}
