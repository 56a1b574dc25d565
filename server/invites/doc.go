// Package invites serves the Invite resource of the platform's API: guild channel invites, their
// target users and the jobs that replace a target-users list from a CSV upload, and accepting an
// invite (AcceptInvite, the one code path that joins a guild by invite: the API's POST
// /invites/{code} and the service's web page /invite/{code}, package oauth, both call it).
//
// # Routes (under /api/v10)
//
//	GET  /invites/{code}              anyone               -> 200 invite
//	POST /invites/{code}              Bearer (guilds.join) -> 200 invite; the caller joins the guild
//	DELETE /invites/{code}            MANAGE_CHANNELS in its channel, or MANAGE_GUILD -> 200 invite
//
// A member who joined through a temporary invite is removed when they disconnect (no gateway
// session left) without a role (guilds.Service.RemoveTemporary).
//
// and the routes of channel invites and target users listed at Service.Register.
//
// Lobby channel invites (rule LOB-5) are made by package lobbies: single use, valid one hour,
// and only the lobby member they were made for may accept them (403 50001 for anyone else).
// Bots make channel invites with Create Channel Invite and list them with Get Channel Invites:
// an invite may give roles on acceptance and may be for target users only, a list managed under
// /invites/{code}/target-users, replaced from a CSV upload by a job (targetjobs.go; rules
// INVT-1, INVT-2, INVT-3, TU-1, ROLE-2). An invite that is used up or expired is unknown (404
// 10006); max_uses 0 is unlimited, max_age 0 never expires. Provisional accounts cannot join
// guilds (403 50001). The invite object carries its inviter.
//
// # Errors
//
// 401 without a valid token; 403 50001 for a token without the scope, a provisional account
// accepting an invite, a user accepting an invite made for another; 404 10006 Unknown Invite,
// 10003 Unknown Channel; 413 for an upload over wire.MaxInviteUploadBytes; 400 50035 naming a
// malformed path id or field.
package invites
