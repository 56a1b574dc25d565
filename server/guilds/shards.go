package guilds

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"sdkpp/server/guildaccess"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// maxConcurrencyKey is the setting that keeps an application's max_concurrency.
func maxConcurrencyKey(appID uint64) string {
	return "bot.max_concurrency." + strconv.FormatUint(appID, 10)
}

// MaxConcurrency returns the application's bot's max_concurrency (GET /gateway/bot): 1, unless
// the application uses large bot sharding.
func MaxConcurrency(ctx context.Context, st store.Store, appID uint64) (int, error) {
	raw, err := st.GetSetting(ctx, maxConcurrencyKey(appID))
	if errors.Is(err, store.ErrNotFound) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil || n < 1 {
		return 1, nil
	}
	return n, nil
}

// SetMaxConcurrency sets the application's max_concurrency; above 1 it uses large bot sharding.
func SetMaxConcurrency(ctx context.Context, st store.Store, appID uint64, n int) error {
	if n < 1 {
		return errors.New("guilds: max_concurrency must be at least 1")
	}
	return st.PutSetting(ctx, maxConcurrencyKey(appID), []byte(strconv.Itoa(n)))
}

// InShard tells whether a guild belongs to shard id of count shards, as the platform assigns
// them: (guild_id >> 22) % count.
func InShard(guildID uint64, id, count int) bool {
	return count <= 1 || int((guildID>>22)%uint64(count)) == id
}

// shardOf keeps the guilds of the ?shard= of a bot's GET /users/@me/guilds (rule GLD-1): shard
// is 0 to max_concurrency-1, and an application using large bot sharding (max_concurrency
// above 1) must give it (400 otherwise).
func (s *Service) shardOf(q *guildaccess.Caller, list []store.Guild) ([]store.Guild, error) {
	v := q.URL.Query()
	if !q.Bot {
		if v.Has("shard") {
			return nil, wire.InvalidAt("shard", "BOT_ONLY", "Only bots may give shard.")
		}
		return list, nil
	}
	n, err := MaxConcurrency(q.Ctx, s.Store, q.AppID)
	if err != nil {
		return nil, err
	}
	if !v.Has("shard") {
		if n > 1 {
			return nil, &wire.APIError{Status: http.StatusBadRequest, Code: wire.CodeInvalidFormBody,
				Message: "shard is required for applications using large bot sharding"}
		}
		return list, nil
	}
	shard, err := strconv.Atoi(v.Get("shard"))
	if err != nil || shard < 0 || shard >= n {
		return nil, wire.InvalidAt("shard", "NUMBER_TYPE_MAX", "Must be between 0 and "+strconv.Itoa(n-1)+".")
	}
	out := list[:0:0]
	for _, g := range list {
		if InShard(g.ID, shard, n) {
			out = append(out, g)
		}
	}
	return out, nil
}

// GuildsPerShard is how many guilds RecommendedShards plans per shard (the platform's 1000).
const GuildsPerShard = 1000

// RecommendedShards is the shard count GET /gateway/bot recommends to the application's bot: one
// per GuildsPerShard of its guilds, rounded up to a multiple of its max_concurrency (large bot
// sharding, rule GLD-1), which it returns too.
func RecommendedShards(ctx context.Context, st store.Store, app *store.Application) (shards, maxConcurrency int, err error) {
	conc, err := MaxConcurrency(ctx, st, app.ID)
	if err != nil {
		return 0, 0, err
	}
	list, err := st.ListUserGuilds(ctx, app.BotUserID)
	if err != nil {
		return 0, 0, err
	}
	shards = max(1, (len(list)+GuildsPerShard-1)/GuildsPerShard)
	return (shards + conc - 1) / conc * conc, conc, nil
}
