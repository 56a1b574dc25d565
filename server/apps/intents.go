package apps

import (
	"context"
	"fmt"

	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// ReviewThresholdUsers is the number of reachable users at which an application's privileged
// gateway intents need review (rule LIM-4): below it, PATCH /applications/@me may turn on the
// limited intent flags; at or above it, it may not, and only the dev route (standing in for the
// platform's review) sets intent flags.
const ReviewThresholdUsers = 10_000

// privilegedIntents pairs each privileged gateway intent with the application flags that allow
// it: the approved flag and the limited one.
var privilegedIntents = []struct{ intent, flags uint64 }{
	{gwire.IntentGuildMembers, wire.AppFlagGatewayGuildMembers | wire.AppFlagGatewayGuildMembersLimited},
	{gwire.IntentGuildPresences, wire.AppFlagGatewayPresence | wire.AppFlagGatewayPresenceLimited},
	{gwire.IntentMessageContent, wire.AppFlagGatewayMessageContent | wire.AppFlagGatewayMessageContentLimited},
}

// AllowsIntents tells whether an application with flags may identify its bot with intents: each
// privileged intent needs its approved or its limited flag; other intents need none.
func AllowsIntents(flags, intents uint64) bool {
	for _, p := range privilegedIntents {
		if intents&p.intent != 0 && flags&p.flags == 0 {
			return false
		}
	}
	return true
}

// DisallowedIntents is the privileged intents an application with flags may not use
// (AllowsIntents refuses a session that asks for any of them).
func DisallowedIntents(flags uint64) uint64 {
	var out uint64
	for _, p := range privilegedIntents {
		if flags&p.flags == 0 {
			out |= p.intent
		}
	}
	return out
}

// SessionAllows decides which intents a gateway session may identify with: a bot's privileged
// intents need its application's approved or limited flag (AllowsIntents, rule LIM-4); user
// sessions of the SDK are not bots and need none.
func SessionAllows(ctx context.Context, st store.Store, appID uint64, bot bool, intents uint64) (bool, error) {
	if !bot {
		return true, nil
	}
	flags, err := Flags(ctx, st, appID)
	if err != nil {
		return false, err
	}
	return AllowsIntents(flags, intents), nil
}

// Flags returns the application's flags: READY's application.flags (rule APP-1).
func Flags(ctx context.Context, st store.Store, appID uint64) (uint64, error) {
	app, err := st.GetApplication(ctx, appID)
	if err != nil {
		return 0, fmt.Errorf("apps: application %d: %w", appID, err)
	}
	return app.Flags, nil
}

// ReachableUsers returns how many distinct users the application's bot reaches: the members of
// every guild the bot is in, the bot excepted (rule LIM-4). 0 for an application without a bot.
func ReachableUsers(ctx context.Context, st store.Store, app *store.Application) (int, error) {
	if app.BotUserID == 0 {
		return 0, nil
	}
	return st.CountReachableUsers(ctx, app.BotUserID)
}

// checkReviewThreshold refuses, with 400 50035 on flags, to turn on a limited intent flag of an
// application that reaches ReviewThresholdUsers users or more (rule LIM-4).
func (s *Service) checkReviewThreshold(ctx context.Context, app *store.Application) error {
	n, err := ReachableUsers(ctx, s.Store, app)
	if err != nil {
		return err
	}
	if n >= ReviewThresholdUsers {
		return wire.Invalid("flags", "APPLICATION_INTENTS_REVIEW_REQUIRED",
			"The application reaches 10,000 users or more: privileged intents need review before they can be enabled.")
	}
	return nil
}
