package wire

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// Guild channel invites of bots (rules INVT-1, INVT-2, INVT-3, TU-1, ROLE-2).
//
// Routes: POST /channels/{id}/invites (Create Channel Invite: a JSON body, or multipart/form-data
// with a payload_json part and a target_users_file part), GET /channels/{id}/invites (Get
// Channel Invites), and under /invites/{code}/target-users: GET (the CSV), PUT (Update Target
// Users: a CSV upload, processed as a job), GET job-status, PUT and DELETE /{user_id}, and POST
// bulk-add and bulk-delete with a TargetUsersRequest.

// Permission bits of invites (the platform's values).
const (
	// PermCreateInstantInvite lets a member create invites to a channel.
	PermCreateInstantInvite uint64 = 1 << 0
	// PermManageGuild lets a member manage any invite's target users.
	PermManageGuild uint64 = 1 << 5
	// PermManageRoles, with a role below the member's highest, lets a member give that role on
	// an invite (role_ids).
	PermManageRoles uint64 = 1 << 28
)

// Limits of invites.
const (
	// MaxInviteAge is the largest max_age (seconds, 7 days); 0 is an invite that never expires.
	MaxInviteAge = 604800
	// DefaultInviteAge is the max_age of a request that gives none (24 hours).
	DefaultInviteAge = 86400
	// MaxInviteUses is the largest max_uses; 0 is unlimited.
	MaxInviteUses = 100
	// MaxInviteRoles bounds role_ids (a guild has at most 250 roles).
	MaxInviteRoles = 250
	// MaxTargetUsers bounds the target users of one file, one target_user_ids array, one
	// bulk call, and of one invite in all (sdkpp's limit: the platform publishes none).
	MaxTargetUsers = 10000
	// MaxTargetUsersFileBytes bounds a target-users file: MaxTargetUsers ids of 19 digits with
	// CRLF line ends take 215 KB.
	MaxTargetUsersFileBytes = 512 << 10
	// MaxInviteUploadBytes bounds a multipart request body of the invite routes: the file, a
	// payload_json of at most 1 MiB, and the multipart framing.
	MaxInviteUploadBytes = 2 << 20
)

// Multipart parts of Create Channel Invite and Update Target Users.
const (
	PayloadJSONPart     = "payload_json"
	TargetUsersFilePart = "target_users_file"
)

// JSON error codes of the invite routes (the platform's).
const (
	// CodeRequestTooLarge is "Request entity too large" (HTTP 413).
	CodeRequestTooLarge = 40005
	// CodeInvalidChannelType is "Cannot execute action on this channel type": an invite to a
	// category.
	CodeInvalidChannelType = 50024
)

// RequestTooLarge is the 413 of a request body over its bound.
func RequestTooLarge() *APIError {
	return &APIError{Status: http.StatusRequestEntityTooLarge, Code: CodeRequestTooLarge, Message: "Request entity too large"}
}

// Status codes of the target-users job (Get Target Users Job Status).
const (
	TargetUsersJobUnspecified = 0 // the invite has had no upload
	TargetUsersJobProcessing  = 1
	TargetUsersJobCompleted   = 2
	TargetUsersJobFailed      = 3 // see error_message; the invite's list is unchanged
)

// CreateChannelInviteRequest is the body (or the payload_json part) of POST
// /channels/{id}/invites. A field left out takes its default: max_age DefaultInviteAge, max_uses
// 0 (unlimited).
type CreateChannelInviteRequest struct {
	MaxAge    *int `json:"max_age,omitempty"`
	MaxUses   *int `json:"max_uses,omitempty"`
	Temporary bool `json:"temporary,omitempty"`
	// Unique false lets the service answer with an existing invite of the same inviter and
	// settings (without target users or roles) instead of making one.
	Unique bool `json:"unique,omitempty"`
	// TargetUserIDs, when given, are the only users who may accept the invite (rule INVT-1).
	TargetUserIDs []Snowflake `json:"target_user_ids,omitempty"`
	// RoleIDs are given to the user who accepts the invite (rule INVT-1).
	RoleIDs []Snowflake `json:"role_ids,omitempty"`
}

// InviteRole is a role in an invite: the partial role of Get Channel Invites (rule ROLE-2),
// with only these fields.
type InviteRole struct {
	ID           Snowflake  `json:"id"`
	Name         string     `json:"name"`
	Position     int        `json:"position"`
	Color        int        `json:"color"`
	Colors       RoleColors `json:"colors"`
	Icon         *string    `json:"icon"`
	UnicodeEmoji *string    `json:"unicode_emoji"`
}

// TargetUsersRequest is the body of Bulk-Add and Bulk-Delete Target Users (rule INVT-3): 1 to
// MaxTargetUsers user ids.
type TargetUsersRequest struct {
	UserIDs []Snowflake `json:"user_ids"`
}

// TargetUsersJobStatus is the answer of GET /invites/{code}/target-users/job-status (rule
// INVT-2), the platform's shape: Status is a TargetUsersJob code; the times are ISO 8601, null
// when there is none.
type TargetUsersJobStatus struct {
	Status         int     `json:"status"`
	TotalUsers     int     `json:"total_users"`
	ProcessedUsers int     `json:"processed_users"`
	CreatedAt      *string `json:"created_at"`
	CompletedAt    *string `json:"completed_at"`
	ErrorMessage   *string `json:"error_message"`
}

// TargetUsersCSVHeader is the one header of a target-users file (rule TU-1).
const TargetUsersCSVHeader = "user_id"

// utf8BOM is the byte order mark some spreadsheet programs put first in a CSV export.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ParseTargetUsersCSV reads a target-users file (rule TU-1): the single header user_id, then
// one user id per line (CRLF or LF line ends, blank lines and one leading byte order mark
// ignored, a field may be quoted). It returns the ids in file order, each once. Anything else is
// a 400 50035 naming target_users_file: a file over MaxTargetUsersFileBytes, not UTF-8, empty,
// without the header, with a line that is not one id, or with more than MaxTargetUsers ids.
func ParseTargetUsersCSV(data []byte) ([]Snowflake, error) {
	bad := func(code, message string) error { return InvalidAt(TargetUsersFilePart, code, message) }
	switch {
	case len(data) > MaxTargetUsersFileBytes:
		return nil, bad("BINARY_TYPE_MAX_SIZE", "The file is larger than "+strconv.Itoa(MaxTargetUsersFileBytes)+" bytes.")
	case !utf8.Valid(data):
		return nil, bad("CSV_INVALID_UTF8", "The file is not UTF-8 text.")
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, utf8BOM)))
	r.FieldsPerRecord = -1 // checked below, with a clearer message
	r.ReuseRecord = true
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, bad("CSV_EMPTY", "The file is empty: it needs the header user_id, then one user ID per line.")
	}
	if err != nil {
		return nil, bad("CSV_INVALID", "The file is not CSV: "+err.Error()+".")
	}
	if len(header) != 1 || header[0] != TargetUsersCSVHeader {
		return nil, bad("CSV_HEADER_INVALID", "The first line must be the single header user_id.")
	}
	var out []Snowflake
	seen := map[Snowflake]bool{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, bad("CSV_INVALID", "The file is not CSV: "+err.Error()+".")
		}
		line, _ := r.FieldPos(0)
		at := "Line " + strconv.Itoa(line)
		if len(rec) != 1 {
			return nil, bad("CSV_ROW_INVALID", at+" has "+strconv.Itoa(len(rec))+" fields: give one user ID per line.")
		}
		id, ok := ParseSnowflake(rec[0])
		if !ok {
			return nil, bad("CSV_ROW_INVALID", at+": "+strconv.Quote(clip(rec[0], 40))+" is not a user ID.")
		}
		if seen[id] {
			continue
		}
		if len(out) == MaxTargetUsers {
			return nil, bad("CSV_TOO_MANY_ROWS", "The file lists more than "+strconv.Itoa(MaxTargetUsers)+" users.")
		}
		seen[id] = true
		out = append(out, id)
	}
	if len(out) == 0 {
		return nil, bad("CSV_EMPTY", "The file lists no user ID after its header.")
	}
	return out, nil
}

// clip cuts s to at most n runes.
func clip(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i] + "…"
		}
		n--
	}
	return s
}

// AppendTargetUsersCSV appends the target-users file of ids (rule TU-1): the header, then one id
// per line, each line ended by LF.
func AppendTargetUsersCSV(b []byte, ids []Snowflake) []byte {
	b = append(b, TargetUsersCSVHeader+"\n"...)
	for _, id := range ids {
		b = strconv.AppendUint(b, uint64(id), 10)
		b = append(b, '\n')
	}
	return b
}
