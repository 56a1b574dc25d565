package messages

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"sdkpp/core/internal/sdkerr"
	"sdkpp/core/rest"
	"sdkpp/core/users"
	"sdkpp/wire"
)

// Message limits of the SDK (rule LIM-2): a history request returns at most MaxHistory messages
// from at most the last HistoryWindow.
const (
	MaxHistory    = 200
	HistoryWindow = 72 * time.Hour
)

// Remote is the service's message endpoints, with the caches they fill: the messages and DM
// channels (Cache) and the users who wrote them. Each method takes the Authorization header of
// the request.
type Remote struct {
	API   *rest.Client
	Cache *Cache
	Users *users.Cache
}

// HistoryLimit checks a history request's limit and caps it at MaxHistory (rule LIM-2).
func HistoryLimit(limit int32) (int, error) {
	if limit <= 0 {
		return 0, sdkerr.Invalid("limit must be positive, not %d", limit)
	}
	return min(int(limit), MaxHistory), nil
}

// CheckContent refuses content the service would refuse, before any request.
func CheckContent(content string) error {
	if n := len([]rune(content)); n == 0 || n > wire.MaxMessageContentChars {
		return sdkerr.Invalid("content must be 1 to %d characters, not %d", wire.MaxMessageContentChars, n)
	}
	return nil
}

// channelPath is a channel's messages, or one of them when messageID is not 0.
func channelPath(channelID, messageID uint64) string {
	p := "/channels/" + strconv.FormatUint(channelID, 10) + "/messages"
	if messageID != 0 {
		p += "/" + strconv.FormatUint(messageID, 10)
	}
	return p
}

// LobbyHistory fetches a lobby's newest messages, caches them, and returns their ids, oldest
// first.
func (r *Remote) LobbyHistory(ctx context.Context, auth string, lobbyID uint64, limit int) ([]uint64, error) {
	return fetchHistory(ctx, r, auth, "/lobbies/"+strconv.FormatUint(lobbyID, 10)+"/messages", lobbyID, limit,
		func(w *wire.LobbyMessage) (*Message, *wire.User) { return FromLobby(w), &w.Author })
}

// CachedDirect returns the newest direct messages with a user, oldest first, when the cache
// holds all of them from after cutoff.
func (r *Remote) CachedDirect(recipientID uint64, limit int, cutoff time.Time) ([]uint64, bool) {
	if ch := r.Cache.DMChannel(recipientID); ch != 0 {
		return r.Cache.History(ch, limit, cutoff)
	}
	return nil, false
}

// DirectHistory fetches the newest direct messages with a user, caches them, and returns their
// ids, oldest first.
func (r *Remote) DirectHistory(ctx context.Context, auth string, recipientID uint64, limit int) ([]uint64, error) {
	ch, err := r.DMChannel(ctx, auth, recipientID)
	if err != nil {
		return nil, err
	}
	return fetchHistory(ctx, r, auth, channelPath(ch, 0), ch, limit,
		func(w *wire.Message) (*Message, *wire.User) { return FromDirect(w), &w.Author })
}

// fetchHistory gets a channel's newest messages (of wire type W) from path, caches them and their
// authors, and returns their ids, oldest first. A reply shorter than limit is the whole history
// window.
func fetchHistory[W any](ctx context.Context, r *Remote, auth, path string, channelID uint64, limit int, conv func(*W) (*Message, *wire.User)) ([]uint64, error) {
	var ws []W
	if err := r.API.Do(ctx, rest.Request{Path: path + "?limit=" + strconv.Itoa(limit), Auth: auth}, &ws); err != nil {
		return nil, err
	}
	msgs := make([]*Message, len(ws))
	for i := range ws {
		m, author := conv(&ws[i])
		msgs[i] = m
		r.Users.Put(users.Of(author))
	}
	return r.Cache.StoreHistory(channelID, msgs, limit), nil
}

// DMChannel returns the DM channel with a user, opening it on the service the first time.
func (r *Remote) DMChannel(ctx context.Context, auth string, recipientID uint64) (uint64, error) {
	if id := r.Cache.DMChannel(recipientID); id != 0 {
		return id, nil
	}
	var ch wire.DMChannel
	if err := r.API.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/users/@me/channels", Auth: auth,
		JSON: wire.CreateDMRequest{RecipientID: wire.Snowflake(recipientID)}}, &ch); err != nil {
		return 0, err
	}
	for i := range ch.Recipients {
		r.Users.Put(users.Of(&ch.Recipients[i]))
	}
	r.Cache.SetDMChannel(recipientID, uint64(ch.ID))
	return uint64(ch.ID), nil
}

// SendDirect sends a direct message with sender metadata and returns it as the service stored it.
func (r *Remote) SendDirect(ctx context.Context, auth string, recipientID uint64, content string, metadata map[string]string) (*wire.Message, error) {
	ch, err := r.DMChannel(ctx, auth, recipientID)
	if err != nil {
		return nil, err
	}
	var w wire.Message
	err = r.API.Do(ctx, rest.Request{Method: http.MethodPost, Path: channelPath(ch, 0),
		Auth: auth, JSON: wire.LobbyMessageRequest{Content: content, Metadata: metadata}}, &w)
	return &w, err
}

// EditDirect replaces the content of a direct message the player sent, and returns the message
// as the service answered it (nil when the answer holds none).
func (r *Remote) EditDirect(ctx context.Context, auth string, recipientID, messageID uint64, content string) (*wire.Message, error) {
	ch, err := r.DMChannel(ctx, auth, recipientID)
	if err != nil {
		return nil, err
	}
	var body json.RawMessage
	if err := r.API.Do(ctx, rest.Request{Method: http.MethodPatch, Path: channelPath(ch, messageID), Auth: auth,
		JSON: wire.MessageEditRequest{Content: &content}}, &body); err != nil {
		return nil, err
	}
	var w wire.Message
	if json.Unmarshal(body, &w) != nil || w.ID == 0 {
		return nil, nil
	}
	return &w, nil
}

// DeleteDirect deletes a direct message the player sent, and forgets it.
func (r *Remote) DeleteDirect(ctx context.Context, auth string, recipientID, messageID uint64) error {
	ch, err := r.DMChannel(ctx, auth, recipientID)
	if err != nil {
		return err
	}
	if err := r.API.Do(ctx, rest.Request{Method: http.MethodDelete, Path: channelPath(ch, messageID), Auth: auth}, nil); err != nil {
		return err
	}
	r.Cache.Forget(messageID, ch)
	return nil
}

// Summary is a direct-message conversation: the other user and the newest message.
type Summary struct{ UserID, LastMessageID uint64 }

// Summaries learns the DM channels and their users from the player's channel list (me is the
// player) and returns the conversations with a message, newest first.
func (r *Remote) Summaries(chans []wire.DMChannel, me uint64) []Summary {
	var out []Summary
	for _, ch := range chans {
		for i := range ch.Recipients {
			u := &ch.Recipients[i]
			if uint64(u.ID) == me || u.ID == 0 {
				continue
			}
			r.Users.Put(users.Of(u))
			r.Cache.SetDMChannel(uint64(u.ID), uint64(ch.ID))
			if ch.LastMessageID != nil {
				out = append(out, Summary{UserID: uint64(u.ID), LastMessageID: uint64(*ch.LastMessageID)})
			}
		}
	}
	slices.SortFunc(out, func(a, b Summary) int { return cmp.Compare(b.LastMessageID, a.LastMessageID) })
	return out
}
