package messages_test

import (
	"bytes"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/ratelimit"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// pageFixture is a channel of 100 messages by two authors (a user and a bot), each mentioning
// bob, every third pinned, every fifth with an attachment (the user's), every seventh a reply
// (which mentions the replied-to author too).
func pageFixture(t testing.TB, opts ...servertest.Option) (*guildtest.Bots, wire.Snowflake, []wire.GuildMessage) {
	// The sends and reads are the page's, not the rate limits' (a frozen clock never refills them).
	opts = append(opts, servertest.WithConfig(func(c *server.Config) { c.RateLimits = ratelimit.Config{Disabled: true} }))
	f := guildtest.NewBots(t, opts...)
	general := f.Channel("general").ID
	authors := []http.Header{guildtest.Bearer(f.Alice), guildtest.Bot(f.E.App.BotToken)}
	var sent []wire.GuildMessage
	for i := range 100 {
		h := authors[i%2]
		body := map[string]any{"content": "message " + strconv.Itoa(i) + " <@" + f.E.User("bob").ID.String() + ">"}
		if i%7 == 6 {
			body["message_reference"] = map[string]any{"message_id": sent[i-1].ID.String()}
		}
		var m wire.GuildMessage
		if i%5 == 4 {
			r := guildtest.SendParts(t, http.MethodPost, f.MessagesURL(general), authors[0], guildtest.PayloadPart(body),
				fileOf("0", "f"+strconv.Itoa(i)+".txt", "file "+strconv.Itoa(i)))
			guildtest.OK(t, r, &m)
		} else {
			m = f.PostMessage(t, general, body, h)
		}
		if i%3 == 0 {
			r := guildtest.Do(t, http.MethodPut, f.API(pinsPath(general, m.ID)), nil, guildtest.Bearer(f.Alice))
			require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		}
		sent = append(sent, m)
	}
	return f, general, sent
}

// A page of messages shows what each message shows alone: pins, attachments, authors, their
// members, mentions and replied messages are read for the whole page at once.
func TestMessagePageMatchesSingleMessages(t *testing.T) {
	f, general, sent := pageFixture(t)
	var list []wire.GuildMessage
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.MessagesURL(general)+"?limit=100", nil, guildtest.Bearer(f.Alice)), &list)
	require.Len(t, list, 100)
	slices.Reverse(list)
	for i, m := range list {
		var one wire.GuildMessage
		guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.MessagesURL(general, m.ID), nil, guildtest.Bearer(f.Alice)), &one)
		// The attachments' URLs are signed when read, with the second they were issued in.
		assert.Equal(t, unsigned(one), unsigned(m), "message %d", i)
		assert.Equal(t, sent[i].ID, m.ID)
		assert.Equal(t, i%3 == 0, m.Pinned, "message %d pinned", i)
		assert.Len(t, m.Attachments, map[bool]int{true: 1}[i%5 == 4], "message %d attachments", i)
		for _, a := range m.Attachments {
			assert.Contains(t, a.URL, "&hm=", "message %d's attachment URL is signed", i)
		}
		require.NotNil(t, m.Member, "message %d's author's member", i)
		mentions := 1 // bob
		if i%7 == 6 && sent[i-1].Author.ID != sent[i].Author.ID {
			mentions = 2 // and the replied-to author, whom a reply pings by default
		}
		require.Len(t, m.Mentions, mentions, "message %d", i)
		for _, men := range m.Mentions {
			assert.NotNil(t, men.Member, "message %d's mention's member", i)
		}
		if i%7 == 6 {
			require.NotNil(t, m.ReferencedMessage.Message, "message %d's replied message", i)
			assert.Equal(t, list[i-1].ID, m.ReferencedMessage.Message.ID)
			assert.Equal(t, list[i-1].Pinned, m.ReferencedMessage.Message.Pinned)
		}
	}
}

// A page of messages costs a fixed number of statements whatever its size: a page of 100 runs
// those of a page of 50 and of a page of 1, and a page with replies to messages off it one more
// (the replied messages' query).
func TestMessagePageQueries(t *testing.T) {
	f, general, sent := pageFixture(t)
	db, ok := f.E.Server.Store().(*store.DB)
	require.True(t, ok, "the server's store is a *store.DB")
	var mu sync.Mutex
	var ops []string
	count := func(query string, n int) []string {
		t.Helper()
		mu.Lock()
		ops = nil
		mu.Unlock()
		var list []wire.GuildMessage
		guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.MessagesURL(general)+"?"+query, nil, guildtest.Bearer(f.Alice)), &list)
		require.Len(t, list, n)
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(ops)
	}
	count("limit=1", 1) // the caller's token and access, read once
	db.ObserveQueries(func(op string, _ time.Duration) {
		mu.Lock()
		ops = append(ops, op)
		mu.Unlock()
	})
	t.Cleanup(func() { db.ObserveQueries(nil) })
	one, fifty, hundred := count("limit=1", 1), count("limit=50", 50), count("limit=100", 100)
	assert.Equal(t, fifty, hundred, "a page of 100 runs what a page of 50 does")
	// The fixture's replies answer the message before them: on a page of 50 or 100, each
	// replied message is on the page, and is not read again.
	assert.Equal(t, one, hundred, "a page of 1: %v, of 100: %v", one, hundred)
	assert.NotContains(t, hundred, "GuildMessagesByID")
	// Message 6 replies to message 5: a page of message 6 alone reads message 5, in one more
	// statement, as a page of 100 replies to messages off the page would.
	alone := count("limit=1&before="+sent[7].ID.String(), 1)
	assert.Len(t, alone, len(one)+1, "a page of 1: %v, of a reply alone: %v", one, alone)
	assert.Contains(t, alone, "GuildMessagesByID")
}

// unsigned is m with the signature query (ex, is, hm) cut from its attachments' URLs and from
// those of the message it replies to.
func unsigned(m wire.GuildMessage) wire.GuildMessage {
	m.Attachments = unsignedAttachments(m.Attachments)
	if r := m.ReferencedMessage.Message; r != nil {
		ref := *r
		ref.Attachments = unsignedAttachments(ref.Attachments)
		m.ReferencedMessage.Message = &ref
	}
	return m
}

// BenchmarkMessagePage reads a page of 1 and a page of 100 guild messages in turns and reports
// the median of each and their ratio (make bench; target: at most 3x). The store is SQLite in a
// data directory, or PostgreSQL under SDKPP_TEST_STORE=postgres.
func BenchmarkMessagePage(b *testing.B) {
	var opts []servertest.Option
	if os.Getenv(servertest.EnvStore) != "postgres" {
		opts = append(opts, servertest.WithDataDir(b.TempDir()))
	}
	f, general, _ := pageFixture(b, opts...)
	// The client reads each answer whole into a buffer it keeps, as a client that reads many
	// pages would: io.ReadAll's growing copies of a 150 kB page were garbage that the server,
	// sharing this process and its collector, paid for.
	var body bytes.Buffer
	client := &http.Client{}
	get := func(limit int) time.Duration {
		req, err := http.NewRequest(http.MethodGet, f.MessagesURL(general)+"?limit="+strconv.Itoa(limit), nil)
		require.NoError(b, err)
		req.Header.Set("Authorization", "Bearer "+f.Alice)
		body.Reset()
		start := time.Now()
		res, err := client.Do(req)
		if err == nil {
			_, err = body.ReadFrom(res.Body)
			res.Body.Close()
		}
		d := time.Since(start)
		require.NoError(b, err)
		if res.StatusCode != http.StatusOK {
			b.Fatalf("GET messages: %d %s", res.StatusCode, body.Bytes())
		}
		return d
	}
	get(1)
	get(100)
	var one, hundred []time.Duration
	b.ResetTimer()
	for b.Loop() {
		one, hundred = append(one, get(1)), append(hundred, get(100))
	}
	m1, m100 := medianOf(one), medianOf(hundred)
	b.ReportMetric(float64(m1.Microseconds()), "µs/page-of-1")
	b.ReportMetric(float64(m100.Microseconds()), "µs/page-of-100")
	b.ReportMetric(float64(m100)/float64(m1), "ratio")
}

func medianOf(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// unsignedAttachments is list with the signature query (ex, is, hm) cut from its URLs: each read
// of a message signs its attachments' URLs anew, at that read's second, as the platform's are.
func unsignedAttachments(list []wire.Attachment) []wire.Attachment {
	out := slices.Clone(list)
	for i := range out {
		if u, q, ok := strings.Cut(out[i].URL, "?"); ok && strings.Contains(q, "hm=") {
			out[i].URL = u
		}
		if u, q, ok := strings.Cut(out[i].ProxyURL, "?"); ok && strings.Contains(q, "hm=") {
			out[i].ProxyURL = u
		}
	}
	return out
}
