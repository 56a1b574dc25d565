package guildaccess

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// ObfuscationOn tells whether a bot session gets channel obfuscation (rule GW-1): its Identify
// set capabilities bit 1<<15, or its application turned the bot setting on.
func ObfuscationOn(capabilities int64, app *store.Application) bool {
	return capabilities&gwire.CapabilityChannelObfuscation != 0 || (app != nil && app.ChannelObfuscation)
}

// ChannelPermissions returns userID's permissions in the channel ch of guild g, its overwrites
// applied (Access.Channel): 0 for a non-member.
func ChannelPermissions(ctx context.Context, st store.Store, g *store.Guild, ch *store.GuildChannel, userID uint64) (uint64, error) {
	a, err := LoadAccess(ctx, st, g, userID)
	if err != nil {
		return 0, err
	}
	return a.Channel(ctx, st, ch)
}

// VisibleChannels returns the channels of list that GET /guilds/{guild_id}/channels returns at
// now: from wire.ChannelsOmittedFrom on, only those whose permissions (perms) hold VIEW_CHANNEL
// (rule GCL-1); before it, all of them.
func VisibleChannels(list []store.GuildChannel, now time.Time, perms func(*store.GuildChannel) (uint64, error)) ([]store.GuildChannel, error) {
	if now.Before(wire.ChannelsOmittedFrom) {
		return list, nil
	}
	out := list[:0:0]
	for i := range list {
		p, err := perms(&list[i])
		if err != nil {
			return nil, err
		}
		if p&PermViewChannel != 0 {
			out = append(out, list[i])
		}
	}
	return out, nil
}

// obfuscatedKept are the fields an obfuscated channel keeps as they are (rule CH-3): the only
// ones a bot can rely on.
var obfuscatedKept = map[string]bool{"id": true, "type": true, "guild_id": true, "position": true, "parent_id": true}

// Obfuscate reduces an encoded channel object of guild guildID to its obfuscated form (rules
// CH-2, CH-3): id, type, guild_id, position and parent_id kept; name "___hidden___"; flags with
// CHANNEL_OBFUSCATED; permission_overwrites one overwrite of the @everyone role (whose id is the
// guild's) denying VIEW_CHANNEL; every other field nulled or reduced (a string, an object and
// application_id to null, a number to 0, a boolean to false, a list to empty).
func Obfuscate(channel json.RawMessage, guildID uint64) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(channel, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("guilds: obfuscate: not a channel object: %v", err)
	}
	out := make(map[string]json.RawMessage, len(fields)+3)
	for k, v := range fields {
		if obfuscatedKept[k] {
			out[k] = v
			continue
		}
		out[k] = reduced(v)
	}
	var flags int64
	if raw, ok := fields["flags"]; ok {
		_ = json.Unmarshal(raw, &flags) // a channel without numeric flags has none
	}
	out["flags"] = json.RawMessage(strconv.FormatInt(flags|wire.ChannelFlagObfuscated, 10))
	out["name"] = json.RawMessage(strconv.Quote(wire.ObfuscatedChannelName))
	out["application_id"] = json.RawMessage("null") // rule CH-1: a snowflake or null
	everyone := strconv.FormatUint(guildID, 10)
	view := strconv.FormatUint(PermViewChannel, 10)
	out["permission_overwrites"] = json.RawMessage(`[{"id":"` + everyone + `","type":0,"allow":"0","deny":"` + view + `"}]`)
	return json.Marshal(out)
}

// reduced is a field's value (valid JSON) with what it said taken out: an empty list, false, 0,
// or null for a string, an object or null.
func reduced(v json.RawMessage) json.RawMessage {
	switch t := bytes.TrimLeft(v, " \t\r\n"); {
	case len(t) == 0:
	case t[0] == '[':
		return json.RawMessage("[]")
	case t[0] == 't' || t[0] == 'f':
		return json.RawMessage("false")
	case t[0] == '-' || (t[0] >= '0' && t[0] <= '9'):
		return json.RawMessage("0")
	}
	return json.RawMessage("null")
}

// ChannelFor is the channel object obj (of channel ch of guild g) as a bot sees it: obfuscated
// when obfuscation is on for its session (ObfuscationOn) and the bot cannot view the channel
// (rules GW-1, CH-3), else as it is.
func ChannelFor(ctx context.Context, st store.Store, g *store.Guild, ch *store.GuildChannel, botUserID uint64, obfuscate bool, obj any) (json.RawMessage, error) {
	raw, err := json.Marshal(obj)
	if err != nil || !obfuscate {
		return raw, err
	}
	perms, err := ChannelPermissions(ctx, st, g, ch, botUserID)
	if err != nil {
		return nil, err
	}
	if perms&PermViewChannel != 0 {
		return raw, nil
	}
	return Obfuscate(raw, g.ID)
}
