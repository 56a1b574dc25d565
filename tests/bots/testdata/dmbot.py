"""A bot written with discord.py, changed in nothing but its base URL, for tests/bots: it opens a
DM with a user and receives the user's answer through discord.py's on_message event.

It logs in with its bot token (SDKPP_BOT_TOKEN; base URL SDKPP_API_BASE), prints "READY", reads a
user id on stdin, opens the DM (Member.create_dm, the member found in its guild), asks there and
prints {"channel": ..., "type": ..., "recipient": ...}; then prints the user's answer as
on_message gave it, {"content": ..., ...}, and disconnects. {"error": ...} when something fails.
"""
import asyncio
import os
import sys

import discord
import discord.http

from botio import run, say

discord.http.Route.BASE = os.environ["SDKPP_API_BASE"]  # the one change: the service's base URL

intents = discord.Intents.default()  # guilds and dm_messages among them
discord.utils.setup_logging(level=int(os.environ.get("SDKPP_BOT_LOG", "30")))
client = discord.AutoShardedClient(intents=intents)


@client.event
async def on_ready():
    print("READY", flush=True)
    try:
        user_id = int((await asyncio.to_thread(sys.stdin.readline)).strip())
        member = await client.guilds[0].fetch_member(user_id)
        dm = await member.create_dm()
        await dm.send("What is your favourite map?")
        say(channel=str(dm.id), type=dm.type.value, recipient=str(dm.recipient.id) if dm.recipient else None)
    except Exception as e:  # reported to the test, which fails on it
        say(error=repr(e))
        await client.close()


@client.event
async def on_message(message):
    if message.author.id == client.user.id:
        return
    await message.reply("noted")
    say(content=message.content, author=message.author.name, channel=str(message.channel.id),
        dm=isinstance(message.channel, discord.DMChannel), guild=str(message.guild.id) if message.guild else None,
        mentions_bot=client.user in message.mentions)
    await client.close()


run(client)
