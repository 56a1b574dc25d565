package wire

// Search Guild Messages (rule GLD-3).
const (
	// MaxSearchLimit is the largest limit of a search, and its default.
	MaxSearchLimit = 25
	// MaxSearchOffset is the largest offset of a search.
	MaxSearchOffset = 9975
	// MaxSearchContentChars bounds a search's content.
	MaxSearchContentChars = 1024
	// MaxSearchValues bounds how many channel_id, author_id and mentions a search may give.
	MaxSearchValues = 500
	// CodeSearchIndexNotReady answers a search of a guild whose index is being built (202).
	CodeSearchIndexNotReady = 110000
	// SearchRetryAfter is the retry_after, in seconds, of a CodeSearchIndexNotReady answer.
	SearchRetryAfter = 2
)

// GuildSearchResult is the answer of GET /guilds/{guild_id}/messages/search: how many messages
// match, and a page of them, each as a list of one message.
type GuildSearchResult struct {
	TotalResults int              `json:"total_results"`
	Messages     [][]GuildMessage `json:"messages"`
	Threads      []struct{}       `json:"threads"`
	Members      []struct{}       `json:"members"`
}

// SearchIndexNotReady is the 202 answer of a search whose guild's index is being built.
type SearchIndexNotReady struct {
	Message          string `json:"message"`
	Code             int    `json:"code"`
	DocumentsIndexed int    `json:"documents_indexed"`
	RetryAfter       int    `json:"retry_after"`
}
