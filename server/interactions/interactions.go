package interactions

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/scopes"
	"sdkpp/server/secret"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/wire"
)

// Lifetimes of an interaction (the platform's).
const (
	InitialResponseWindow = 3 * time.Second  // the first callback must come within it
	TokenLifetime         = 15 * time.Minute // the token (and an open modal) lasts this long
)

// Dispatch names of the gateway.
const (
	EventInteractionCreate = "INTERACTION_CREATE"
	// EventModalCreate is what the invoking user's sessions get when the app answers with a
	// modal (the platform's client event).
	EventModalCreate = "INTERACTION_MODAL_CREATE"
)

// Notifier delivers interactions to the app's bot sessions and modals to users' sessions
// (package gateway's Hub).
type Notifier interface {
	DispatchBotSessions(userIDs []uint64, event string, data any)
	Dispatch(userID uint64, event string, data any)
}

// Messages creates the messages of interaction responses and reads their target messages
// (messages.Service).
type Messages interface {
	PostInteractionMessage(ctx context.Context, ch *store.GuildChannel, botUserID uint64, content string,
		meta *wire.InteractionMetadata) (wire.InteractionMessage, error)
	InteractionTarget(ctx context.Context, ch *store.GuildChannel, id uint64) (wire.GuildMessage, error)
}

// Interactions and open modals are kept in the store (store.InteractionStore), so that the bot's
// callback and the user's submission may reach any node; answering and submitting are
// conditional updates there, so that each happens once.

// storedField is a modal field as stored: what a submission is checked against.
type storedField struct {
	Path string         `json:"path"`
	C    wire.Component `json:"c"`
	Min  int            `json:"min"`
	Max  int            `json:"max"`
}

func encodeFields(fields []field) (string, error) {
	out := make([]storedField, len(fields))
	for i, f := range fields {
		out[i] = storedField{Path: f.path, C: f.c, Min: f.min, Max: f.max}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("interactions: encode modal fields: %w", err)
	}
	return string(b), nil
}

func decodeFields(s string) ([]field, error) {
	var in []storedField
	if err := json.Unmarshal([]byte(s), &in); err != nil {
		return nil, fmt.Errorf("interactions: stored modal fields: %w", err)
	}
	out := make([]field, len(in))
	for i, f := range in {
		out[i] = field{path: f.Path, c: f.C, min: f.Min, max: f.Max}
	}
	return out, nil
}

// RegisterInteractions adds POST /interactions (a user invokes a command or submits a modal)
// and the callback route.
func (s *Service) RegisterInteractions(mux httpx.Router) {
	mux.HandleFunc("POST /interactions", func(w http.ResponseWriter, r *http.Request) {
		out, err := s.invoke(r)
		httpx.Answer(w, r, s.Logger, out, err)
	})
	mux.HandleFunc("POST /interactions/{id}/{token}/callback", func(w http.ResponseWriter, r *http.Request) {
		out, err := s.callback(r)
		httpx.Answer(w, r, s.Logger, out, err)
	})
}

// acknowledged is the answer to a second initial response.
func acknowledged() error {
	return wire.Coded(wire.CodeInteractionAcknowledged, "Interaction has already been acknowledged.")
}

func unknownInteraction() error {
	return &wire.APIError{Status: http.StatusNotFound, Code: wire.CodeUnknownInteraction, Message: "Unknown interaction"}
}

// sweepEvery is how often, on the Clock, a node deletes the interactions and modals past their
// lifetime.
const sweepEvery = time.Minute

// sweep deletes the interactions and modals past their lifetime, at most once per sweepEvery.
func (s *Service) sweep(ctx context.Context, now time.Time) error {
	if !s.swept.Due(now, sweepEvery) {
		return nil
	}
	return s.Store.SweepInteractions(ctx, now.Add(-TokenLifetime))
}

// invocation is what invoke has loaded: the guild, channel, user's access and the app.
type invocation struct {
	ctx    context.Context
	g      *store.Guild
	ch     *store.GuildChannel
	a      *guildaccess.Access
	perms  uint64 // the user's in the channel
	app    *store.Application
	botIn  bool
	userID uint64
}

// invoke serves POST /interactions: a member who views the channel invokes a command of the app
// (type 2) or submits a modal the app showed them (type 5); the app's bot sessions get
// INTERACTION_CREATE. 204.
func (s *Service) invoke(r *http.Request) (any, error) {
	t, err := token.Auth{Store: s.Store, Clock: s.Clock}.Bearer(r)
	if err != nil {
		return nil, err
	}
	if !scopes.Has(t.Scopes, scopes.Guilds) {
		return nil, wire.MissingAccess()
	}
	var body wire.InvokeInteraction
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return nil, err
	}
	if body.Type != wire.InteractionApplicationCommand && body.Type != wire.InteractionModalSubmit {
		return nil, wire.InvalidAt("type", "BASE_TYPE_CHOICES", "Value must be one of (2, 5).")
	}
	if body.Data == nil {
		return nil, wire.InvalidAt("data", "BASE_TYPE_REQUIRED", "This field is required")
	}
	in, err := s.load(r.Context(), t.UserID, &body)
	if err != nil {
		return nil, err
	}
	ix := wire.Interaction{ID: wire.Snowflake(s.IDs.Next()), ApplicationID: wire.Snowflake(in.app.ID), Type: body.Type,
		GuildID: wire.Snowflake(in.g.ID), ChannelID: wire.Snowflake(in.ch.ID), Version: 1, Locale: "en-US",
		GuildLocale: "en-US", Entitlements: []struct{}{},
		AuthorizingIntegrationOwners: map[string]wire.Snowflake{"0": wire.Snowflake(in.g.ID)}}
	if ix.Channel, err = s.resolvedChannel(in, in.ch); err != nil {
		return nil, err
	}
	if ix.Channel.AppPermissions != nil {
		ix.AppPermissions = *ix.Channel.AppPermissions
	}
	m, err := guildaccess.LoadMember(in.ctx, s.Store, in.g.ID, in.userID, true)
	if err != nil {
		return nil, err
	}
	ix.Member = wire.InteractionMember{Member: m, Permissions: wire.Permissions(in.perms)}
	meta := wire.InteractionMetadata{ID: ix.ID, Type: body.Type, AuthorizingIntegrationOwners: ix.AuthorizingIntegrationOwners}
	if m.User != nil {
		meta.User = *m.User
	}
	if body.Type == wire.InteractionApplicationCommand {
		if ix.Data, err = s.command(in, body.Data, &meta); err != nil {
			return nil, err
		}
	} else if ix.Data, err = s.submit(in, body.Data); err != nil {
		return nil, err
	}
	b := make([]byte, 48)
	_, _ = rand.Read(b)
	ix.Token = base64.RawURLEncoding.EncodeToString(b)
	now := s.Clock.Now()
	if err := s.sweep(in.ctx, now); err != nil {
		return nil, err
	}
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("interactions: encode metadata: %w", err)
	}
	if err := s.Store.PutInteraction(in.ctx, &store.PendingInteraction{ID: uint64(ix.ID), AppID: in.app.ID,
		BotUserID: in.app.BotUserID, UserID: in.userID, ChannelID: in.ch.ID, Kind: body.Type,
		TokenHash: secret.Hash(ix.Token), Meta: string(metaJSON), CreatedAt: now}); err != nil {
		return nil, err
	}
	if s.Notifier != nil {
		s.Notifier.DispatchBotSessions([]uint64{in.app.BotUserID}, EventInteractionCreate, ix)
	}
	return nil, nil
}

// load checks the invocation's guild, channel and app: 404 10004, 10003 or 10002 for unknown
// ones, 403 50001 when the user does not view the channel.
func (s *Service) load(ctx context.Context, userID uint64, body *wire.InvokeInteraction) (*invocation, error) {
	in := &invocation{ctx: ctx, userID: userID}
	var err error
	if in.g, err = s.Store.GetGuild(ctx, uint64(body.GuildID)); errors.Is(err, store.ErrNotFound) {
		return nil, wire.UnknownGuild()
	} else if err != nil {
		return nil, err
	}
	if in.ch, err = s.Store.GetGuildChannel(ctx, uint64(body.ChannelID)); errors.Is(err, store.ErrNotFound) ||
		(err == nil && in.ch.GuildID != in.g.ID) {
		return nil, wire.UnknownChannel()
	} else if err != nil {
		return nil, err
	}
	if in.a, err = guildaccess.LoadAccess(ctx, s.Store, in.g, userID); err != nil {
		return nil, err
	}
	if in.perms, err = in.a.Channel(ctx, s.Store, in.ch); err != nil {
		return nil, err
	}
	if !in.a.IsMember() || in.perms&guildaccess.PermViewChannel == 0 {
		return nil, wire.MissingAccess()
	}
	if in.app, err = s.Store.GetApplication(ctx, uint64(body.ApplicationID)); errors.Is(err, store.ErrNotFound) {
		return nil, &wire.APIError{Status: http.StatusNotFound, Code: wire.CodeUnknownApplication, Message: "Unknown Application"}
	} else if err != nil {
		return nil, err
	}
	switch _, err := s.Store.GetGuildMember(ctx, in.g.ID, in.app.BotUserID); {
	case err == nil:
		in.botIn = true
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	return in, nil
}

// resolvedChannel is ch as an interaction carries it: with app_permissions only when the app's
// bot user is in the guild (rule INT-1).
func (s *Service) resolvedChannel(in *invocation, ch *store.GuildChannel) (wire.ResolvedChannel, error) {
	out := wire.ResolvedChannel{ID: wire.Snowflake(ch.ID), Type: ch.Type, Name: ch.Name}
	if ch.ParentID != 0 {
		p := wire.Snowflake(ch.ParentID)
		out.ParentID = &p
	}
	perms, err := in.a.Channel(in.ctx, s.Store, ch)
	if err != nil {
		return out, err
	}
	out.Permissions = wire.Permissions(perms)
	if in.botIn {
		app, err := guildaccess.ChannelPermissions(in.ctx, s.Store, in.g, ch, in.app.BotUserID)
		if err != nil {
			return out, err
		}
		p := wire.Permissions(app)
		out.AppPermissions = &p
	}
	return out, nil
}

// command finds the invoked command, the guild's of the app or (when the bot is in the guild)
// a global one, and builds the interaction's data with its resolved objects: 404 10063 for
// another command.
func (s *Service) command(in *invocation, d *wire.InvocationData, meta *wire.InteractionMetadata) (wire.InteractionData, error) {
	typ := d.Type
	if typ == 0 {
		typ = wire.CommandChatInput
	}
	var cmd *wire.ApplicationCommand
	candidates, err := s.Commands(in.ctx, in.app.ID, in.g.ID)
	if err != nil {
		return wire.InteractionData{}, err
	}
	if in.botIn {
		global, err := s.Commands(in.ctx, in.app.ID, 0)
		if err != nil {
			return wire.InteractionData{}, err
		}
		candidates = append(candidates, global...)
	}
	for i := range candidates {
		if candidates[i].ID == d.ID && candidates[i].Name == d.Name && candidates[i].Type == typ {
			cmd = &candidates[i]
		}
	}
	if cmd == nil {
		return wire.InteractionData{}, unknownCommand()
	}
	out := wire.InteractionData{ID: cmd.ID, Name: cmd.Name, Type: cmd.Type, GuildID: cmd.GuildID, TargetID: d.TargetID}
	res := &wire.Resolved{}
	switch {
	case cmd.Type == wire.CommandChatInput && d.TargetID != nil:
		return out, wire.InvalidAt("data.target_id", "INTERACTION_TARGET_NOT_ALLOWED", "A CHAT_INPUT command has no target.")
	case cmd.Type != wire.CommandChatInput && d.TargetID == nil:
		return out, wire.InvalidAt("data.target_id", "BASE_TYPE_REQUIRED", "This field is required")
	case cmd.Type != wire.CommandChatInput && len(d.Options) > 0:
		return out, wire.InvalidAt("data.options", "INTERACTION_OPTIONS_NOT_ALLOWED", "A context-menu command has no options.")
	case cmd.Type == wire.CommandUser:
		u, err := s.resolveUser(in, res, uint64(*d.TargetID), "data.target_id")
		if err != nil {
			return out, err
		}
		meta.TargetUser = &u
	case cmd.Type == wire.CommandMessage:
		m, err := s.Messages.InteractionTarget(in.ctx, in.ch, uint64(*d.TargetID))
		if err != nil {
			return out, err
		}
		res.Messages = map[string]wire.GuildMessage{m.ID.String(): m}
		meta.TargetMessageID = d.TargetID
	default:
		opts, err := s.options(in, res, cmd.Options, d.Options)
		if err != nil {
			return out, err
		}
		out.Options = opts
	}
	if res.Users != nil || res.Messages != nil || res.Channels != nil || res.Roles != nil {
		out.Resolved = res
	}
	return out, nil
}

// resolveUser adds a user (and member, when in the guild) to res.
func (s *Service) resolveUser(in *invocation, res *wire.Resolved, id uint64, path string) (wire.User, error) {
	u, err := s.Store.GetUser(in.ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return wire.User{}, wire.InvalidAt(path, "INTERACTION_UNKNOWN_USER", "Unknown user.")
	}
	if err != nil {
		return wire.User{}, err
	}
	out := wire.User{ID: wire.Snowflake(u.ID), Username: u.Username, Discriminator: "0", Bot: u.Bot}
	if u.GlobalName != "" {
		n := u.GlobalName
		out.GlobalName = &n
	}
	if res.Users == nil {
		res.Users = map[string]wire.User{}
	}
	res.Users[out.ID.String()] = out
	m, err := guildaccess.LoadMember(in.ctx, s.Store, in.g.ID, id, false)
	if err == nil {
		if res.Members == nil {
			res.Members = map[string]wire.Member{}
		}
		res.Members[out.ID.String()] = m
	} else if apiErr := (*wire.APIError)(nil); !errors.As(err, &apiErr) {
		return out, err
	}
	return out, nil
}

// options checks the given options against the command's (known names, each once, required
// ones present, values of their types) and resolves users, channels and roles.
func (s *Service) options(in *invocation, res *wire.Resolved, spec []wire.CommandOption, given []wire.InteractionValue) ([]wire.InteractionValue, error) {
	seen := map[string]bool{}
	out := make([]wire.InteractionValue, 0, len(given))
	for i, v := range given {
		path := "data.options." + strconv.Itoa(i)
		var o *wire.CommandOption
		for j := range spec {
			if spec[j].Name == v.Name {
				o = &spec[j]
			}
		}
		if o == nil || seen[v.Name] {
			return nil, wire.InvalidAt(path+".name", "INTERACTION_UNKNOWN_OPTION", "Unknown or repeated option.")
		}
		seen[v.Name] = true
		v.Type = o.Type
		if err := s.optionValue(in, res, path+".value", o.Type, v.Value); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	for _, o := range spec {
		if o.Required && !seen[o.Name] {
			return nil, wire.InvalidAt("data.options", "BASE_TYPE_REQUIRED", "Option "+o.Name+" is required.")
		}
	}
	return out, nil
}

// optionValue checks an option's value against its type and resolves what it names.
func (s *Service) optionValue(in *invocation, res *wire.Resolved, path string, typ int, raw json.RawMessage) error {
	bad := func(code string) error { return wire.InvalidAt(path, code, "Invalid value for the option's type.") }
	snowflake := func() (uint64, error) {
		var str string
		if json.Unmarshal(raw, &str) != nil {
			return 0, bad("NUMBER_TYPE_COERCE")
		}
		id, ok := wire.ParseSnowflake(str)
		if !ok {
			return 0, bad("NUMBER_TYPE_COERCE")
		}
		return uint64(id), nil
	}
	switch typ {
	case 3: // STRING
		var v string
		if json.Unmarshal(raw, &v) != nil || v == "" || len([]rune(v)) > 6000 {
			return bad("STRING_TYPE_CONVERT")
		}
	case 4: // INTEGER
		var v int64
		if json.Unmarshal(raw, &v) != nil {
			return bad("NUMBER_TYPE_COERCE")
		}
	case 10: // NUMBER
		var v float64
		if json.Unmarshal(raw, &v) != nil {
			return bad("NUMBER_TYPE_COERCE")
		}
	case 5: // BOOLEAN
		var v bool
		if json.Unmarshal(raw, &v) != nil {
			return bad("BOOLEAN_TYPE_CONVERT")
		}
	case 6: // USER
		id, err := snowflake()
		if err != nil {
			return err
		}
		_, err = s.resolveUser(in, res, id, path)
		return err
	case 7: // CHANNEL
		id, err := snowflake()
		if err != nil {
			return err
		}
		ch, err := s.Store.GetGuildChannel(in.ctx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && ch.GuildID != in.g.ID) {
			return bad("INTERACTION_UNKNOWN_CHANNEL")
		}
		if err != nil {
			return err
		}
		rc, err := s.resolvedChannel(in, ch)
		if err != nil {
			return err
		}
		if res.Channels == nil {
			res.Channels = map[string]wire.ResolvedChannel{}
		}
		res.Channels[rc.ID.String()] = rc
	case 8, 9: // ROLE, MENTIONABLE
		id, err := snowflake()
		if err != nil {
			return err
		}
		for _, r := range in.a.Roles {
			if r.ID == id {
				if res.Roles == nil {
					res.Roles = map[string]wire.Role{}
				}
				res.Roles[strconv.FormatUint(id, 10)] = guildaccess.RoleObject(&r)
				return nil
			}
		}
		if typ == 9 {
			_, err := s.resolveUser(in, res, id, path)
			return err
		}
		return bad("INTERACTION_UNKNOWN_ROLE")
	default: // ATTACHMENT
		return wire.InvalidAt(path, "INTERACTION_ATTACHMENT_UNSUPPORTED", "Attachment options are not supported here.")
	}
	return nil
}

// submit checks a modal submission against the open modal it answers (data.id, the id of the
// interaction that opened it; its custom_id) and closes that modal.
func (s *Service) submit(in *invocation, d *wire.InvocationData) (wire.InteractionData, error) {
	m, err := s.Store.GetModal(in.ctx, uint64(d.ID))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return wire.InteractionData{}, unknownInteraction()
	case err != nil:
		return wire.InteractionData{}, err
	}
	if s.Clock.Now().Sub(m.OpenedAt) >= TokenLifetime || m.UserID != in.userID || m.AppID != in.app.ID ||
		m.GuildID != in.g.ID || m.ChannelID != in.ch.ID {
		return wire.InteractionData{}, unknownInteraction()
	}
	if d.CustomID != m.CustomID {
		return wire.InteractionData{}, wire.InvalidAt("data.custom_id", "MODAL_CUSTOM_ID_MISMATCH", "Not the modal's custom_id.")
	}
	fields, err := decodeFields(m.Fields)
	if err != nil {
		return wire.InteractionData{}, err
	}
	if err := checkSubmit(fields, d.Components); err != nil {
		return wire.InteractionData{}, err
	}
	switch err := s.Store.DeleteModal(in.ctx, m.ID); {
	case errors.Is(err, store.ErrNotFound): // submitted meanwhile, maybe on another node
		return wire.InteractionData{}, unknownInteraction()
	case err != nil:
		return wire.InteractionData{}, err
	}
	return wire.InteractionData{CustomID: d.CustomID, Components: d.Components}, nil
}

// callback serves POST /interactions/{id}/{token}/callback (the token is the credential): the
// initial response, once (40060 after), within 3 seconds and the token's 15 minutes (404 10062
// after): 4 posts the bot's message with interaction_metadata, 5 defers, 9 shows a modal to the
// invoking user (not in answer to a modal submission). 204.
func (s *Service) callback(r *http.Request) (any, error) {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	p, err := s.Store.GetInteraction(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, unknownInteraction()
	case err != nil:
		return nil, err
	}
	if subtle.ConstantTimeCompare(p.TokenHash, secret.Hash(r.PathValue("token"))) != 1 {
		return nil, unknownInteraction()
	}
	var body wire.InteractionCallback
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return nil, err
	}
	var modal wire.ModalData
	var fields []field
	var content string
	switch body.Type {
	case wire.CallbackChannelMessage:
		var msg wire.CallbackMessage
		if len(body.Data) == 0 || json.Unmarshal(body.Data, &msg) != nil || msg.Content == nil {
			return nil, wire.InvalidAt("data.content", "BASE_TYPE_REQUIRED", "This field is required")
		}
		if err := length("data.content", *msg.Content, 1, wire.MaxMessageContentChars); err != nil {
			return nil, err
		}
		content = *msg.Content
	case wire.CallbackDeferredChannelMessage:
	case wire.CallbackModal:
		if p.Kind == wire.InteractionModalSubmit {
			return nil, wire.InvalidAt("type", "INTERACTION_MODAL_NOT_ALLOWED", "A modal submission cannot be answered with a modal.")
		}
		if len(body.Data) == 0 || json.Unmarshal(body.Data, &modal) != nil {
			return nil, wire.InvalidAt("data", "BASE_TYPE_REQUIRED", "This field is required")
		}
		if fields, err = checkModal(&modal); err != nil {
			return nil, err
		}
	default:
		return nil, wire.InvalidAt("type", "BASE_TYPE_CHOICES", "Value must be one of (4, 5, 9).")
	}
	now := s.Clock.Now()
	switch age := now.Sub(p.CreatedAt); {
	case age >= TokenLifetime:
		return nil, unknownInteraction()
	case p.Answered:
		return nil, acknowledged()
	case age > InitialResponseWindow:
		return nil, unknownInteraction()
	}
	ch, err := s.Store.GetGuildChannel(ctx, p.ChannelID)
	switch {
	case errors.Is(err, store.ErrNotFound): // deleted since
		return nil, unknownInteraction()
	case err != nil:
		return nil, err
	}
	err = s.Store.WithTx(ctx, func(tx store.Store) error {
		if err := tx.AnswerInteraction(ctx, id); err != nil {
			return err
		}
		if body.Type != wire.CallbackModal {
			return nil
		}
		enc, err := encodeFields(fields)
		if err != nil {
			return err
		}
		return tx.PutModal(ctx, &store.OpenModal{ID: id, AppID: p.AppID, UserID: p.UserID, GuildID: ch.GuildID,
			ChannelID: ch.ID, CustomID: modal.CustomID, Fields: enc, OpenedAt: now})
	})
	switch {
	case errors.Is(err, store.ErrConflict): // answered meanwhile, maybe on another node
		return nil, acknowledged()
	case errors.Is(err, store.ErrNotFound): // swept meanwhile
		return nil, unknownInteraction()
	case err != nil:
		return nil, err
	}
	switch body.Type {
	case wire.CallbackChannelMessage:
		var meta wire.InteractionMetadata
		if err := json.Unmarshal([]byte(p.Meta), &meta); err != nil {
			return nil, fmt.Errorf("interactions: stored metadata: %w", err)
		}
		if _, err := s.Messages.PostInteractionMessage(ctx, ch, p.BotUserID, content, &meta); err != nil {
			return nil, err
		}
	case wire.CallbackModal:
		if s.Notifier != nil {
			s.Notifier.Dispatch(p.UserID, EventModalCreate, wire.ModalCreate{ID: wire.Snowflake(id), ApplicationID: wire.Snowflake(p.AppID),
				GuildID: wire.Snowflake(ch.GuildID), ChannelID: wire.Snowflake(ch.ID), CustomID: modal.CustomID,
				Title: modal.Title, Components: modal.Components})
		}
	}
	return nil, nil
}
