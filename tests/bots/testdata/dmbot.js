// A bot written with discord.js, changed in nothing but its base URL, for tests/bots: it opens a
// DM with a user and receives the user's answer through discord.js's messageCreate event.
//
// It logs in with its bot token (SDKPP_BOT_TOKEN; REST base SDKPP_API_BASE) and prints one JSON
// line per step on stdout:
//   {"step":"ready"}                          logged in; it then reads a user id on stdin
//   {"step":"asked", ...}                     the DM it opened with that user (users.createDM)
//                                             and its question, sent there
//   {"step":"answered", ...}                  the user's answer, as messageCreate gave it, once
//                                             the bot has replied to it ("noted")
// and {"error": ...} when something fails.
'use strict';

const { say, failer, nextLine } = require('./botio');
const { ChannelType, Client, Events, GatewayIntentBits, Partials } = require('discord.js');

const client = new Client({
  intents: [GatewayIntentBits.Guilds, GatewayIntentBits.DirectMessages],
  partials: [Partials.Channel], // DM channels discord.js has not cached (built from channel_type)
  rest: { api: process.env.SDKPP_API_BASE }, // the one change: the service's base URL
});

const fail = failer(client);

client.on(Events.MessageCreate, async (message) => {
  if (message.author.id === client.user.id) return;
  try {
    await message.reply('noted');
    say({
      step: 'answered',
      content: message.content,
      author: message.author.username,
      channel: message.channelId,
      dm: message.channel.type === ChannelType.DM,
      guild: message.guildId,
      mentions_bot: message.mentions.users.has(client.user.id),
    });
    await client.destroy();
    process.exit(0);
  } catch (err) {
    fail(err);
  }
});

client.once(Events.ClientReady, async () => {
  try {
    say({ step: 'ready' });
    const dm = await client.users.createDM(await nextLine());
    const asked = await dm.send('What is your favourite map?');
    say({ step: 'asked', channel: dm.id, type: dm.type, recipient: dm.recipientId, message: asked.id });
  } catch (err) {
    fail(err);
  }
});

client.login(process.env.SDKPP_BOT_TOKEN).catch(fail);
