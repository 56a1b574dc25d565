package gateway

import (
	"context"
	"encoding/json"
	"errors"

	"sdkpp/server/gateway/internal/payload"
	"sdkpp/server/gateway/internal/wsframe"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// channelInfoFields are the fields Request Channel Info may ask for.
var channelInfoFields = map[string]bool{gwire.ChannelInfoFieldStatus: true, gwire.ChannelInfoFieldStartTime: true}

// channelInfo serves Request Channel Info (op 43, rule GW-3) of an identified connection: a
// malformed payload (no guild_id, fields not a list of known field names) closes it with 4002;
// the answer, Config.ChannelInfo's, comes as a CHANNEL_INFO dispatch to the session. A request the
// service refuses (the user is not in the guild: a *wire.APIError) gets no answer.
func (c *conn) channelInfo(d json.RawMessage) (wsframe.Close, bool) {
	if !c.authed {
		return wsframe.Close{Code: gwire.CloseNotAuthenticated, Reason: "not authenticated"}, true
	}
	var req gwire.RequestChannelInfo
	if !payload.DecodeObject(d, &req) || req.GuildID == 0 || req.GuildID > wire.MaxSnowflake {
		return decodeError("invalid request channel info")
	}
	for _, f := range req.Fields {
		if !channelInfoFields[f] {
			return decodeError("invalid request channel info field")
		}
	}
	s := c.session()
	if s.ID == "" { // the session ended under the connection: the loop is being kicked
		return wsframe.Close{}, false
	}
	ctx, cancel := context.WithTimeout(c.h.ctx, c.h.cfg.WriteTimeout)
	info, err := c.h.cfg.ChannelInfo(ctx, s.Identity, uint64(req.GuildID), req.Fields)
	cancel()
	var refused *wire.APIError
	switch {
	case errors.As(err, &refused):
		return wsframe.Close{}, false
	case err != nil:
		c.h.log.Error("gateway: request channel info", "guild_id", uint64(req.GuildID), "err", err)
		return wsframe.Close{}, false
	}
	c.h.DispatchSession(s.ID, gwire.EventChannelInfo, info)
	return wsframe.Close{}, false
}
