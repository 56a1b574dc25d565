package wire

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
)

// MaxMentionsScanned bounds how many user mentions of a message's content are read.
const MaxMentionsScanned = 100

var userMentionRE = regexp.MustCompile(`<@!?([0-9]{1,20})>`)

// MentionedUserIDs returns the ids of the users the content mentions (<@id> or <@!id>), once
// each, in the order they first appear, reading at most MaxMentionsScanned mentions.
func MentionedUserIDs(content string) []uint64 {
	var out []uint64
	seen := map[uint64]bool{}
	for _, m := range userMentionRE.FindAllStringSubmatch(content, MaxMentionsScanned) {
		id, ok := ParseSnowflake(m[1])
		if !ok || seen[uint64(id)] {
			continue
		}
		seen[uint64(id)] = true
		out = append(out, uint64(id))
	}
	return out
}

// MaxAllowedMentionIDs bounds the users and the roles an allowed_mentions object lists.
const MaxAllowedMentionIDs = 100

// AllowedMentions is a message body's allowed_mentions: which of the content's mentions ping
// (and so are the message's mentions). Parse names the kinds allowed wholesale ("users",
// "roles", "everyone"); Users and Roles allow those ids; RepliedUser lets a reply mention the
// author of the message it answers.
type AllowedMentions struct {
	Parse       []string    `json:"parse"`
	Users       []Snowflake `json:"users"`
	Roles       []Snowflake `json:"roles"`
	RepliedUser bool        `json:"replied_user"`
}

// ParseAllowedMentions reads an allowed_mentions field: nil when absent or null (every mention
// pings, and a reply mentions the replied-to author). A kind of parse is "users", "roles" or
// "everyone", each once; parse "users" excludes a users list, and "roles" a roles list; each
// list has at most MaxAllowedMentionIDs ids. A malformed one is a 400 50035 naming its field.
func ParseAllowedMentions(raw json.RawMessage) (*AllowedMentions, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var a AllowedMentions
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, InvalidAt("allowed_mentions", "MODEL_TYPE_CONVERT", "Only dictionaries of the allowed mentions' fields may be used.")
	}
	seen := map[string]bool{}
	for i, kind := range a.Parse {
		if (kind != "users" && kind != "roles" && kind != "everyone") || seen[kind] {
			return nil, InvalidAt("allowed_mentions.parse."+strconv.Itoa(i), "BASE_TYPE_CHOICES",
				`Value must be one of ("roles", "users", "everyone").`)
		}
		seen[kind] = true
	}
	for _, list := range []struct {
		kind string
		ids  []Snowflake
	}{{"users", a.Users}, {"roles", a.Roles}} {
		switch {
		case len(list.ids) > MaxAllowedMentionIDs:
			return nil, InvalidAt("allowed_mentions."+list.kind, "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.")
		case len(list.ids) > 0 && seen[list.kind]:
			return nil, InvalidAt("allowed_mentions.parse", "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
				`parse:["`+list.kind+`"] and `+list.kind+` are mutually exclusive.`)
		}
	}
	return &a, nil
}

// Pings tells whether a mention of user id pings under a (nil: every mention does).
func (a *AllowedMentions) Pings(id uint64) bool {
	return a == nil || slices.Contains(a.Parse, "users") || slices.Contains(a.Users, Snowflake(id))
}

// PingsRepliedUser tells whether a reply mentions the replied-to author under a (nil: it does).
func (a *AllowedMentions) PingsRepliedUser() bool { return a == nil || a.RepliedUser }
