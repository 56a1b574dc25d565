package bots

import (
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
)

// A discordgo bot opens a DM with a member of its guild (UserChannelCreate), asks there
// (ChannelMessageSend), and receives the user's answer through its MessageCreate handler, with
// the DM's channel type and the mention of the bot.
func TestDiscordgoDM(t *testing.T) {
	e := servertest.Start(t)
	botLab(t, e, "DM Lab")
	alice := e.User("alice")
	pointDiscordgo(t, e.URL)
	dg, err := discordgo.New("Bot " + e.App.BotToken)
	require.NoError(t, err)
	dg.SyncEvents = true
	dg.Identify.Intents = discordgo.IntentsGuilds | discordgo.IntentsDirectMessages
	type seen struct {
		channel, author, content string
		guild                    string
		mentions                 []string
	}
	ready := make(chan struct{}, 1)
	answers := make(chan seen, 1)
	dg.AddHandler(func(_ *discordgo.Session, _ *discordgo.GuildCreate) { ready <- struct{}{} })
	dg.AddHandler(func(s *discordgo.Session, m *discordgo.MessageCreate) {
		if m.Author.ID == s.State.User.ID {
			return
		}
		if _, err := s.ChannelMessageSendReply(m.ChannelID, "noted", m.Reference()); err != nil {
			t.Errorf("reply: %v", err)
		}
		got := seen{channel: m.ChannelID, author: m.Author.Username, content: m.Content, guild: m.GuildID}
		for _, u := range m.Mentions {
			got.mentions = append(got.mentions, u.ID)
		}
		answers <- got
	})
	require.NoError(t, dg.Open())
	t.Cleanup(func() { _ = dg.Close() })
	receive(t, ready, "GUILD_CREATE")

	dm, err := dg.UserChannelCreate(alice.ID.String())
	require.NoError(t, err)
	assert.Equal(t, discordgo.ChannelTypeDM, dm.Type)
	require.Len(t, dm.Recipients, 1)
	assert.Equal(t, alice.ID.String(), dm.Recipients[0].ID)
	asked, err := dg.ChannelMessageSend(dm.ID, "What is your favourite map?")
	require.NoError(t, err)
	assert.Equal(t, dm.ID, asked.ChannelID)

	// alice answers in the DM with her game's token.
	aliceSays(t, e, dm.ID, "<@"+e.App.BotUserID.String()+"> the harbour")

	got := receive(t, answers, "alice's answer")
	assert.Equal(t, seen{channel: dm.ID, author: "alice", content: "<@" + e.App.BotUserID.String() + "> the harbour",
		mentions: []string{e.App.BotUserID.String()}}, got)
	checkDMReply(t, e, dm.ID)
}
