package messages

import (
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// SearchIndexer builds guilds' search indexes in the background (package search).
type SearchIndexer interface {
	// Request asks for the guild to be indexed; false when it cannot be queued now.
	Request(guildID uint64) bool
}

// searchQuery reads the query of Search Guild Messages into a store.GuildSearch (channels left
// to the caller's permissions), the channel ids it names, and whether it asks for something no
// stored message has (a webhook author, an attachment, an embed...), which matches nothing.
func searchQuery(v url.Values) (q store.GuildSearch, channels []uint64, none bool, err error) {
	if q.Limit, err = httpx.QueryInt(v, "limit", wire.MaxSearchLimit, 1, wire.MaxSearchLimit); err != nil {
		return q, nil, false, err
	}
	if q.Offset, err = httpx.QueryInt(v, "offset", 0, 0, wire.MaxSearchOffset); err != nil {
		return q, nil, false, err
	}
	if channels, err = httpx.QueryIDs(v, "channel_id", wire.MaxSearchValues); err != nil {
		return q, nil, false, err
	}
	if q.AuthorIDs, err = httpx.QueryIDs(v, "author_id", wire.MaxSearchValues); err != nil {
		return q, nil, false, err
	}
	if q.Mentions, err = httpx.QueryIDs(v, "mentions", wire.MaxSearchValues); err != nil {
		return q, nil, false, err
	}
	for _, bound := range []struct {
		name string
		to   *uint64
	}{{"min_id", &q.MinID}, {"max_id", &q.MaxID}} {
		if *bound.to, err = httpx.QueryID(v, bound.name); err != nil {
			return q, nil, false, err
		}
	}
	if c := v.Get("content"); c != "" {
		if !utf8.ValidString(c) || utf8.RuneCountInString(c) > wire.MaxSearchContentChars {
			return q, nil, false, wire.InvalidAt("content", "BASE_TYPE_MAX_LENGTH", "Must be 1024 or fewer in length.")
		}
		if q.Query = store.FTSQuery(c); q.Query == "" {
			q.Query = `""` // no word: matches nothing
		}
	}
	if v.Has("pinned") {
		b, err := strconv.ParseBool(v.Get("pinned"))
		if err != nil {
			return q, nil, false, wire.InvalidAt("pinned", "BOOLEAN_TYPE_COERCE", "Must be either true or false.")
		}
		q.Pinned = &b
	}
	yes, no := true, false
	for _, t := range v["author_type"] {
		switch t {
		case "user", "-bot":
			q.AuthorBot = &no
		case "bot", "-user":
			q.AuthorBot = &yes
		case "webhook":
			none = true // the service has no webhook messages
		case "-webhook":
		default:
			return q, nil, false, wire.InvalidAt("author_type", "ENUM_TYPE_COERCE", "Value \""+t+"\" is not a valid enum value.")
		}
	}
	for _, h := range v["has"] {
		switch h {
		case "link":
			q.HasLink = &yes
		case "-link":
			q.HasLink = &no
		case "snapshot":
			q.HasSnapshot = &yes
		case "-snapshot":
			q.HasSnapshot = &no
		case "embed", "file", "image", "video", "sound", "sticker", "poll":
			none = true // the service stores no such message
		case "-embed", "-file", "-image", "-video", "-sound", "-sticker", "-poll":
		default:
			return q, nil, false, wire.InvalidAt("has", "ENUM_TYPE_COERCE", "Value \""+h+"\" is not a valid enum value.")
		}
	}
	switch v.Get("sort_by") {
	case "", "timestamp":
	case "relevance":
		q.ByRelevance = true
	default:
		return q, nil, false, wire.InvalidAt("sort_by", "ENUM_TYPE_COERCE", "Value \""+v.Get("sort_by")+"\" is not a valid enum value.")
	}
	switch v.Get("sort_order") {
	case "", "desc":
	case "asc":
		q.Ascending = true
	default:
		return q, nil, false, wire.InvalidAt("sort_order", "ENUM_TYPE_COERCE", "Value \""+v.Get("sort_order")+"\" is not a valid enum value.")
	}
	return q, channels, none, nil
}

// searchMessages serves GET /guilds/{guild_id}/messages/search (rule GLD-3): members only
// (50001); a bot's application must read message content (the MESSAGE_CONTENT intent, 50001
// without). It searches the text channels the caller has VIEW_CHANNEL and READ_MESSAGE_HISTORY
// in, or those of channel_id, each of which must be such a channel of the guild (10003, 50001).
// A guild is indexed the first time it is searched: until its index is built the answer is 202
// with code 110000 and retry_after.
func (s *Service) searchMessages(q *guildaccess.Caller) (any, error) {
	query, named, none, err := searchQuery(q.URL.Query())
	if err != nil {
		return nil, err
	}
	a, err := s.MemberGuild(q)
	if err != nil {
		return nil, err
	}
	if !q.ReadsContent {
		return nil, wire.MissingAccess()
	}
	all, err := s.Store.ListGuildChannels(q.Ctx, a.Guild.ID)
	if err != nil {
		return nil, err
	}
	readable := map[uint64]bool{}
	for i := range all {
		perms, err := a.Channel(q.Ctx, s.Store, &all[i])
		if err != nil {
			return nil, err
		}
		readable[all[i].ID] = guildaccess.TextChannel(all[i].Type) && perms&(guildaccess.PermViewChannel|guildaccess.PermReadMessageHistory) == guildaccess.PermViewChannel|guildaccess.PermReadMessageHistory
	}
	channels := []uint64{}
	if named == nil {
		for _, ch := range all {
			if readable[ch.ID] {
				channels = append(channels, ch.ID)
			}
		}
	}
	for _, id := range named {
		ok, known := readable[id]
		switch {
		case !known:
			return nil, wire.UnknownChannel()
		case !ok:
			return nil, wire.MissingAccess()
		}
		channels = append(channels, id)
	}
	if !none {
		query.ChannelIDs = channels
	}
	query.GuildID = a.Guild.ID
	at, err := s.Store.GuildIndexedAt(q.Ctx, a.Guild.ID)
	if err != nil {
		return nil, err
	}
	if at.IsZero() {
		if s.Search != nil {
			s.Search.Request(a.Guild.ID)
		}
		return httpx.Reply{Status: http.StatusAccepted, Body: wire.SearchIndexNotReady{Code: wire.CodeSearchIndexNotReady,
			Message: "Index not yet available. Try again later", RetryAfter: wire.SearchRetryAfter}}, nil
	}
	total, page, err := s.Store.SearchGuildMessages(q.Ctx, query)
	if err != nil {
		return nil, err
	}
	msgs, err := readerMessages(s, q, page, func(m *store.GuildMessage) *store.GuildMessage { return m })
	if err != nil {
		return nil, err
	}
	out := wire.GuildSearchResult{TotalResults: total, Messages: make([][]wire.GuildMessage, len(msgs)),
		Threads: []struct{}{}, Members: []struct{}{}}
	for i, m := range msgs {
		out.Messages[i] = []wire.GuildMessage{m}
	}
	return out, nil
}
