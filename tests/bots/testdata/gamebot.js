// A bot written with discord.js, changed in nothing but its base URL, for tests/bots: it
// registers /game in its guild (guild.commands.set: subcommands with typed options and an
// autocomplete option) and answers it through discord.js's interaction API: respond (autocomplete
// choices), reply, reply with the ephemeral flag, deferReply then followUp. It prints the step
// lines tests/bots/commands_test.go describes, and {"error": ...} when something fails.
'use strict';

const { say, failer } = require('./botio');
const { ApplicationCommandOptionType, Client, Events, GatewayIntentBits, MessageFlags } = require('discord.js');

const client = new Client({
  intents: [GatewayIntentBits.Guilds],
  rest: { api: process.env.SDKPP_API_BASE }, // the one change: the service's base URL
});
const fail = failer(client);
const maps = ['Harbour', 'Hangar', 'Desert'];

client.once(Events.ClientReady, async (c) => {
  try {
    const guild = c.guilds.cache.first();
    await guild.commands.set([{
      name: 'game', description: 'Play', options: [
        { type: ApplicationCommandOptionType.Subcommand, name: 'start', description: 'Start a match', options: [
          { type: ApplicationCommandOptionType.Integer, name: 'rounds', description: 'Rounds', required: true },
          { type: ApplicationCommandOptionType.String, name: 'map', description: 'Map', required: true, autocomplete: true },
        ] },
        { type: ApplicationCommandOptionType.Subcommand, name: 'peek', description: 'Peek' },
        { type: ApplicationCommandOptionType.Subcommand, name: 'slow', description: 'Think first' },
      ],
    }]);
    say({ step: 'ready' });
  } catch (err) {
    fail(err);
  }
});

client.on(Events.InteractionCreate, async (interaction) => {
  try {
    if (interaction.isAutocomplete()) {
      const typed = interaction.options.getFocused();
      await interaction.respond(maps.filter((m) => m.toLowerCase().startsWith(typed.toLowerCase()))
        .map((m) => ({ name: m, value: m.toLowerCase() })));
      say({ step: 'autocomplete', sub: interaction.options.getSubcommand(), focused: typed });
      return;
    }
    if (!interaction.isChatInputCommand() || interaction.commandName !== 'game') return;
    const sub = interaction.options.getSubcommand();
    if (sub === 'start') {
      const rounds = interaction.options.getInteger('rounds', true);
      const map = interaction.options.getString('map', true);
      await interaction.reply(`${rounds} rounds on ${map}`);
      say({ step: 'start', sub, rounds, map });
    } else if (sub === 'peek') {
      await interaction.reply({ content: 'only you see this', flags: MessageFlags.Ephemeral });
      say({ step: 'peek' });
    } else if (sub === 'slow') {
      await interaction.deferReply();
      const msg = await interaction.followUp('slow done');
      if (msg.content !== 'slow done' || !msg.interactionMetadata) throw new Error('follow-up: ' + JSON.stringify(msg));
      say({ step: 'slow' });
    }
  } catch (err) {
    fail(err);
  }
});

client.login(process.env.SDKPP_BOT_TOKEN).catch(fail);
