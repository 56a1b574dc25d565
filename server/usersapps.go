package server

import (
	"context"

	"sdkpp/server/apps"
	"sdkpp/server/gateway"
	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/server/voicestatus"
)

// registerUsersApps adds the routes of applications and their subscriptions (package apps), of
// voice channel statuses and the audit log (package voicestatus); it returns the apps service for the dev routes.
func (s *Server) registerUsersApps(api httpx.Router, gs *guildaccess.Base) *apps.Service {
	as := &apps.Service{Store: s.store, Clock: s.cfg.Clock, IDs: s.ids, Logger: s.log.With("component", "apps"),
		// A privileged intent turned off ends the bot's live sessions that use it (4014).
		OnFlags: func(app *store.Application) {
			s.hub.EndDisallowedSessions(app.BotUserID, apps.DisallowedIntents(app.Flags))
		}}
	as.Register(api)
	s.voiceStatus = &voicestatus.Service{Store: s.store, Clock: s.cfg.Clock, IDs: s.ids,
		Logger: s.log.With("component", "voicestatus"), Events: gs, Voice: s.guildVoice}
	s.voiceStatus.Register(api)
	return as
}

// channelInfo answers Request Channel Info (gateway op 43, rule GW-3).
func (s *Server) channelInfo(ctx context.Context, who gateway.Identity, guildID uint64, fields []string) (any, error) {
	return s.voiceStatus.ChannelInfo(ctx, who.UserID, guildID, fields)
}

// ProxyPrefix is the path prefix of requests from an activity through the platform's proxy. It is
// optional (rule VER-5): /.proxy/<path> is served as /<path> (httpx.OptionalPrefix).
const ProxyPrefix = "/.proxy"

// allowIntents decides which intents a gateway session may identify with (apps.SessionAllows).
func (s *Server) allowIntents(ctx context.Context, who gateway.Identity, intents uint64) (bool, error) {
	return apps.SessionAllows(ctx, s.store, who.AppID, who.Bot, intents)
}

// appFlags gives READY's application its flags (apps.Flags).
func (s *Server) appFlags(ctx context.Context, appID uint64) (uint64, error) {
	return apps.Flags(ctx, s.store, appID)
}
