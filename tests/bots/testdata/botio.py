"""What the discord.py bots of tests/bots share: their JSON lines to the test on stdout, and
running the client with the bot token for at most a minute."""
import asyncio
import json
import os
import sys


def say(**kw):
    """Prints one JSON line for the test."""
    print(json.dumps(kw), flush=True)


def run(client):
    """Runs client with SDKPP_BOT_TOKEN for at most 60 s; an error is reported to the test."""
    async def main():
        try:
            await asyncio.wait_for(client.start(os.environ["SDKPP_BOT_TOKEN"]), timeout=60)
        except Exception as e:
            say(error=repr(e))
            sys.exit(1)

    asyncio.run(main())
