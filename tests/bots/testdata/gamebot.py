"""A bot written with discord.py, changed in nothing but its base URL, for tests/bots: it
registers /game in its guild (app_commands: a group of subcommands with typed options and an
autocomplete option, synced with CommandTree.sync) and answers it through discord.py's
interaction API: autocomplete choices, send_message, send_message(ephemeral=True), defer then
followup.send. It prints the step lines tests/bots/commands_test.go describes, and
{"error": ...} when something fails.
"""
import os

import discord
import discord.http
from discord import app_commands

from botio import run, say

discord.http.Route.BASE = os.environ["SDKPP_API_BASE"]  # the one change: the service's base URL

discord.utils.setup_logging(level=int(os.environ.get("SDKPP_BOT_LOG", "30")))
client = discord.AutoShardedClient(intents=discord.Intents.default())
tree = app_commands.CommandTree(client)
game = app_commands.Group(name="game", description="Play")
MAPS = ["Harbour", "Hangar", "Desert"]


async def map_choices(interaction: discord.Interaction, current: str):
    say(step="autocomplete", sub=interaction.data["options"][0]["name"], focused=current)
    return [app_commands.Choice(name=m, value=m.lower()) for m in MAPS if m.lower().startswith(current.lower())]


@game.command(name="start", description="Start a match")
@app_commands.describe(rounds="Rounds", map="Map")
@app_commands.autocomplete(map=map_choices)
async def start(interaction: discord.Interaction, rounds: int, map: str):
    await interaction.response.send_message(f"{rounds} rounds on {map}")
    say(step="start", sub="start", rounds=rounds, map=map)


@game.command(name="peek", description="Peek")
async def peek(interaction: discord.Interaction):
    await interaction.response.send_message("only you see this", ephemeral=True)
    say(step="peek")


@game.command(name="slow", description="Think first")
async def slow(interaction: discord.Interaction):
    await interaction.response.defer()
    msg = await interaction.followup.send("slow done", wait=True)
    if msg.content != "slow done":
        raise RuntimeError(f"follow-up {msg!r}")
    say(step="slow")


@tree.error
async def on_tree_error(interaction, error):
    say(error=repr(error))


@client.event
async def on_ready():
    try:
        guild = client.guilds[0]
        tree.add_command(game, guild=guild)
        await tree.sync(guild=guild)
        say(step="ready")
    except Exception as e:  # reported to the test, which fails on it
        say(error=repr(e))


run(client)
