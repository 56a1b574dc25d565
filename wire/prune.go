package wire

import "encoding/json"

// Guild prune (rule GLD-2).
const (
	// FeaturePruneRequiresAdmin makes prune need ADMINISTRATOR as well (owner-enabled).
	FeaturePruneRequiresAdmin = "PRUNE_REQUIRES_ADMIN"
	// PermKickMembers is what prune needs, with PermManageGuild.
	PermKickMembers uint64 = 1 << 1
	// DefaultPruneDays is days when absent; MaxPruneDays the largest.
	DefaultPruneDays = 7
	MaxPruneDays     = 30
)

// PruneCount is the answer of Get Guild Prune Count and Begin Guild Prune: Pruned is null when
// Begin Guild Prune was asked not to compute it.
type PruneCount struct {
	Pruned *int `json:"pruned"`
}

// BeginPrune is the body of POST /guilds/{guild_id}/prune.
type BeginPrune struct {
	Days              json.RawMessage `json:"days"`
	ComputePruneCount json.RawMessage `json:"compute_prune_count"`
	IncludeRoles      json.RawMessage `json:"include_roles"`
}
