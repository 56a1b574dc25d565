"""A bot written with discord.py, changed in nothing but its base URL, for tests/bots.

It runs as discord.AutoShardedClient, which asks the service for its gateway (GET /gateway/bot).

It logs in with its bot token (SDKPP_BOT_TOKEN), waits for its guild, answers "!ping" with
"pong" as a reply, then reads the guild's members and roles and prints one JSON line of what it
saw before it disconnects. The Go test posts the "!ping" once the bot says it is ready.
"""
import asyncio
import json
import os
import sys

import discord
import discord.http

discord.http.Route.BASE = os.environ["SDKPP_API_BASE"]  # the one change: the service's base URL

intents = discord.Intents.default()
intents.members = True
intents.message_content = True
discord.utils.setup_logging(level=int(os.environ.get("SDKPP_BOT_LOG", "30")))
# AutoShardedClient learns the gateway's address from GET /gateway/bot; discord.Client would dial
# the platform's own gateway host, which discord.py does not derive from the base URL.
client = discord.AutoShardedClient(intents=intents)
seen = {}


def report(**kw):
    seen.update(kw)


@client.event
async def on_ready():
    guild = client.guilds[0] if client.guilds else None
    report(user=str(client.user.id), bot=client.user.bot,
           guilds=[str(g.id) for g in client.guilds],
           channels=[c.name for c in guild.channels] if guild else [])
    print("READY", flush=True)


@client.event
async def on_message(message):
    if message.author.id == client.user.id or message.content != "!ping":
        return
    try:
        reply = await message.reply("pong", mention_author=False)
        guild = message.guild
        members = [m async for m in guild.fetch_members(limit=100)]
        roles = await guild.fetch_roles()
        report(reply=reply.content, reply_guild=str(reply.guild.id) if reply.guild else None,
               members=sorted(m.name for m in members),
               roles=sorted((r.name, r.color.value, r.permissions.value) for r in roles))
    except Exception as e:  # reported to the test, which fails on it
        report(error=repr(e))
    print(json.dumps(seen), flush=True)
    await client.close()


async def main():
    try:
        await asyncio.wait_for(client.start(os.environ["SDKPP_BOT_TOKEN"]), timeout=60)
    except Exception as e:
        print(json.dumps({"error": repr(e)}), flush=True)
        sys.exit(1)


asyncio.run(main())
