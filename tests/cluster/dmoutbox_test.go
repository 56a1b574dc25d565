package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core"
	"sdkpp/server"
	"sdkpp/server/gateway"
	"sdkpp/server/servertest"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// envHoldStaged, set, makes a node (runNode) hold every publish of staged dispatches until the
// publish's context ends: a node so held is killed between a commit and its publish.
const envHoldStaged = "SDKPP_CLUSTER_HOLD_STAGED"

// holdingBus is a node's bus that holds every publish of staged dispatches (envHoldStaged).
type holdingBus struct{ gateway.Bus }

func (holdingBus) PublishID(ctx context.Context, _ []byte, _ string) (uint64, error) {
	<-ctx.Done()
	return 0, fmt.Errorf("held: %w", ctx.Err())
}

// journal records, in delivery order, the DM and relationship events an SDK hands the game.
type journal struct {
	mu     sync.Mutex
	events []string
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, fmt.Sprintf(format, args...))
}

func (j *journal) list() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.events...)
}

// listen records p's DM and relationship events in j, naming the users by names.
func (j *journal) listen(p *player, names map[uint64]string) {
	p.SetMessageCreatedCallback(core.Func(func(id uint64) { j.add("create %s", p.GetMessageHandle(id).Content()) }))
	p.SetMessageUpdatedCallback(core.Func(func(id uint64) { j.add("update %s", p.GetMessageHandle(id).Content()) }))
	p.SetMessageDeletedCallback(core.Func(func(id, _ uint64) { j.add("delete %d", id) }))
	p.SetRelationshipCreatedCallback(core.Func(func(id uint64, _ bool) { j.add("relationship %s", names[id]) }))
	p.SetRelationshipDeletedCallback(core.Func(func(id uint64, _ bool) { j.add("no relationship %s", names[id]) }))
}

// DMs (create, edit, delete) and relationship changes (friend request, accept, remove, block)
// made by players on three nodes reach every SDK once each and in commit order for their order
// key (a DM channel's; each user's, for a relationship), though node A's path between the commit
// and the publish is cut for some of them (as when it dies between the two): the next change
// under the same key, through another node, relays what A left first, while changes under other
// keys neither wait for it nor relay it; and a change after which nothing comes is relayed once
// its lease is over.
func TestDMsAndRelationshipsOutliveTheirPublish(t *testing.T) {
	c, cut, clk := startCut(t, nil)
	ana, ben, cat := connect(t, c.Nodes[0], "ana"), connect(t, c.Nodes[1], "ben"), connect(t, c.Nodes[2], "cat")
	names := map[uint64]string{ana.id: "ana", ben.id: "ben", cat.id: "cat"}
	journals := map[*player]*journal{ana: {}, ben: {}, cat: {}}
	for p, j := range journals {
		j.listen(p, names)
	}
	left := func() int {
		t.Helper()
		keys, err := c.Nodes[0].Server.Store().OutboxKeys(context.Background(), clk.Now().Add(24*3600e9))
		require.NoError(t, err)
		return len(keys)
	}
	sent := map[string]uint64{} // DM content -> id
	dm := func(from, to *player, content string) func(done func(*core.ClientResult)) {
		return func(done func(*core.ClientResult)) {
			from.SendUserMessage(to.id, content, core.Func(func(r *core.ClientResult, id uint64) { sent[content] = id; done(r) }))
		}
	}

	steps := []struct {
		name  string
		lease bool // the relay job relays what waits, once its lease is over, before the step
		cut   bool // made through node A with its publish cut
		call  func(done func(*core.ClientResult))
		left  int         // the order keys whose dispatches wait in the outbox after the step
		then  func() bool // waited for after the step, when set
	}{
		{name: "ana DMs ben through A, not published", cut: true, call: dm(ana, ben, "one"), left: 1},
		{name: "cat DMs ben through C: another channel, which neither waits nor relays", call: dm(cat, ben, "two"), left: 1},
		{name: "ben DMs ana through B, which relays ana's first", call: dm(ben, ana, "three")},
		{name: "ana edits her DM, not published", cut: true, call: func(done func(*core.ClientResult)) {
			ana.EditUserMessage(ben.id, sent["one"], "one, edited", core.Func(done))
		}, left: 1},
		{name: "cat deletes hers through C", call: func(done func(*core.ClientResult)) {
			cat.DeleteUserMessage(ben.id, sent["two"], core.Func(done))
		}, left: 1},
		{name: "ben deletes his through B, after the edit is relayed", call: func(done func(*core.ClientResult)) {
			ben.DeleteUserMessage(ana.id, sent["three"], core.Func(done))
		}},
		{name: "ana asks ben to be friends through A, not published: each user's events under the user's key",
			cut: true, call: func(done func(*core.ClientResult)) {
				ana.SendGameFriendRequestById(ben.id, core.Func(done))
			}, left: 2},
		{name: "cat asks ben through C, which relays ana's request to ben first, not ana's own event", call: func(done func(*core.ClientResult)) {
			cat.SendGameFriendRequestById(ben.id, core.Func(done))
		}, left: 1, then: func() bool { // ben's SDK accepts only a request it has seen
			return ben.GetRelationshipHandle(ana.id).GameRelationshipType() == core.RelationshipTypePendingIncoming
		}},
		{name: "ben accepts ana through B, which relays ana's own event first", call: func(done func(*core.ClientResult)) {
			ben.AcceptGameFriendRequest(ana.id, core.Func(done))
		}},
		{name: "ana removes ben through A, not published", cut: true, call: func(done func(*core.ClientResult)) {
			ana.RemoveGameFriend(ben.id, core.Func(done))
		}, left: 2},
		{name: "cat blocks ana through C, after nothing came under the locks for a lease", lease: true,
			call: func(done func(*core.ClientResult)) { cat.BlockUser(ana.id, core.Func(done)) }},
		// The last words: each SDK has had everything before them (the bus's one order).
		{name: "ben DMs ana", call: dm(ben, ana, "end")},
		{name: "ben DMs cat", call: dm(ben, cat, "end")},
	}
	for _, s := range steps {
		if s.lease {
			clk.Advance(server.OutboxLease)
			waitFor(t, "the relay job to relay what waits", func() bool { return left() == 0 })
		}
		cut.cut.Store(s.cut)
		result(t, s.name, s.call) // the change's answer: it was committed
		cut.cut.Store(false)
		require.Equal(t, s.left, left(), "%s: the order keys whose dispatches wait in the outbox", s.name)
		if s.then != nil {
			waitFor(t, s.name, s.then)
		}
	}

	deleted := func(content string) string { return fmt.Sprintf("delete %d", sent[content]) }
	want := map[*player][]string{
		ana: {"create one", "create three", "update one, edited", deleted("three"), "relationship ben", "no relationship ben",
			"create end"},
		// Channel ana-ben's "one" waited for its relay while channel cat-ben's "two" went on.
		ben: {"create two", "create one", "create three", deleted("two"), "update one, edited", deleted("three"),
			"relationship ana", "relationship cat", "no relationship ana", "create end", "create end"},
		cat: {"create two", deleted("two"), "relationship ben", "relationship ana", "create end"},
	}
	for p, w := range want {
		waitFor(t, p.name+" to get the last words", func() bool {
			return slices.Equal(ends(journals[p].list()), ends(w))
		})
	}
	for p, w := range want {
		assert.Equal(t, w, journals[p].list(), "%s: each once, in commit order", p.name)
	}
	assert.Equal(t, core.RelationshipTypeNone, ben.GetRelationshipHandle(ana.id).GameRelationshipType())
}

// ends are the last words of a journal: its "create end" events.
func ends(events []string) []string {
	return slices.DeleteFunc(slices.Clone(events), func(e string) bool { return e != "create end" })
}

// A node killed with SIGKILL after it committed a DM or a friend request and before it published
// its events (runNode's envHoldStaged holds the publish) loses none of them: the next change
// under the same order key (the DM's channel, each user of the friend request), through another
// node, publishes them first. Every SDK, on the
// other nodes, gets each event once and in commit order.
func TestKilledNodesCommittedEventsAreDelivered(t *testing.T) {
	addrs := []string{servertest.FreeAddr(t), servertest.FreeAddr(t), servertest.FreeAddr(t)}
	nodes, storeURL, app := startNodes(t, addrs, func(addr string) string { return "http://" + addr }, func(i int) []string {
		if i == 0 {
			return []string{envHoldStaged + "=1"}
		}
		return nil
	})
	envOf := func(i int) *servertest.Env {
		base := "http://" + addrs[i]
		return &servertest.Env{URL: base, APIURL: base + "/api/v10", App: app}
	}
	ana, ben, cat := connect(t, envOf(1), "ana"), connect(t, envOf(2), "ben"), connect(t, envOf(1), "cat")
	names := map[uint64]string{ana.id: "ana", ben.id: "ben", cat.id: "cat"}
	journals := map[*player]*journal{ana: {}, ben: {}, cat: {}}
	for p, j := range journals {
		j.listen(p, names)
	}
	anaToken := envOf(1).ProvisionalToken(t, "ana", "ana") // ana's REST calls through node 1
	benToken := envOf(2).ProvisionalToken(t, "ben", "ben")
	st, err := store.OpenPostgres(context.Background(), storeURL, store.PostgresOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	left := func() int {
		t.Helper()
		keys, err := st.OutboxKeys(context.Background(), time.Now().Add(24*time.Hour))
		require.NoError(t, err)
		return len(keys)
	}
	var channel struct {
		ID wire.Snowflake `json:"id"`
	}
	api(t, http.MethodPost, envOf(1).APIURL, "/users/@me/channels", anaToken, map[string]any{"recipient_id": wire.Snowflake(ben.id)}, &channel)

	tests := []struct {
		name         string
		method, path string
		body         any
		keys         int    // the order keys its events wait under
		next         func() // through another node
	}{
		{"a DM", http.MethodPost, fmt.Sprintf("/channels/%d/messages", channel.ID), map[string]string{"content": "held"}, 1,
			func() { // the channel's key
				result(t, "ben's DM", func(done func(*core.ClientResult)) {
					ben.SendUserMessage(ana.id, "after", core.Func(func(r *core.ClientResult, _ uint64) { done(r) }))
				})
			}},
		// Each user's events wait under the user's key; ben accepts (through the API: his SDK has
		// not seen the request) under both.
		{"a friend request", http.MethodPut, fmt.Sprintf("/users/@me/game-relationships/%d", ben.id), nil, 2,
			func() {
				api(t, http.MethodPut, envOf(2).APIURL, fmt.Sprintf("/users/@me/game-relationships/%d", ana.id), benToken, nil, nil)
			}},
	}
	for i, tc := range tests {
		if i > 0 {
			nodes[0].start(t) // killed by the case before
		}
		held := make(chan struct{})
		go func() { // owned by this case, which waits for it once the node is killed
			defer close(held)
			var raw []byte
			if tc.body != nil {
				raw, _ = json.Marshal(tc.body)
			}
			req, _ := http.NewRequest(tc.method, envOf(0).APIURL+tc.path, bytes.NewReader(raw))
			req.Header.Set("Authorization", "Bearer "+anaToken)
			if raw != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close() // answered: the node was killed too late (checked below)
			}
		}()
		waitFor(t, tc.name+": committed, its publish held", func() bool { return left() == tc.keys })
		nodes[0].kill()
		<-held
		require.Equal(t, tc.keys, left(), "%s: the killed node left its events in the outbox", tc.name)
		tc.next()
		require.Equal(t, 0, left(), "%s: relayed by the next holder of the lock", tc.name)
	}
	result(t, "ben's last word to ana", func(done func(*core.ClientResult)) {
		ben.SendUserMessage(ana.id, "end", core.Func(func(r *core.ClientResult, _ uint64) { done(r) }))
	})
	result(t, "ben's last word to cat", func(done func(*core.ClientResult)) {
		ben.SendUserMessage(cat.id, "end", core.Func(func(r *core.ClientResult, _ uint64) { done(r) }))
	})

	want := map[*player][]string{
		ana: {"create held", "create after", "relationship ben", "create end"},
		ben: {"create held", "create after", "relationship ana", "create end", "create end"},
		cat: {"create end"},
	}
	for p, w := range want {
		waitFor(t, p.name+" to get the last words", func() bool {
			return slices.Equal(ends(journals[p].list()), ends(w))
		})
	}
	for p, w := range want {
		assert.Equal(t, w, journals[p].list(), "%s: each once, in commit order", p.name)
	}
}
