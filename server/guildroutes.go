package server

import (
	"sdkpp/server/channels"
	"sdkpp/server/expressions"
	"sdkpp/server/guildaccess"
	"sdkpp/server/guilds"
	"sdkpp/server/httpx"
	"sdkpp/server/invites"
	"sdkpp/server/messages"
)

// guildServices are the services of the guild resources (one package each), sharing one
// guildaccess.Base.
type guildServices struct {
	base        *guildaccess.Base
	guilds      *guilds.Service
	channels    *channels.Service
	messages    *messages.Service
	invites     *invites.Service
	expressions *expressions.Service
}

// newGuildServices makes the guild services; their Bots, OnMemberLeft and Search are set once
// the hub, guild voice and search exist.
func (s *Server) newGuildServices() *guildServices {
	base := &guildaccess.Base{Store: s.store, Clock: s.cfg.Clock, IDs: s.ids, Logger: s.log.With("component", "guilds")}
	inv := &invites.Service{Base: base, OnTargetUsersJob: s.cfg.OnTargetUsersJob}
	if s.store.Shared() {
		// Another node's jobs come free when their claims end, without a kick here.
		inv.PollJobs = InviteJobPoll
	}
	return &guildServices{base: base, invites: inv,
		guilds:      &guilds.Service{Base: base, Invites: inv},
		channels:    &channels.Service{Base: base},
		messages:    &messages.Service{Base: base, PublicURL: s.url, Counter: s.counter},
		expressions: &expressions.Service{Base: base},
	}
}

// register adds the guild routes to api, the DM routes (registerDMs) under the guild channel
// routes that share their patterns, and the attachments' files to root.
func (g *guildServices) register(api, root httpx.Router, registerDMs func(httpx.Router)) {
	registerDMs(g.base.Shared(api, guildaccess.Merge(g.channels.Shared(), g.messages.Shared())))
	g.guilds.Register(api)
	g.channels.Register(api)
	g.messages.Register(api)
	g.invites.Register(api)
	g.expressions.Register(api)
	api.HandleFunc("POST /guilds/{guild_id}/{action}", g.base.Actions(guildaccess.Merge(g.guilds.Actions(), g.expressions.Actions())))
	g.messages.RegisterAttachments(root)
}
