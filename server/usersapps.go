package server

import (
	"context"

	"sdkpp/server/apps"
	"sdkpp/server/gateway"
	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/voicestatus"
)

// registerUsersApps adds the routes of applications and their subscriptions (package apps), of
// voice channel statuses and the audit log (package voicestatus); it returns the apps service for the dev routes.
func (s *Server) registerUsersApps(api httpx.Router, gs *guildaccess.Base) *apps.Service {
	as := &apps.Service{Store: s.store, Clock: s.cfg.Clock, IDs: s.ids, Logger: s.log.With("component", "apps")}
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

// allowIntents decides which intents a gateway session may identify with: a bot's privileged
// intents need its application's approved or limited flag (rule LIM-4); user sessions of the SDK
// are not bots and need none.
func (s *Server) allowIntents(ctx context.Context, who gateway.Identity, intents uint64) (bool, error) {
	if !who.Bot {
		return true, nil
	}
	flags, err := s.appFlags(ctx, who.AppID)
	if err != nil {
		return false, err
	}
	return apps.AllowsIntents(flags, intents), nil
}

// appFlags gives READY's application its flags (rule APP-1).
func (s *Server) appFlags(ctx context.Context, appID uint64) (uint64, error) {
	app, err := s.store.GetApplication(ctx, appID)
	if err != nil {
		return 0, err
	}
	return app.Flags, nil
}
