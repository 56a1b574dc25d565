package server

import (
	"context"
	"errors"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/server/devseed"
	"sdkpp/server/guilds"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// DevCredentials returns the dev credentials (dev mode), with the application rows' current
// webhook URLs and premium approval.
func (s *Server) DevCredentials() DevCredentials { return s.devCredentials(s.URL()) }

func (s *Server) devCredentials(base string) wire.DevCredentials {
	c := s.creds
	c.WebBase = base
	if base != "" {
		c.APIBase = base + APIVersionPath
	}
	c.Applications = append([]wire.DevApplication(nil), s.creds.Applications...)
	c.Users = append([]wire.DevUser(nil), s.creds.Users...)
	for i := range c.Applications {
		if app, err := s.store.GetApplication(context.Background(), uint64(c.Applications[i].ID)); err == nil {
			c.Applications[i].WebhookURL = app.WebhookURL
			c.Applications[i].PremiumApproved = app.PremiumApproved
		}
	}
	return c
}

// BanUser bans a user until the given time; the zero time bans permanently (rule ST-1).
func (s *Server) BanUser(userID uint64, until time.Time) error {
	return s.accounts.Ban(context.Background(), userID, until)
}

// UnbanUser lifts a ban.
func (s *Server) UnbanUser(userID uint64) error {
	return s.accounts.Unban(context.Background(), userID)
}

// updateApp changes one application row.
func (s *Server) updateApp(appID uint64, change func(*store.Application)) error {
	ctx := context.Background()
	app, err := s.store.GetApplication(ctx, appID)
	if err != nil {
		return err
	}
	change(app)
	return s.store.UpdateApplication(ctx, app)
}

// SetWebhookURL sets an application's webhook URL.
func (s *Server) SetWebhookURL(appID uint64, url string) error {
	return s.updateApp(appID, func(a *store.Application) { a.WebhookURL = url })
}

// SetSDKTermsAccepted records whether an application accepted the SDK terms, which makes
// relationships.read available to it with no separate approval (rule AU-3).
func (s *Server) SetSDKTermsAccepted(appID uint64, accepted bool) error {
	return s.updateApp(appID, func(a *store.Application) { a.SDKTermsAccepted = accepted })
}

// SetPremiumApproved sets whether the application may be granted identify.premium (rule AU-2).
func (s *Server) SetPremiumApproved(appID uint64, approved bool) error {
	return s.updateApp(appID, func(a *store.Application) { a.PremiumApproved = approved })
}

// ConfigureOIDC validates and stores an application's OIDC issuer, as
// PUT /applications/{id}/oidc-config does (rule AU-9). It needs Start to have run.
func (s *Server) ConfigureOIDC(appID uint64, issuer, clientID string) error {
	s.mu.Lock()
	p := s.partner
	s.mu.Unlock()
	if p == nil {
		return errors.New("server: ConfigureOIDC before Start")
	}
	_, err := p.ConfigureOIDC(context.Background(), appID, issuer, clientID)
	return err
}

// AppSpec describes an application for CreateApplication.
type AppSpec = devseed.AppSpec

// CreateApplication creates an application with fresh credentials.
func (s *Server) CreateApplication(spec AppSpec) (wire.DevApplication, error) {
	return s.seeder.CreateApplication(context.Background(), spec)
}

// CreateUser creates a full account; an empty password gets a random one.
func (s *Server) CreateUser(username, password string, premiumType int) (wire.DevUser, error) {
	return s.seeder.CreateUser(context.Background(), username, password, premiumType)
}

// Store returns the server's store, for tests and tools.
func (s *Server) Store() store.Store { return s.store }

// Clock returns the server's clock.
func (s *Server) Clock() clock.Clock { return s.cfg.Clock }

// CreateGuild makes a guild with members and channels (the service has no public route for it:
// SPEC 4.2); POST /dev/guilds does the same in dev mode.
func (s *Server) CreateGuild(spec wire.GuildSpec) (wire.DevGuild, error) {
	return s.createGuild(context.Background(), spec)
}

func (s *Server) createGuild(ctx context.Context, spec wire.GuildSpec) (wire.DevGuild, error) {
	return guilds.Create(ctx, s.store, s.ids, s.cfg.Clock.Now(), spec)
}
