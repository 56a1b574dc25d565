package wire

import "regexp"

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
