package bots

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
)

// chanSteps are step lines an in-process bot sends.
type chanSteps chan []byte

func (c chanSteps) step(t *testing.T, what string, v any) {
	t.Helper()
	line := receive(t, c, what)
	var failed struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal(line, &failed), "%s", line)
	require.Empty(t, failed.Error, "the bot failed at %s", what)
	require.NoError(t, json.Unmarshal(line, v), "%s", line)
}

func (c chanSteps) say(v any) {
	line, _ := json.Marshal(v)
	c <- line
}

// gameMaps are the maps the bots' autocomplete chooses from.
var gameMaps = []string{"Harbour", "Hangar", "Desert"}

// A discordgo bot registers /game (ApplicationCommandCreate, subcommands with typed options and
// an autocomplete option) and answers it through InteractionRespond and FollowupMessageCreate:
// autocomplete choices (type 8), a subcommand's options, an ephemeral answer, a deferral
// completed by a follow-up (playGame).
func TestDiscordgoCommands(t *testing.T) {
	e := servertest.Start(t)
	guild := botLab(t, e, "Command Lab")
	pointDiscordgo(t, e.URL)
	dg, err := discordgo.New("Bot " + e.App.BotToken)
	require.NoError(t, err)
	dg.SyncEvents = true
	dg.Identify.Intents = discordgo.IntentsGuilds
	steps := make(chanSteps, 8)
	created := make(chan struct{}, 1)
	dg.AddHandler(func(_ *discordgo.Session, _ *discordgo.GuildCreate) { created <- struct{}{} })
	dg.AddHandler(func(s *discordgo.Session, i *discordgo.InteractionCreate) {
		if err := answerGame(s, i, steps); err != nil {
			steps.say(map[string]string{"error": err.Error()})
		}
	})
	require.NoError(t, dg.Open())
	t.Cleanup(func() { _ = dg.Close() })
	receive(t, created, "GUILD_CREATE")

	_, err = dg.ApplicationCommandCreate(e.App.ID.String(), guild.ID.String(), &discordgo.ApplicationCommand{
		Name: "game", Description: "Play", Options: []*discordgo.ApplicationCommandOption{
			{Type: discordgo.ApplicationCommandOptionSubCommand, Name: "start", Description: "Start a match", Options: []*discordgo.ApplicationCommandOption{
				{Type: discordgo.ApplicationCommandOptionInteger, Name: "rounds", Description: "Rounds", Required: true},
				{Type: discordgo.ApplicationCommandOptionString, Name: "map", Description: "Map", Required: true, Autocomplete: true}}},
			{Type: discordgo.ApplicationCommandOptionSubCommand, Name: "peek", Description: "Peek"},
			{Type: discordgo.ApplicationCommandOptionSubCommand, Name: "slow", Description: "Think first"}}})
	require.NoError(t, err)
	steps.say(map[string]string{"step": "ready"})
	playGame(t, e, guild, steps)
}

// answerGame answers an interaction of /game as playGame expects.
func answerGame(s *discordgo.Session, i *discordgo.InteractionCreate, steps chanSteps) error {
	data := i.ApplicationCommandData()
	if data.Name != "game" || len(data.Options) != 1 {
		return fmt.Errorf("unexpected command %q %+v", data.Name, data.Options)
	}
	sub := data.Options[0]
	opts := map[string]*discordgo.ApplicationCommandInteractionDataOption{}
	for _, o := range sub.Options {
		opts[o.Name] = o
	}
	if i.Type == discordgo.InteractionApplicationCommandAutocomplete {
		typed := ""
		for _, o := range sub.Options {
			if o.Focused {
				typed = o.StringValue()
			}
		}
		var choices []*discordgo.ApplicationCommandOptionChoice
		for _, m := range gameMaps {
			if strings.HasPrefix(strings.ToLower(m), strings.ToLower(typed)) {
				choices = append(choices, &discordgo.ApplicationCommandOptionChoice{Name: m, Value: strings.ToLower(m)})
			}
		}
		if err := s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
			Type: discordgo.InteractionApplicationCommandAutocompleteResult, Data: &discordgo.InteractionResponseData{Choices: choices}}); err != nil {
			return err
		}
		steps.say(gameStep{Step: "autocomplete", Sub: sub.Name, Focused: typed})
		return nil
	}
	switch sub.Name {
	case "start":
		rounds, where := opts["rounds"].IntValue(), opts["map"].StringValue()
		if err := s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: fmt.Sprintf("%d rounds on %s", rounds, where)}}); err != nil {
			return err
		}
		steps.say(gameStep{Step: "start", Sub: sub.Name, Rounds: int(rounds), Map: where})
	case "peek":
		if err := s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: "only you see this", Flags: discordgo.MessageFlagsEphemeral}}); err != nil {
			return err
		}
		steps.say(gameStep{Step: "peek"})
	case "slow":
		if err := s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseDeferredChannelMessageWithSource}); err != nil {
			return err
		}
		m, err := s.FollowupMessageCreate(i.Interaction, true, &discordgo.WebhookParams{Content: "slow done"})
		if err != nil {
			return err
		}
		if m.Content != "slow done" || m.Interaction == nil && m.InteractionMetadata == nil {
			return fmt.Errorf("follow-up %+v", m)
		}
		steps.say(gameStep{Step: "slow"})
	}
	return nil
}
