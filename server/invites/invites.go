package invites

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
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

// route authenticates a Bearer token carrying scope and writes the handler's answer.
func (s *Service) route(scope string, h func(r *http.Request, t *store.Token) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := func() (any, error) {
			t, err := token.Auth{Store: s.Store, Clock: s.Clock}.Bearer(r)
			if err != nil {
				return nil, err
			}
			if !scopes.Has(t.Scopes, scope) {
				return nil, wire.MissingAccess()
			}
			return h(r, t)
		}()
		if err != nil {
			httpx.Error(w, r, s.Logger, err)
			return
		}
		httpx.JSON(w, http.StatusOK, out)
	}
}

// inviteCodeBytes is the randomness of a channel invite's code (base64url: 11 characters).
const inviteCodeBytes = 8

// Service serves invites. Set its fields before Register, and call StartJobs before serving.
type Service struct {
	*guildaccess.Base
	// OnTargetUsersJob, when set, is called on the goroutine of the target-users jobs (StartJobs)
	// when it takes up an invite's job (status wire.TargetUsersJobProcessing) and when the job
	// has ended (its final status; a job a later upload replaced gets no second call). The job
	// waits while it runs: a test holds a job in progress this way. ctx is done once Close has
	// been called: a hook that waits must stop waiting then.
	OnTargetUsersJob func(ctx context.Context, code string, status int)
	// PollJobs, when not zero, is how often (on the Clock) the job goroutine looks for jobs
	// without a kick: where nodes share the store, a job claimed by a node that died or
	// restarted is free again once its claim lease ends, and no kick says so. Zero waits for
	// kicks only (one node: every job is kicked, or left by a previous run and taken at start).
	PollJobs time.Duration
	// ObserveJob, when set, is told of each target-users job processed, as job
	// "invite_target_users", with its duration and its store error (nil when it completed or
	// failed naming unknown users: that is the job's result, not a failure to run it).
	ObserveJob func(job string, took time.Duration, err error)

	jobs jobRunner // the target-users jobs (targetjobs.go)
}

// Register adds the routes of invites to mux (paths relative to the API base): GET
// /invites/{code} for anyone, POST /invites/{code} (Bearer with guilds.join: the caller joins the
// guild), and the routes of guild channel invites (rules INVT-1, INVT-2, INVT-3, TU-1, ROLE-2),
// for a bot or a user with the guilds scope:
//
//	POST   /channels/{id}/invites                      Create Channel Invite (CREATE_INSTANT_INVITE) -> 200 invite
//	GET    /channels/{id}/invites                      Get Channel Invites (MANAGE_CHANNELS) -> 200 [invite]
//	GET    /invites/{code}/target-users                Get Target Users -> 200 text/csv
//	PUT    /invites/{code}/target-users                Update Target Users (a CSV upload) -> 204, a job
//	GET    /invites/{code}/target-users/job-status     Get Target Users Job Status -> 200
//	PUT    /invites/{code}/target-users/{user_id}      Add Target User -> 204
//	DELETE /invites/{code}/target-users/{user_id}      Remove Target User -> 204
//	POST   /invites/{code}/target-users/bulk-add       Bulk-Add Target Users {user_ids} -> 204
//	POST   /invites/{code}/target-users/bulk-delete    Bulk-Delete Target Users {user_ids} -> 204
//
// The target users of an invite are managed by its inviter, while a member of the guild, and
// by members with MANAGE_GUILD; members with VIEW_AUDIT_LOG may read them too (the platform's
// rule). An invite made with target users, or given some later (Update, Add, Bulk-Add), is for
// its target users only from then on, even when removals empty the list. Uploads
// (multipart/form-data) are bounded by wire.MaxInviteUploadBytes; a list, a file and a bulk
// call hold at most wire.MaxTargetUsers users.
func (s *Service) Register(mux httpx.Router) {
	mux.HandleFunc("GET /invites/{code}", s.getInvite)
	mux.HandleFunc("POST /invites/{code}", s.route(scopes.GuildsJoin, s.acceptInvite))
	mux.HandleFunc("POST /channels/{channel_id}/invites", httpx.LimitBody(wire.MaxInviteUploadBytes, s.Route(s.createInvite)))
	mux.HandleFunc("GET /channels/{channel_id}/invites", s.Route(s.channelInvites))
	mux.HandleFunc("GET /invites/{code}/target-users", s.targetUsersCSV)
	mux.HandleFunc("PUT /invites/{code}/target-users", httpx.LimitBody(wire.MaxInviteUploadBytes, s.Route(s.updateTargetUsers)))
	mux.HandleFunc("GET /invites/{code}/target-users/job-status", s.Route(s.targetUsersJobStatus))
	mux.HandleFunc("PUT /invites/{code}/target-users/{user_id}", s.Route(s.addTargetUser))
	mux.HandleFunc("DELETE /invites/{code}/target-users/{user_id}", s.Route(s.removeTargetUser))
	mux.HandleFunc("POST /invites/{code}/target-users/bulk-add", s.Route(s.bulkAddTargetUsers))
	mux.HandleFunc("POST /invites/{code}/target-users/bulk-delete", s.Route(s.bulkDeleteTargetUsers))
}

// maxAge is an invite's max_age in seconds: 0 for one that never expires.
func maxAge(inv *store.GuildInvite) int {
	if inv.ExpiresAt.IsZero() {
		return 0
	}
	return int(inv.ExpiresAt.Sub(inv.CreatedAt) / time.Second)
}

// InviteRoleObject is the partial role of an invite (rule ROLE-2): id, name, position, color,
// colors, icon and unicode_emoji only.
func InviteRoleObject(r *store.GuildRole) wire.InviteRole {
	full := guildaccess.RoleObject(r)
	return wire.InviteRole{ID: full.ID, Name: full.Name, Position: full.Position, Color: full.Color, Colors: full.Colors,
		Icon: full.Icon, UnicodeEmoji: full.UnicodeEmoji}
}

// inviteRoles are the partial roles an invite gives (rule ROLE-2), in the invite's order,
// without those deleted since; nil when it gives none.
func inviteRoles(ctx context.Context, st store.Store, inv *store.GuildInvite) ([]wire.InviteRole, error) {
	if len(inv.RoleIDs) == 0 {
		return nil, nil
	}
	roles, err := st.ListGuildRoles(ctx, inv.GuildID)
	if err != nil {
		return nil, err
	}
	var out []wire.InviteRole
	for _, id := range inv.RoleIDs {
		if i := slices.IndexFunc(roles, func(r store.GuildRole) bool { return r.ID == id }); i >= 0 {
			out = append(out, InviteRoleObject(&roles[i]))
		}
	}
	return out, nil
}

// giveInviteRoles adds an accepted invite's roles (those that still exist) to the member's
// roles; gave tells whether the member had not had them all.
func giveInviteRoles(ctx context.Context, st store.Store, guildID, userID uint64, roleIDs []uint64) (gave bool, err error) {
	if len(roleIDs) == 0 {
		return false, nil
	}
	roles, err := st.ListGuildRoles(ctx, guildID)
	if err != nil {
		return false, err
	}
	have, err := st.ListMemberRoles(ctx, guildID, userID)
	if err != nil {
		return false, err
	}
	next := slices.Clone(have)
	for _, id := range roleIDs {
		if id != guildID && guildaccess.HasRoleID(roles, id) && !slices.Contains(next, id) {
			next = append(next, id)
		}
	}
	if len(next) == len(have) {
		return false, nil
	}
	return true, st.SetMemberRoles(ctx, guildID, userID, next)
}

// inviteRequest is a read Create Channel Invite request.
type inviteRequest struct {
	maxAge, maxUses   int
	temporary, unique bool
	targets           []uint64 // target_user_ids, nil when none were given
	roles             []uint64
	file              []uint64 // the users of target_users_file, nil without one
}

// readCreateInvite reads Create Channel Invite's body: JSON, multipart/form-data with a
// payload_json part and a target_users_file part (rule INVT-1), or no body at all.
func readCreateInvite(r *http.Request) (*inviteRequest, error) {
	req := &inviteRequest{maxAge: wire.DefaultInviteAge}
	ct := r.Header.Get("Content-Type")
	mt, params, _ := mime.ParseMediaType(ct)
	switch {
	case mt == "multipart/form-data":
		parts, err := readParts(r, params["boundary"])
		if err != nil {
			return nil, err
		}
		if parts.payload != nil {
			if err := req.decode(parts.payload); err != nil {
				return nil, err
			}
		}
		if parts.file != nil {
			if req.file, err = parseTargetUsersFile(parts.file); err != nil {
				return nil, err
			}
		}
	case ct == "" && r.ContentLength == 0:
	default:
		var raw json.RawMessage
		if err := httpx.DecodeJSON(r, &raw); err != nil {
			return nil, err
		}
		if err := req.decode(raw); err != nil {
			return nil, err
		}
	}
	if req.targets != nil && req.file != nil {
		return nil, wire.InvalidAt("target_user_ids", "TARGET_USERS_EXCLUSIVE", "Give target_user_ids or target_users_file, not both.")
	}
	return req, nil
}

// decode reads the JSON fields of Create Channel Invite, naming a field of a wrong type.
func (req *inviteRequest) decode(raw []byte) error {
	var body struct {
		MaxAge        json.RawMessage `json:"max_age"`
		MaxUses       json.RawMessage `json:"max_uses"`
		Temporary     json.RawMessage `json:"temporary"`
		Unique        json.RawMessage `json:"unique"`
		TargetUserIDs json.RawMessage `json:"target_user_ids"`
		RoleIDs       json.RawMessage `json:"role_ids"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return wire.InvalidJSON()
		}
		return wire.InvalidAt("", "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
	}
	var err error
	if req.maxAge, err = httpx.IntField("max_age", body.MaxAge, req.maxAge, wire.MaxInviteAge); err != nil {
		return err
	}
	if req.maxUses, err = httpx.IntField("max_uses", body.MaxUses, 0, wire.MaxInviteUses); err != nil {
		return err
	}
	if req.temporary, err = httpx.BoolField("temporary", body.Temporary); err != nil {
		return err
	}
	if req.unique, err = httpx.BoolField("unique", body.Unique); err != nil {
		return err
	}
	if req.targets, err = httpx.IDsField("target_user_ids", body.TargetUserIDs, wire.MaxTargetUsers); err != nil {
		return err
	}
	req.roles, err = httpx.IDsField("role_ids", body.RoleIDs, wire.MaxInviteRoles)
	return err
}

// parts are the parts of a multipart upload the invite routes read.
type parts struct {
	payload []byte // payload_json, nil when absent
	file    []byte // target_users_file, nil when absent
}

// readParts reads a multipart/form-data body: payload_json (at most httpx.MaxBody) and
// target_users_file (at most wire.MaxTargetUsersFileBytes), each at most once; other parts are
// skipped.
func readParts(r *http.Request, boundary string) (*parts, error) {
	out := &parts{}
	err := httpx.EachPart(r, boundary, func(p *multipart.Part) error {
		var dst *[]byte
		var limit int64
		switch p.FormName() {
		case wire.PayloadJSONPart:
			dst, limit = &out.payload, httpx.MaxBody
		case wire.TargetUsersFilePart:
			dst, limit = &out.file, wire.MaxTargetUsersFileBytes
		default:
			return nil
		}
		if *dst != nil {
			return wire.InvalidAt(p.FormName(), "MULTIPART_DUPLICATE", "Give this part once.")
		}
		b, tooLarge, err := httpx.ReadPart(p, limit)
		if err != nil {
			return err
		}
		if tooLarge {
			return wire.InvalidAt(p.FormName(), "BINARY_TYPE_MAX_SIZE", "Must be "+strconv.FormatInt(limit, 10)+" bytes or fewer.")
		}
		*dst = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// parseTargetUsersFile reads a target-users file (rule TU-1) into user ids.
func parseTargetUsersFile(data []byte) ([]uint64, error) {
	ids, err := wire.ParseTargetUsersCSV(data)
	if err != nil {
		return nil, err
	}
	out := make([]uint64, len(ids))
	for i, id := range ids {
		out[i] = uint64(id)
	}
	return out, nil
}

// createInvite serves POST /channels/{channel_id}/invites (rule INVT-1): needs VIEW_CHANNEL and
// CREATE_INSTANT_INVITE there (50013). max_age 0 to 604800 s (0 never expires, default 86400),
// max_uses 0 to 100 (0 unlimited), temporary, unique (false: an existing invite of the caller
// with the same settings and without target users or roles is answered instead), role_ids
// (each a role of the guild other than @everyone that the caller may give: the owner, or
// MANAGE_ROLES and the role below the caller's highest role), and the target users: either
// target_user_ids, each a known user, or a target_users_file (CSV, rule TU-1), processed as a
// job (the invite lets nobody in until the job completes). 200 with the invite.
func (s *Service) createInvite(q *guildaccess.Caller) (any, error) {
	ch, a, perms, err := s.GuildChannel(q)
	if err != nil {
		return nil, err
	}
	if perms&wire.PermCreateInstantInvite == 0 {
		return nil, wire.MissingPermissions()
	}
	if ch.Type == wire.ChannelGuildCategory {
		return nil, &wire.APIError{Status: http.StatusBadRequest, Code: wire.CodeInvalidChannelType,
			Message: "Cannot execute action on this channel type"}
	}
	req, err := readCreateInvite(q.Request)
	if err != nil {
		return nil, err
	}
	if err := mayGiveRoles(a, q.UserID, req.roles); err != nil {
		return nil, err
	}
	if err := s.knownUsers(q.Ctx, "target_user_ids", req.targets); err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	var inv *store.GuildInvite
	err = s.Store.WithTx(q.Ctx, func(st store.Store) error {
		if !req.unique && req.targets == nil && req.file == nil && req.roles == nil {
			old, err := reusable(q.Ctx, st, ch.ID, q.UserID, req, now)
			if err != nil || old != nil {
				inv = old
				return err
			}
		}
		inv = &store.GuildInvite{GuildID: ch.GuildID, ChannelID: ch.ID, InviterID: q.UserID, TargetUserIDs: req.targets,
			Targeted: req.file != nil, RoleIDs: req.roles, Temporary: req.temporary, MaxUses: req.maxUses, CreatedAt: now}
		if req.maxAge > 0 {
			inv.ExpiresAt = now.Add(time.Duration(req.maxAge) * time.Second)
		}
		err := store.ErrConflict
		for try := 0; try < 5 && errors.Is(err, store.ErrConflict); try++ {
			inv.Code = secret.Random(inviteCodeBytes)
			err = st.InsertGuildInvite(q.Ctx, inv)
		}
		if err != nil || req.file == nil {
			return err
		}
		_, err = st.StartInviteTargetJob(q.Ctx, inv.Code, req.file, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	if req.file != nil {
		s.jobs.kick()
	}
	out, err := s.inviteObject(q.Ctx, s.Store, inv)
	if err != nil {
		return nil, err
	}
	return out.Invite, nil
}

// reusable returns a usable invite of the channel that inviterID made with the request's
// settings, without target users, roles or a lobby; nil when there is none.
func reusable(ctx context.Context, st store.Store, channelID, inviterID uint64, req *inviteRequest, now time.Time) (*store.GuildInvite, error) {
	list, err := st.ListChannelInvites(ctx, channelID, now)
	if err != nil {
		return nil, err
	}
	for i := range list {
		inv := &list[i]
		if inv.InviterID == inviterID && inv.LobbyID == 0 && !inv.Targeted && len(inv.RoleIDs) == 0 &&
			inv.Temporary == req.temporary && inv.MaxUses == req.maxUses && maxAge(inv) == req.maxAge {
			return inv, nil
		}
	}
	return nil, nil
}

// mayGiveRoles checks the role_ids of Create Channel Invite: each must be a role of the guild
// other than @everyone (400 50035 naming it), and the caller must be allowed to give it (50013):
// the owner may give any role, another member one below its highest role with MANAGE_ROLES.
func mayGiveRoles(a *guildaccess.Access, userID uint64, ids []uint64) error {
	highest := -1
	for _, r := range a.Roles {
		if guildaccess.HasRole(a.MemberRoles, r.ID) && r.Position > highest {
			highest = r.Position
		}
	}
	for i, id := range ids {
		j := slices.IndexFunc(a.Roles, func(r store.GuildRole) bool { return r.ID == id })
		if j < 0 || id == a.Guild.ID {
			return wire.InvalidAt("role_ids."+strconv.Itoa(i), "ROLE_UNKNOWN", "Unknown role.")
		}
		if a.Guild.OwnerID == userID {
			continue
		}
		if a.Base()&wire.PermManageRoles == 0 || a.Roles[j].Position >= highest {
			return wire.MissingPermissions()
		}
	}
	return nil
}

// knownUsers refuses ids of which one names no user: 400 50035 naming the first at field.N.
func (s *Service) knownUsers(ctx context.Context, field string, ids []uint64) error {
	if len(ids) == 0 {
		return nil
	}
	missing, err := s.Store.MissingUsers(ctx, ids)
	if err != nil || len(missing) == 0 {
		return err
	}
	i := slices.Index(ids, missing[0])
	return wire.InvalidAt(field+"."+strconv.Itoa(i), "USER_UNKNOWN", "Unknown user.")
}

// channelInvites serves GET /channels/{channel_id}/invites: needs VIEW_CHANNEL and
// MANAGE_CHANNELS there (50013); the channel's usable invites with their metadata, oldest first,
// their roles partial (rule ROLE-2).
func (s *Service) channelInvites(q *guildaccess.Caller) (any, error) {
	ch, _, perms, err := s.GuildChannel(q)
	if err != nil {
		return nil, err
	}
	if perms&guildaccess.PermManageChannels == 0 {
		return nil, wire.MissingPermissions()
	}
	list, err := s.Store.ListChannelInvites(q.Ctx, ch.ID, s.Clock.Now())
	if err != nil {
		return nil, err
	}
	out := make([]wire.Invite, 0, len(list))
	for i := range list {
		inv, err := s.inviteObject(q.Ctx, s.Store, &list[i])
		if err != nil {
			return nil, err
		}
		out = append(out, inv.Invite)
	}
	return out, nil
}

// managedInvite loads the path's invite for a target-users route: 404 10006 for an unknown,
// used-up or expired code; 403 50001 for a caller who is not a member of its guild; 403 50013
// for a member who is neither its inviter nor has MANAGE_GUILD (to read: or VIEW_AUDIT_LOG).
func (s *Service) managedInvite(q *guildaccess.Caller, write bool) (*store.GuildInvite, error) {
	inv, err := s.usable(q.Ctx, s.Store, q.PathValue("code"), s.Clock.Now())
	if err != nil {
		return nil, err
	}
	a, err := s.MemberAccess(q, inv.GuildID)
	if err != nil {
		return nil, err
	}
	perms := a.Base()
	if inv.InviterID != q.UserID && perms&wire.PermManageGuild == 0 && (write || perms&wire.PermViewAuditLog == 0) {
		return nil, wire.MissingPermissions()
	}
	return inv, nil
}

// targetUsersCSV serves GET /invites/{code}/target-users (rule INVT-3): the target users as a
// CSV file (rule TU-1), text/csv; just the header when there are none.
func (s *Service) targetUsersCSV(w http.ResponseWriter, r *http.Request) {
	body, err := func() ([]byte, error) {
		q, err := s.Who(r)
		if err != nil {
			return nil, err
		}
		inv, err := s.managedInvite(q, false)
		if err != nil {
			return nil, err
		}
		list, err := s.Store.ListInviteTargets(q.Ctx, inv.Code)
		if err != nil {
			return nil, err
		}
		ids := make([]wire.Snowflake, len(list))
		for i, id := range list {
			ids[i] = wire.Snowflake(id)
		}
		return wire.AppendTargetUsersCSV(nil, ids), nil
	}()
	if err != nil {
		httpx.Error(w, r, s.Logger, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// readTargetUsersFile reads Update Target Users' file: the target_users_file part of a
// multipart/form-data body (other parts are skipped), or a text/csv body.
func readTargetUsersFile(r *http.Request) ([]uint64, error) {
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var file []byte
	switch mt {
	case "multipart/form-data":
		p, err := readParts(r, params["boundary"])
		if err != nil {
			return nil, err
		}
		file = p.file
	case "text/csv":
		b, err := io.ReadAll(io.LimitReader(r.Body, wire.MaxTargetUsersFileBytes+1))
		if err != nil {
			return nil, httpx.BodyError(err)
		}
		file = b
	default:
		return nil, &wire.APIError{Status: http.StatusUnsupportedMediaType, Code: wire.CodeInvalidFormBody,
			Message: "The request body must be multipart/form-data with a target_users_file part."}
	}
	if file == nil {
		return nil, wire.Required(wire.TargetUsersFilePart)
	}
	return parseTargetUsersFile(file)
}

// updateTargetUsers serves PUT /invites/{code}/target-users (rule INVT-2): the file is checked
// at once (rule TU-1: 400 50035 naming target_users_file), then a job replaces the invite's
// whole target list with it (its users must all exist, else the job fails and the list stays);
// 204. A later upload replaces a job still processing.
func (s *Service) updateTargetUsers(q *guildaccess.Caller) (any, error) {
	inv, ids, err := s.managedTargets(q, readTargetUsersFile)
	if err != nil {
		return nil, err
	}
	if _, err := s.Store.StartInviteTargetJob(q.Ctx, inv.Code, ids, s.Clock.Now()); err != nil {
		return nil, err
	}
	s.jobs.kick()
	return nil, nil
}

// timestampOrNil is t as RFC 3339, nil for the zero time.
func timestampOrNil(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	v := t.UTC().Format(time.RFC3339)
	return &v
}

// targetUsersJobStatus serves GET /invites/{code}/target-users/job-status (rule INVT-2): the
// status of the invite's latest upload; status 0 (unspecified) with null times when it has had
// none. completed_at is set once the job has completed, error_message once it has failed.
func (s *Service) targetUsersJobStatus(q *guildaccess.Caller) (any, error) {
	inv, err := s.managedInvite(q, false)
	if err != nil {
		return nil, err
	}
	j, err := s.Store.GetInviteTargetJob(q.Ctx, inv.Code)
	if errors.Is(err, store.ErrNotFound) {
		return wire.TargetUsersJobStatus{Status: wire.TargetUsersJobUnspecified}, nil
	}
	if err != nil {
		return nil, err
	}
	out := wire.TargetUsersJobStatus{Status: j.Status, TotalUsers: j.Total, ProcessedUsers: j.Processed,
		CreatedAt: timestampOrNil(j.CreatedAt)}
	switch j.Status {
	case store.InviteJobCompleted:
		out.CompletedAt = timestampOrNil(j.CompletedAt)
	case store.InviteJobFailed:
		out.ErrorMessage = &j.Error
	}
	return out, nil
}

// addTargets adds known users to the invite's target list, which holds at most
// wire.MaxTargetUsers (400 50035 naming field beyond).
func (s *Service) addTargets(ctx context.Context, code, field string, ids []uint64) error {
	return s.Store.WithTx(ctx, func(st store.Store) error {
		if _, err := st.AddInviteTargets(ctx, code, ids); err != nil {
			return err
		}
		n, err := st.CountInviteTargets(ctx, code)
		if err != nil {
			return err
		}
		if n > wire.MaxTargetUsers {
			return wire.InvalidAt(field, "TARGET_USERS_MAX", "An invite has at most "+strconv.Itoa(wire.MaxTargetUsers)+" target users.")
		}
		return nil
	})
}

// managedTarget reads the path's user_id and loads the invite the caller manages (managedInvite,
// to change it).
func (s *Service) managedTarget(q *guildaccess.Caller) (*store.GuildInvite, uint64, error) {
	userID, err := httpx.PathID(q.Request, "user_id")
	if err != nil {
		return nil, 0, err
	}
	inv, err := s.managedInvite(q, true)
	return inv, userID, err
}

// addTargetUser serves PUT /invites/{code}/target-users/{user_id} (rule INVT-3): the user (10013
// when unknown) becomes one of the invite's target users; 204, also when it was one already.
func (s *Service) addTargetUser(q *guildaccess.Caller) (any, error) {
	inv, userID, err := s.managedTarget(q)
	if err != nil {
		return nil, err
	}
	if missing, err := s.Store.MissingUsers(q.Ctx, []uint64{userID}); err != nil {
		return nil, err
	} else if len(missing) > 0 {
		return nil, wire.UnknownUser()
	}
	return nil, s.addTargets(q.Ctx, inv.Code, "user_id", []uint64{userID})
}

// removeTargetUser serves DELETE /invites/{code}/target-users/{user_id} (rule INVT-3): the user
// is no longer one of the invite's target users; 204, also when it was not one. The invite stays
// for its target users only, even with none left.
func (s *Service) removeTargetUser(q *guildaccess.Caller) (any, error) {
	inv, userID, err := s.managedTarget(q)
	if err != nil {
		return nil, err
	}
	_, err = s.Store.RemoveInviteTargets(q.Ctx, inv.Code, []uint64{userID})
	return nil, err
}

// managedTargets loads the invite the caller manages (managedInvite, to change it) and the user
// ids read reads from the request.
func (s *Service) managedTargets(q *guildaccess.Caller, read func(*http.Request) ([]uint64, error)) (*store.GuildInvite, []uint64, error) {
	inv, err := s.managedInvite(q, true)
	if err != nil {
		return nil, nil, err
	}
	ids, err := read(q.Request)
	return inv, ids, err
}

// readUserIDs reads the body of the bulk routes: user_ids, 1 to wire.MaxTargetUsers snowflakes.
func readUserIDs(r *http.Request) ([]uint64, error) {
	var raw json.RawMessage
	if err := httpx.DecodeJSON(r, &raw); err != nil {
		return nil, err
	}
	var body struct {
		UserIDs json.RawMessage `json:"user_ids"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return nil, wire.InvalidAt("", "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
	}
	if len(bytes.TrimSpace(body.UserIDs)) == 0 || string(body.UserIDs) == "null" {
		return nil, wire.Required("user_ids")
	}
	ids, err := httpx.IDsField("user_ids", body.UserIDs, wire.MaxTargetUsers)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, wire.InvalidAt("user_ids", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and "+strconv.Itoa(wire.MaxTargetUsers)+" in length.")
	}
	return ids, nil
}

// bulkAddTargetUsers serves POST /invites/{code}/target-users/bulk-add (rule INVT-3): every
// user of user_ids (each known: 400 50035 naming the first unknown) becomes a target user; 204.
func (s *Service) bulkAddTargetUsers(q *guildaccess.Caller) (any, error) {
	inv, ids, err := s.managedTargets(q, readUserIDs)
	if err != nil {
		return nil, err
	}
	if err := s.knownUsers(q.Ctx, "user_ids", ids); err != nil {
		return nil, err
	}
	return nil, s.addTargets(q.Ctx, inv.Code, "user_ids", ids)
}

// bulkDeleteTargetUsers serves POST /invites/{code}/target-users/bulk-delete (rule INVT-3): no
// user of user_ids is a target user any more; 204.
func (s *Service) bulkDeleteTargetUsers(q *guildaccess.Caller) (any, error) {
	inv, ids, err := s.managedTargets(q, readUserIDs)
	if err != nil {
		return nil, err
	}
	_, err = s.Store.RemoveInviteTargets(q.Ctx, inv.Code, ids)
	return nil, err
}
