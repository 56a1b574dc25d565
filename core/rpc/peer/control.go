package peer

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sdkpp/core/rpc"
)

// ErrQuit is returned by Exec for the line "quit": the program running the Peer should stop.
var ErrQuit = errors.New("quit")

// Usage lists the line commands of Exec.
const Usage = `authorize-request              send AUTHORIZE_REQUEST to its subscribers
guild <id> <name> [icon_url]   add or replace a guild (GET_GUILD, GUILD_STATUS)
guild-status <id> <online>     send GUILD_STATUS of a guild to its subscribers
error <code> <message...>      send an ERROR event to every connection
ping [payload]                 send PING to every connection
close <code> <message...>      send CLOSE to every connection and drop them
kick                           drop every connection without a word
status                         print connections and subscriptions
help                           print this list
quit                           stop`

// Exec runs one line command (see Usage) and returns what it did, as one line.
func (p *Peer) Exec(line string) (string, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return "", nil
	}
	rest := func(i int) string { return strings.Join(f[i:], " ") }
	code := func() (int, error) {
		if len(f) < 2 {
			return 0, fmt.Errorf("usage: %s <code> <message...>", f[0])
		}
		return strconv.Atoi(f[1])
	}
	switch f[0] {
	case "authorize-request":
		return fmt.Sprintf("sent AUTHORIZE_REQUEST to %d", p.AuthorizeRequest()), nil
	case "guild":
		if len(f) < 3 {
			return "", errors.New("usage: guild <id> <name> [icon_url]")
		}
		g := rpc.Guild{ID: f[1], Name: f[2]}
		if len(f) > 3 {
			g.IconURL = f[3]
		}
		p.SetGuild(g)
		return "guild " + g.ID + " set", nil
	case "guild-status":
		if len(f) != 3 {
			return "", errors.New("usage: guild-status <id> <online>")
		}
		online, err := strconv.Atoi(f[2])
		if err != nil {
			return "", fmt.Errorf("online: %w", err)
		}
		n, err := p.GuildStatus(f[1], online)
		return fmt.Sprintf("sent GUILD_STATUS to %d", n), err
	case "error", "close":
		c, err := code()
		if err != nil {
			return "", err
		}
		if f[0] == "close" {
			return fmt.Sprintf("closed %d", p.CloseAll(c, rest(2))), nil
		}
		return fmt.Sprintf("sent ERROR to %d", p.SendError(c, rest(2))), nil
	case "ping":
		return fmt.Sprintf("sent PING to %d", p.Ping(rest(1))), nil
	case "kick":
		return fmt.Sprintf("dropped %d", p.Kick()), nil
	case "status":
		return p.status(), nil
	case "help":
		return Usage, nil
	case "quit":
		return "bye", ErrQuit
	}
	return "", fmt.Errorf("unknown command %q (try help)", f[0])
}

// status describes the connections and their subscriptions.
func (p *Peer) status() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	count := map[string]int{}
	for c := range p.conns {
		if !c.ready {
			continue
		}
		n++
		for k := range c.subs {
			name := k.evt
			if k.guildID != "" {
				name += ":" + k.guildID
			}
			count[name]++
		}
	}
	var subs []string
	for name, k := range count {
		subs = append(subs, fmt.Sprintf("%s=%d", name, k))
	}
	sort.Strings(subs)
	return fmt.Sprintf("connections=%d subscriptions=[%s]", n, strings.Join(subs, " "))
}
