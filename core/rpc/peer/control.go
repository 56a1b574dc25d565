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
voice <field> <value...>       change a voice setting and send VOICE_SETTINGS_UPDATE; fields:
                               mute deaf echo noise-suppression noise-cancellation agc (true/false),
                               input-volume output-volume (numbers), mode (vad/ptt), ptt-key (text)
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
	case "voice":
		if len(f) < 2 {
			return "", errors.New("usage: voice <field> <value...>")
		}
		edit, err := voiceEdit(f[1], rest(2))
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("sent VOICE_SETTINGS_UPDATE to %d", p.UpdateVoiceSettings(edit)), nil
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

// voiceEdit parses one "voice" line command into a change of the voice settings.
func voiceEdit(field, value string) (func(*rpc.VoiceSettings), error) {
	flags := map[string]func(*rpc.VoiceSettings) *bool{
		"mute":               func(v *rpc.VoiceSettings) *bool { return &v.Mute },
		"deaf":               func(v *rpc.VoiceSettings) *bool { return &v.Deaf },
		"echo":               func(v *rpc.VoiceSettings) *bool { return &v.EchoCancellation },
		"noise-suppression":  func(v *rpc.VoiceSettings) *bool { return &v.NoiseSuppression },
		"noise-cancellation": func(v *rpc.VoiceSettings) *bool { return &v.NoiseCancellation },
		"agc":                func(v *rpc.VoiceSettings) *bool { return &v.AutomaticGainControl },
	}
	volumes := map[string]struct {
		max float64
		at  func(*rpc.VoiceSettings) *float32
	}{
		"input-volume":  {100, func(v *rpc.VoiceSettings) *float32 { return &v.Input.Volume }},
		"output-volume": {200, func(v *rpc.VoiceSettings) *float32 { return &v.Output.Volume }},
	}
	if at, ok := flags[field]; ok {
		b, err := strconv.ParseBool(value)
		if err != nil {
			return nil, fmt.Errorf("voice %s: %w", field, err)
		}
		return func(v *rpc.VoiceSettings) { *at(v) = b }, nil
	}
	if vol, ok := volumes[field]; ok {
		x, err := strconv.ParseFloat(value, 32)
		if err != nil || x < 0 || x > vol.max {
			return nil, fmt.Errorf("voice %s: want a number 0..%g", field, vol.max)
		}
		return func(v *rpc.VoiceSettings) { *vol.at(v) = float32(x) }, nil
	}
	switch field {
	case "mode":
		modes := map[string]string{"vad": rpc.VoiceModeActivity, "ptt": rpc.VoiceModePushToTalk}
		m, ok := modes[value]
		if !ok {
			return nil, errors.New("voice mode: want vad or ptt")
		}
		return func(v *rpc.VoiceSettings) { v.Mode.Type = m }, nil
	case "ptt-key":
		return func(v *rpc.VoiceSettings) { v.Mode.Shortcut = value }, nil
	}
	return nil, fmt.Errorf("voice: unknown field %q", field)
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
