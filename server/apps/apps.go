// Package apps serves an application to its own bot: the application object with its flags, and
// the subscriptions to its SKUs.
//
// # Routes (under /api/v10)
//
//	GET   /applications/@me                                Bot -> application
//	GET   /oauth2/applications/@me                         Bot -> application
//	GET   /oauth2/applications/{application_id}            Bot (its own id) -> application
//	GET   /oauth2/@me                                      Bearer -> {application, scopes, expires, user?}
//	PATCH /applications/@me                                Bot; {"flags"?: int} -> application
//	GET   /skus/{sku_id}/subscriptions                     Bot; ?user_id&before&after&limit (1-100, default 50) -> [subscription]
//	GET   /skus/{sku_id}/subscriptions/{subscription_id}   Bot; ?user_id -> subscription
//
// before and after of the list are subscription ids, or RFC 3339 times (as some client
// libraries send them).
//
// The application object carries flags, a 32-bit integer with bits 0 to 30, and flags_new, every
// bit as a decimal string (rule APP-1). Request payloads keep using flags: PATCH takes an
// integer, and only the three "limited" gateway intent bits may be set there, and turned on only
// while the application reaches fewer than ReviewThresholdUsers users (rule LIM-4): the distinct
// members of the guilds its bot is in. At or above it, turning one on is 400 50035 on flags
// (APPLICATION_INTENTS_REVIEW_REQUIRED); flags already on stay on and may be turned off. The
// approved intent flags are set only by the dev route, standing in for the platform's review.
// A bot identifies with a privileged intent only when its application has the intent's approved
// or limited flag (AllowsIntents; otherwise the gateway closes with 4014).
//
// A subscription's status follows from its period and cancellation on the service's clock
// (rule ST-3): 0 active, 2 ending (canceled, the period still running), 1 inactive (the period
// over).
//
// # Errors
//
// 401 without a valid bot token; 404 10002 for an application that is not the bot's, 404 10013
// for an unknown user; 400 50035 for a malformed id, query value or body field; 404 0 for an
// unknown SKU or subscription (or one of another application).
package apps

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"sdkpp/internal/clock"
	"sdkpp/server/httpx"
	"sdkpp/server/scopes"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/server/users"
	"sdkpp/server/webhook"
	"sdkpp/wire"
)

// Service serves the routes. Set its fields before Register.
type Service struct {
	Store  store.Store
	Clock  clock.Clock
	IDs    *snowflake.Generator
	Logger *slog.Logger
	// OnFlags, when set, is told an application's flags after PATCH /applications/@me or the dev
	// route changed them (the gateway ends the bot's sessions that lost an intent).
	OnFlags func(app *store.Application)
}

// FlagsChanged tells OnFlags the current flags of application appID (after SetFlags); a store
// failure is logged.
func (s *Service) FlagsChanged(ctx context.Context, appID uint64) {
	if s.OnFlags == nil {
		return
	}
	app, err := s.Store.GetApplication(ctx, appID)
	if err != nil {
		s.Logger.Warn("application flags not applied to sessions", "application_id", appID, "err", err)
		return
	}
	s.OnFlags(app)
}

// Register adds the routes to mux (paths relative to the API base).
func (s *Service) Register(mux httpx.Router) {
	mux.HandleFunc("GET /applications/@me", s.bot(s.getApp))
	mux.HandleFunc("GET /oauth2/applications/@me", s.bot(s.getApp))
	mux.HandleFunc("GET /oauth2/applications/{application_id}", s.bot(s.getAppByID))
	mux.HandleFunc("GET /oauth2/@me", s.authorization)
	mux.HandleFunc("PATCH /applications/@me", s.bot(s.patchApp))
	mux.HandleFunc("GET /skus/{sku_id}/subscriptions", s.bot(s.listSubscriptions))
	mux.HandleFunc("GET /skus/{sku_id}/subscriptions/{subscription_id}", s.bot(s.getSubscription))
}

// bot authenticates a bot token and writes the handler's answer.
func (s *Service) bot(h func(r *http.Request, app *store.Application) (any, error)) http.HandlerFunc {
	return token.Auth{Store: s.Store, Clock: s.Clock}.BotRoute(s.Logger, h)
}

// Object is the wire form of app, with its bot user (rule APP-1 for the flags).
func Object(ctx context.Context, st store.Store, app *store.Application) (wire.Application, error) {
	flags, flagsNew := wire.ApplicationFlags(app.Flags)
	out := wire.Application{ID: wire.Snowflake(app.ID), Name: app.Name, BotPublic: true,
		VerifyKey: webhook.PublicKeyHex(app.WebhookKey), Flags: flags, FlagsNew: flagsNew,
		RedirectURIs: append([]string{}, app.RedirectURIs...)}
	out.Owner = publisherOwner(app)
	if app.BotUserID != 0 {
		u, err := st.GetUser(ctx, app.BotUserID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return wire.Application{}, err
		}
		if u != nil {
			b := users.Object(u, false)
			out.Bot = &b
		}
	}
	return out, nil
}

// teamPseudoUser is the user flag of the pseudo-user that stands for a team (the platform's
// TEAM_PSEUDO_USER, 1 << 10).
const teamPseudoUser = 1 << 10

// publisherOwner is the application's owner as the platform shows an application that a team
// owns: a pseudo-user named for the team. Here the owner is the application's publisher (the
// application itself when it has none). Client libraries read it (discord.py requires it).
func publisherOwner(app *store.Application) *wire.User {
	id := app.PublisherID
	if id == 0 {
		id = app.ID
	}
	return &wire.User{ID: wire.Snowflake(id), Username: "team" + strconv.FormatUint(id, 10), Discriminator: "0000",
		Flags: teamPseudoUser}
}

func (s *Service) getApp(r *http.Request, app *store.Application) (any, error) {
	return Object(r.Context(), s.Store, app)
}

// getAppByID serves GET /oauth2/applications/{application_id}, which client libraries call with
// the bot's own application id: another application is unknown to it (404 10002).
func (s *Service) getAppByID(r *http.Request, app *store.Application) (any, error) {
	id, err := httpx.PathID(r, "application_id")
	if err != nil {
		return nil, err
	}
	if id != app.ID {
		return nil, unknownApplication()
	}
	return Object(r.Context(), s.Store, app)
}

// authorization serves GET /oauth2/@me: the current authorization of a Bearer token, with its
// application (rule APP-1), scopes, expiry and user (with scope identify).
func (s *Service) authorization(w http.ResponseWriter, r *http.Request) {
	out, err := func() (any, error) {
		t, err := token.Auth{Store: s.Store, Clock: s.Clock}.Bearer(r)
		if err != nil {
			return nil, err
		}
		app, err := s.Store.GetApplication(r.Context(), t.AppID)
		if err != nil {
			return nil, err
		}
		obj, err := Object(r.Context(), s.Store, app)
		if err != nil {
			return nil, err
		}
		obj.Bot, obj.RedirectURIs = nil, nil // not a bot's view of its own application
		out := wire.CurrentAuthorization{Application: obj, Scopes: append([]string{}, t.Scopes...),
			Expires: t.ExpiresAt.UTC().Format(time.RFC3339Nano)}
		if scopes.Has(t.Scopes, scopes.Identify) {
			u, err := s.Store.GetUser(r.Context(), t.UserID)
			if err != nil {
				return nil, err
			}
			obj := users.Object(u, users.PremiumVisible(app, t.Scopes))
			out.User = &obj
		}
		return out, nil
	}()
	httpx.Answer(w, r, s.Logger, out, err)
}

// EditableFlags are the flags PATCH /applications/@me may change: the limited gateway intents.
const EditableFlags = wire.AppFlagGatewayPresenceLimited | wire.AppFlagGatewayGuildMembersLimited |
	wire.AppFlagGatewayMessageContentLimited

// patchRequest is the body of PATCH /applications/@me. Flags is the 32-bit integer field
// (rule APP-1: request payloads keep using it).
type patchRequest struct {
	Flags json.RawMessage `json:"flags"`
}

func (s *Service) patchApp(r *http.Request, app *store.Application) (any, error) {
	var body patchRequest
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return nil, err
	}
	if len(body.Flags) > 0 && string(body.Flags) != "null" {
		v, err := strconv.ParseInt(string(body.Flags), 10, 32) // a JSON integer, never a string
		if err != nil || v < 0 {
			return nil, wire.Invalid("flags", "NUMBER_TYPE_COERCE", "Value is not a 32-bit integer.")
		}
		if uint64(v)&^EditableFlags != (app.Flags&wire.AppFlagsLegacyMask)&^EditableFlags {
			return nil, wire.Invalid("flags", "APPLICATION_FLAGS_INVALID", "Only the limited gateway intent flags can be changed.")
		}
		if added := uint64(v) & EditableFlags &^ app.Flags; added != 0 {
			if err := s.checkReviewThreshold(r.Context(), app); err != nil {
				return nil, err
			}
		}
		app.Flags = app.Flags&^EditableFlags | uint64(v)&EditableFlags
	}
	if err := s.Store.UpdateApplication(r.Context(), app); err != nil {
		return nil, err
	}
	if s.OnFlags != nil {
		s.OnFlags(app)
	}
	return Object(r.Context(), s.Store, app)
}

// SetFlags sets every flag of the application and its channel obfuscation bot setting (the dev
// route PUT /dev/applications/{id}/flags). Flags are a decimal string or a JSON number below
// 2^63. 404 10002 for an unknown application.
func SetFlags(ctx context.Context, st store.Store, appID uint64, req wire.ApplicationFlagsRequest) (wire.Application, error) {
	var out wire.Application
	err := st.WithTx(ctx, func(st store.Store) error {
		app, err := st.GetApplication(ctx, appID)
		if errors.Is(err, store.ErrNotFound) {
			return unknownApplication()
		} else if err != nil {
			return err
		}
		if len(req.Flags) > 0 && string(req.Flags) != "null" {
			raw := string(req.Flags)
			if uq, err := strconv.Unquote(raw); err == nil {
				raw = uq
			}
			v, err := strconv.ParseUint(raw, 10, 64)
			if err != nil || v > store.MaxApplicationFlags {
				return wire.Invalid("flags", "NUMBER_TYPE_COERCE", "Value is not a flags integer below 2^63.")
			}
			app.Flags = v
		}
		if req.ChannelObfuscation != nil {
			app.ChannelObfuscation = *req.ChannelObfuscation
		}
		if err := st.UpdateApplication(ctx, app); err != nil {
			return err
		}
		out, err = Object(ctx, st, app)
		return err
	})
	return out, err
}

func unknownApplication() *wire.APIError {
	return &wire.APIError{Status: http.StatusNotFound, Code: wire.CodeUnknownApplication, Message: "Unknown Application"}
}

// SubscriptionObject is the wire form of x at now (its status by rule ST-3).
func SubscriptionObject(x *store.Subscription, now time.Time) wire.Subscription {
	out := wire.Subscription{ID: wire.Snowflake(x.ID), UserID: wire.Snowflake(x.UserID),
		SKUIDs: []wire.Snowflake{wire.Snowflake(x.SKUID)}, EntitlementIDs: []wire.Snowflake{}, RenewalSKUIDs: nil,
		CurrentPeriodStart: x.CurrentPeriodStart.UTC().Format(time.RFC3339Nano),
		CurrentPeriodEnd:   x.CurrentPeriodEnd.UTC().Format(time.RFC3339Nano),
		Status:             wire.SubscriptionStatus(x.CurrentPeriodEnd, x.CanceledAt, now), Country: x.Country}
	if !x.CanceledAt.IsZero() {
		c := x.CanceledAt.UTC().Format(time.RFC3339Nano)
		out.CanceledAt = &c
	}
	return out
}

// sku loads the path's SKU of the application; 404 for another application's.
func (s *Service) sku(r *http.Request, app *store.Application) (*store.SKU, error) {
	id, err := httpx.PathID(r, "sku_id")
	if err != nil {
		return nil, err
	}
	k, err := s.Store.GetSKU(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && k.AppID != app.ID) {
		return nil, wire.NotFound()
	}
	return k, err
}

// Limits of GET /skus/{sku_id}/subscriptions.
const (
	DefaultSubscriptionLimit = 50
	MaxSubscriptionLimit     = 100
)

func (s *Service) listSubscriptions(r *http.Request, app *store.Application) (any, error) {
	k, err := s.sku(r, app)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	var ids [3]uint64
	for i, name := range []string{"user_id", "before", "after"} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		if id, ok := wire.ParseSnowflake(v); ok {
			ids[i] = uint64(id)
			continue
		}
		// before and after may also be a time, as some client libraries send them: the
		// subscriptions made before (after) it.
		at, err := time.Parse(time.RFC3339Nano, v)
		if name == "user_id" || err != nil {
			return nil, wire.Invalid(name, "NUMBER_TYPE_COERCE", "The value is not snowflake.")
		}
		if ids[i] = snowflake.At(at); ids[i] == 0 {
			ids[i] = 1 // an id boundary of 0 would mean none
		}
	}
	limit, err := httpx.QueryLimit(q, DefaultSubscriptionLimit, MaxSubscriptionLimit)
	if err != nil {
		return nil, err
	}
	list, err := s.Store.ListSubscriptions(r.Context(), k.ID, ids[0], ids[1], ids[2], limit)
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	out := make([]wire.Subscription, 0, len(list))
	for i := range list {
		out = append(out, SubscriptionObject(&list[i], now))
	}
	return out, nil
}

func (s *Service) getSubscription(r *http.Request, app *store.Application) (any, error) {
	k, err := s.sku(r, app)
	if err != nil {
		return nil, err
	}
	id, err := httpx.PathID(r, "subscription_id")
	if err != nil {
		return nil, err
	}
	var userID uint64 // a user_id given must be the subscription's
	if v := r.URL.Query().Get("user_id"); v != "" {
		u, ok := wire.ParseSnowflake(v)
		if !ok {
			return nil, wire.Invalid("user_id", "NUMBER_TYPE_COERCE", "The value is not snowflake.")
		}
		userID = uint64(u)
	}
	x, err := s.Store.GetSubscription(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (x.SKUID != k.ID || (userID != 0 && x.UserID != userID))) {
		return nil, wire.NotFound()
	}
	if err != nil {
		return nil, err
	}
	return SubscriptionObject(x, s.Clock.Now()), nil
}

// MaxSKUNameChars bounds a SKU's name.
const MaxSKUNameChars = 100

// CreateSKU makes a SKU of the application (the dev route POST /dev/applications/{id}/skus).
func (s *Service) CreateSKU(ctx context.Context, appID uint64, req wire.SKURequest) (wire.SKU, error) {
	if _, err := s.Store.GetApplication(ctx, appID); errors.Is(err, store.ErrNotFound) {
		return wire.SKU{}, unknownApplication()
	} else if err != nil {
		return wire.SKU{}, err
	}
	switch req.Type {
	case wire.SKUDurable, wire.SKUConsumable, wire.SKUSubscription, wire.SKUSubscriptionGroup:
	default:
		return wire.SKU{}, wire.Invalid("type", "BASE_TYPE_CHOICES", "Value must be one of {2, 3, 5, 6}.")
	}
	if n := utf8.RuneCountInString(req.Name); n < 1 || n > MaxSKUNameChars || !utf8.ValidString(req.Name) {
		return wire.SKU{}, wire.Invalid("name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
	}
	k := &store.SKU{ID: s.IDs.Next(), AppID: appID, Type: req.Type, Name: req.Name, CreatedAt: s.Clock.Now()}
	k.Slug = strconv.FormatUint(k.ID, 10)
	if err := s.Store.CreateSKU(ctx, k); err != nil {
		return wire.SKU{}, err
	}
	return wire.SKU{ID: wire.Snowflake(k.ID), Type: k.Type, ApplicationID: wire.Snowflake(appID), Name: k.Name,
		Slug: k.Slug, Flags: k.Flags}, nil
}

// MaxPeriod bounds a subscription's period.
const MaxPeriod = 366 * 24 * time.Hour

// Subscribe makes a subscription of a user to a subscription SKU, starting now by the service's
// clock (the dev route POST /dev/skus/{sku_id}/subscriptions).
func (s *Service) Subscribe(ctx context.Context, skuID uint64, req wire.SubscriptionRequest) (wire.Subscription, error) {
	k, err := s.Store.GetSKU(ctx, skuID)
	if errors.Is(err, store.ErrNotFound) {
		return wire.Subscription{}, wire.NotFound()
	} else if err != nil {
		return wire.Subscription{}, err
	}
	if k.Type != wire.SKUSubscription {
		return wire.Subscription{}, wire.Invalid("sku_id", "SKU_NOT_SUBSCRIPTION", "The SKU is not a subscription.")
	}
	if _, err := s.Store.GetUser(ctx, uint64(req.UserID)); errors.Is(err, store.ErrNotFound) {
		return wire.Subscription{}, wire.UnknownUser()
	} else if err != nil {
		return wire.Subscription{}, err
	}
	period := time.Duration(req.PeriodSeconds) * time.Second
	if req.PeriodSeconds < 1 || period > MaxPeriod {
		return wire.Subscription{}, wire.Invalid("period_seconds", "NUMBER_TYPE_MAX", "Must be between 1 and 31622400.")
	}
	if len(req.Country) > 2 {
		return wire.Subscription{}, wire.Invalid("country", "BASE_TYPE_MAX_LENGTH", "Must be an ISO 3166-1 alpha-2 code.")
	}
	now := s.Clock.Now()
	x := &store.Subscription{ID: s.IDs.Next(), SKUID: k.ID, AppID: k.AppID, UserID: uint64(req.UserID),
		CurrentPeriodStart: now, CurrentPeriodEnd: now.Add(period), Country: req.Country, CreatedAt: now}
	if err := s.Store.CreateSubscription(ctx, x); err != nil {
		return wire.Subscription{}, err
	}
	return SubscriptionObject(x, now), nil
}

// Cancel cancels a subscription now: it stays ending until its period is over (rule ST-3). A
// canceled subscription stays as it is. 404 for an unknown one.
func (s *Service) Cancel(ctx context.Context, id uint64) (wire.Subscription, error) {
	var out wire.Subscription
	err := s.Store.WithTx(ctx, func(st store.Store) error {
		x, err := st.GetSubscription(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return wire.NotFound()
		} else if err != nil {
			return err
		}
		now := s.Clock.Now()
		if x.CanceledAt.IsZero() {
			x.CanceledAt = now
			if err := st.UpdateSubscription(ctx, x); err != nil {
				return err
			}
		}
		out = SubscriptionObject(x, now)
		return nil
	})
	return out, err
}
