// A bot written with discord.js, changed in nothing but its base URL, for tests/bots.
//
// The one change is the REST client's api option (SDKPP_API_BASE, the service's /api): discord.js
// learns the gateway's address from GET /gateway/bot there.
//
// It logs in with its bot token (SDKPP_BOT_TOKEN) and prints one JSON line per step on stdout:
//   {"step":"ready", ...}     what READY and GUILD_CREATE gave it; the Go test then posts "!ping"
//   {"step":"answered", ...}  its reply "pong", the guild's members (fetched over the gateway) and
//                             roles; it then waits for a user id on stdin, after the test has
//                             used up the members bucket
//   {"step":"limited", ...}   that member, fetched over REST through the service's 429, with the
//                             statuses and times of the requests discord.js made for it
// and {"error": ...} when something fails.
'use strict';

const { say, failer, nextLine } = require('./botio');
const { Client, Events, GatewayIntentBits, RESTEvents } = require('discord.js');

const client = new Client({
  intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMembers, GatewayIntentBits.GuildMessages,
    GatewayIntentBits.MessageContent],
  rest: { api: process.env.SDKPP_API_BASE }, // the one change: the service's base URL
});

const fail = failer(client);

// The raw dispatches, to show that READY and GUILD_CREATE came as such.
const dispatches = [];
client.on(Events.Raw, (packet) => {
  if (packet.t === 'READY' || packet.t === 'GUILD_CREATE') dispatches.push(packet.t);
});

// Every REST answer to a request for one member, with when it came.
const memberAnswers = [];
client.rest.on(RESTEvents.Response, (request, response) => {
  if (/\/guilds\/\d+\/members\/\d+$/.test(request.path)) {
    memberAnswers.push({ status: response.status, at: Date.now(), retry_after: response.headers.get('retry-after'),
      reset_after: response.headers.get('x-ratelimit-reset-after') });
  }
});

client.once(Events.ClientReady, (c) => {
  const guild = c.guilds.cache.first();
  say({
    step: 'ready',
    user: c.user.id,
    username: c.user.username,
    bot: c.user.bot,
    dispatches,
    guilds: [...c.guilds.cache.keys()],
    channels: guild ? guild.channels.cache.map((ch) => ch.name) : [],
  });
});

client.on(Events.MessageCreate, async (message) => {
  if (message.author.id === client.user.id || message.content !== '!ping') return;
  try {
    const reply = await message.reply('pong');
    const guild = message.guild;
    const members = await guild.members.fetch(); // Request Guild Members over the gateway
    const roles = await guild.roles.fetch();
    say({
      step: 'answered',
      reply: reply.content,
      reply_guild: reply.guildId,
      members: [...members.values()].map((m) => m.user.username).sort(),
      roles: [...roles.values()].map((r) => [r.name, r.color, r.permissions.bitfield.toString()]).sort(),
    });

    const userID = await nextLine();
    const member = await guild.members.fetch({ user: userID, force: true });
    say({ step: 'limited', member: member.user.username, guild: member.guild.id, answers: memberAnswers });
    await client.destroy();
    process.exit(0);
  } catch (err) {
    fail(err);
  }
});

client.login(process.env.SDKPP_BOT_TOKEN).catch(fail);
