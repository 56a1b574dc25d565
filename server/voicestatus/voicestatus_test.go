package voicestatus

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/devseed"
	"sdkpp/server/guildvoice"
	"sdkpp/server/httpx"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// events records the guild events the service tells.
type events struct {
	mu  sync.Mutex
	got []event
}

type event struct {
	guildID uint64
	name    string
	data    any
}

func (e *events) GuildEvent(_ context.Context, guildID uint64, name string, data any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, event{guildID, name, data})
}

func (e *events) take() []event {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.got
	e.got = nil
	return out
}

// GW-4: VOICE_CHANNEL_STATUS_UPDATE is told to the guild when a channel's status changes (null
// when cleared), and not when it is set to the status it has.
func TestStatusUpdateDispatchedOnChange(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, "")
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	clk := clock.NewFake(time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC))
	ids := snowflake.New(clk, 0)
	app, err := (&devseed.Seeder{Store: st, IDs: ids, Now: clk.Now}).CreateApplication(ctx, devseed.AppSpec{Name: "bot"})
	require.NoError(t, err)
	guildID, channelID := ids.Next(), ids.Next()
	require.NoError(t, st.CreateGuild(ctx, &store.Guild{ID: guildID, Name: "g", OwnerID: uint64(app.BotUserID), CreatedAt: clk.Now()}))
	require.NoError(t, st.CreateGuildChannel(ctx, &store.GuildChannel{ID: channelID, GuildID: guildID, Name: "v",
		Type: wire.ChannelGuildVoice, CreatedAt: clk.Now()}))

	rec := &events{}
	s := &Service{Store: st, Clock: clk, IDs: ids, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Events: rec,
		Voice: &guildvoice.Service{}}
	mux := httpx.NewMux()
	s.Register(mux)
	put := func(body string) {
		t.Helper()
		req := httptest.NewRequest(http.MethodPut, "/channels/"+wire.Snowflake(channelID).String()+"/voice-status", strings.NewReader(body))
		req.Header.Set("Authorization", "Bot "+app.BotToken)
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		require.Equal(t, http.StatusNoContent, w.Code, "%s", w.Body)
	}
	status := "Raid night"
	cases := []struct {
		body string
		want *string // the status dispatched; nil with none false: no dispatch
		none bool
	}{
		{`{"status":"Raid night"}`, &status, false},
		{`{"status":"Raid night"}`, nil, true},
		{`{"status":null}`, nil, false},
		{`{"status":""}`, nil, true},
	}
	for i, tc := range cases {
		put(tc.body)
		got := rec.take()
		if tc.none {
			assert.Empty(t, got, "GW-4: case %d: an unchanged status is not dispatched", i)
			continue
		}
		require.Len(t, got, 1, "GW-4: case %d", i)
		assert.Equal(t, guildID, got[0].guildID)
		assert.Equal(t, gwire.EventVoiceChannelStatusUpdate, got[0].name, "GW-4")
		assert.Equal(t, gwire.VoiceChannelStatusUpdate{ID: wire.Snowflake(channelID), GuildID: wire.Snowflake(guildID),
			Status: tc.want}, got[0].data, "GW-4: case %d", i)
	}
}
