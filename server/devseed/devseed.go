// Package devseed creates applications and users with known credentials: the dev mode's seed data
// (idempotent on an existing data directory) and the helpers tests use to add more.
package devseed

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"sdkpp/server/guilds"
	"sdkpp/server/secret"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/server/webhook"
	"sdkpp/wire"
)

// AppSpec describes an application to create.
type AppSpec struct {
	Name            string
	PublicClient    bool
	PremiumApproved bool
	// SDKTermsAccepted: the application accepted the SDK terms, so relationships.read is
	// available to it (rule AU-3).
	SDKTermsAccepted bool
	ParentID         uint64 // the child's parent; the child joins the parent's publisher
	RedirectURIs     []string
	WebhookURL       string
}

// Seeder creates rows with fresh secrets.
type Seeder struct {
	Store store.Store
	IDs   *snowflake.Generator
	Now   func() time.Time
}

// CreateApplication creates an application, its bot user and its secrets, and returns them in the
// dev credentials shape.
func (s *Seeder) CreateApplication(ctx context.Context, spec AppSpec) (wire.DevApplication, error) {
	id := s.IDs.Next()
	publisher := id
	if spec.ParentID != 0 {
		parent, err := s.Store.GetApplication(ctx, spec.ParentID)
		if err != nil {
			return wire.DevApplication{}, fmt.Errorf("parent application: %w", err)
		}
		publisher = parent.PublisherID
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(secret.Reader, seed); err != nil {
		return wire.DevApplication{}, err
	}
	clientSecret, botToken := secret.Random(24), botTokenFor(id)
	bot := &store.User{ID: s.IDs.Next(), Username: "bot_" + strconv.FormatUint(id, 10), GlobalName: spec.Name,
		Bot: true, CreatedAt: s.Now()}
	app := &store.Application{ID: id, Name: spec.Name, PublisherID: publisher, ParentID: spec.ParentID,
		PublicClient: spec.PublicClient, PremiumApproved: spec.PremiumApproved, SDKTermsAccepted: spec.SDKTermsAccepted,
		RedirectURIs: spec.RedirectURIs, WebhookURL: spec.WebhookURL, ClientSecretHash: secret.Hash(clientSecret), BotTokenHash: secret.Hash(botToken),
		BotUserID: bot.ID, WebhookKey: seed, CreatedAt: s.Now()}
	err := s.Store.WithTx(ctx, func(tx store.Store) error {
		if err := tx.CreateUser(ctx, bot); err != nil {
			return err
		}
		return tx.CreateApplication(ctx, app)
	})
	if err != nil {
		return wire.DevApplication{}, err
	}
	out := wire.DevApplication{ID: wire.Snowflake(id), Name: spec.Name, ClientSecret: clientSecret, BotToken: botToken,
		BotUserID: wire.Snowflake(bot.ID), PublicKey: webhook.PublicKeyHex(seed), RedirectURIs: nonNil(spec.RedirectURIs),
		PublicClient: spec.PublicClient, PremiumApproved: spec.PremiumApproved, WebhookURL: spec.WebhookURL}
	if spec.ParentID != 0 {
		p := wire.Snowflake(spec.ParentID)
		out.ParentApplicationID = &p
	}
	return out, nil
}

// botTokenFor makes a bot token in the platform's look: base64(app id).random.random.
func botTokenFor(id uint64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatUint(id, 10))) + "." + secret.Random(4) + "." + secret.Random(24)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// CreateUser creates a full account with a password.
func (s *Seeder) CreateUser(ctx context.Context, username, password string, premiumType int) (wire.DevUser, error) {
	if password == "" {
		password = secret.Random(12)
	}
	hash, err := secret.HashPassword(password)
	if err != nil {
		return wire.DevUser{}, err
	}
	u := &store.User{ID: s.IDs.Next(), Username: username, GlobalName: displayName(username), PasswordHash: hash,
		PremiumType: premiumType, CreatedAt: s.Now()}
	if err := s.Store.CreateUser(ctx, u); err != nil {
		return wire.DevUser{}, err
	}
	return wire.DevUser{ID: wire.Snowflake(u.ID), Username: username, Password: password, PremiumType: premiumType}, nil
}

func displayName(username string) string {
	if username == "" {
		return ""
	}
	b := []byte(username)
	if b[0] >= 'a' && b[0] <= 'z' {
		b[0] -= 'a' - 'A'
	}
	return string(b)
}

// Names of the seeded applications.
const (
	AppMain    = "sdkpp Demo"
	AppChild   = "sdkpp Demo Companion"
	AppPremium = "sdkpp Premium Partner"
)

const credentialsSetting = "dev.credentials"

// Seed makes sure the dev data exists and returns its credentials (without api_base and
// web_base). On a data directory that has them it changes nothing but the main app's webhook URL
// when webhookURL is given.
//
// Seeded: AppMain (public client, not approved for identify.premium, redirect URIs
// http://127.0.0.1/authorize/callback (any port), sdkpp-<id>:/authorize/callback and
// sdkppdemo:/authorize/callback); AppChild (a child of AppMain, same publisher); AppPremium
// (another publisher, approved for identify.premium); users alice (premium_type 2), bob (0) and
// carol (1) with random passwords; for each of them a guild they own, with the two others as
// members and a few channels (see seedGuild); a random admin token.
func (s *Seeder) Seed(ctx context.Context, webhookURL string) (wire.DevCredentials, error) {
	var creds wire.DevCredentials
	raw, err := s.Store.GetSetting(ctx, credentialsSetting)
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &creds); err != nil {
			return creds, fmt.Errorf("devseed: stored credentials: %w", err)
		}
		if webhookURL != "" && len(creds.Applications) > 0 {
			if err := s.SetWebhookURL(ctx, uint64(creds.Applications[0].ID), webhookURL); err != nil {
				return creds, err
			}
			creds.Applications[0].WebhookURL = webhookURL
			return creds, s.save(ctx, creds)
		}
		return creds, nil
	case !errors.Is(err, store.ErrNotFound):
		return creds, err
	}
	main, err := s.CreateApplication(ctx, AppSpec{Name: AppMain, PublicClient: true, SDKTermsAccepted: true, WebhookURL: webhookURL})
	if err != nil {
		return creds, err
	}
	mainID := uint64(main.ID)
	main.RedirectURIs = []string{"http://127.0.0.1/authorize/callback",
		"sdkpp-" + strconv.FormatUint(mainID, 10) + ":/authorize/callback", "sdkppdemo:/authorize/callback"}
	if err := s.setRedirects(ctx, mainID, main.RedirectURIs); err != nil {
		return creds, err
	}
	child, err := s.CreateApplication(ctx, AppSpec{Name: AppChild, PublicClient: true, SDKTermsAccepted: true, ParentID: mainID,
		RedirectURIs: []string{"http://127.0.0.1/authorize/callback"}})
	if err != nil {
		return creds, err
	}
	premium, err := s.CreateApplication(ctx, AppSpec{Name: AppPremium, PublicClient: true, PremiumApproved: true, SDKTermsAccepted: true,
		RedirectURIs: []string{"http://127.0.0.1/authorize/callback"}})
	if err != nil {
		return creds, err
	}
	creds.Applications = []wire.DevApplication{main, child, premium}
	for _, u := range []struct {
		name    string
		premium int
	}{{"alice", 2}, {"bob", 0}, {"carol", 1}} {
		du, err := s.CreateUser(ctx, u.name, "", u.premium)
		if err != nil {
			return creds, err
		}
		creds.Users = append(creds.Users, du)
	}
	for i, owner := range creds.Users {
		if err := s.seedGuild(ctx, owner, creds.Users, i); err != nil {
			return creds, err
		}
	}
	creds.AdminToken = secret.Token()
	return creds, s.save(ctx, creds)
}

// seedGuild makes "<Name>'s Guild", owned by owner, with the other seeded users as members
// (the next one in the list may manage channels) and channels in two categories. The channels
// are made out of position order, so that sorting by position (rule GCH-1) shows.
func (s *Seeder) seedGuild(ctx context.Context, owner wire.DevUser, all []wire.DevUser, i int) error {
	spec := wire.GuildSpec{Name: displayName(owner.Username) + "'s Guild", OwnerID: owner.ID}
	for j := 1; j < len(all); j++ {
		m := all[(i+j)%len(all)]
		spec.Members = append(spec.Members, wire.GuildMemberSpec{ID: m.ID, ManageChannels: j == 1})
	}
	text, voice := 0, 3
	spec.Channel = []wire.GuildChannelSpec{
		{Name: "Text Channels", Type: wire.ChannelGuildCategory, Position: 0},
		{Name: "looking-for-group", Type: wire.ChannelGuildText, Position: 2, Parent: &text},
		{Name: "general", Type: wire.ChannelGuildText, Position: 1, Parent: &text},
		{Name: "Voice Channels", Type: wire.ChannelGuildCategory, Position: 3},
		{Name: "Lounge", Type: wire.ChannelGuildVoice, Position: 4, Parent: &voice},
	}
	_, err := guilds.Create(ctx, s.Store, s.IDs, s.Now(), spec)
	return err
}

func (s *Seeder) save(ctx context.Context, creds wire.DevCredentials) error {
	raw, err := json.Marshal(creds)
	if err != nil {
		return err
	}
	return s.Store.PutSetting(ctx, credentialsSetting, raw)
}

func (s *Seeder) setRedirects(ctx context.Context, appID uint64, uris []string) error {
	app, err := s.Store.GetApplication(ctx, appID)
	if err != nil {
		return err
	}
	app.RedirectURIs = uris
	return s.Store.UpdateApplication(ctx, app)
}

// SetWebhookURL changes an application's webhook URL.
func (s *Seeder) SetWebhookURL(ctx context.Context, appID uint64, url string) error {
	app, err := s.Store.GetApplication(ctx, appID)
	if err != nil {
		return err
	}
	app.WebhookURL = url
	return s.Store.UpdateApplication(ctx, app)
}
