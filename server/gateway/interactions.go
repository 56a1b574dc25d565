package gateway

import "sdkpp/server/gateway/internal/busmsg"

// DispatchBotSessions is Dispatch to the bot sessions among userIDs' sessions, whatever their
// intents: INTERACTION_CREATE needs no intent.
func (h *Hub) DispatchBotSessions(userIDs []uint64, event string, data any) {
	h.dispatchTo(userIDs, event, data, filter{kind: busmsg.ToBotSessions})
}
