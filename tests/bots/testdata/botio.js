// What the discord.js bots of tests/bots share: their JSON lines to the test on stdout, and the
// lines the test writes on stdin.
'use strict';

const readline = require('node:readline');

// say prints one JSON line for the test.
function say(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// failer returns a function that reports an error to the test and ends the bot's client.
function failer(client) {
  return (err) => {
    say({ error: String(err && err.stack ? err.stack : err) });
    client.destroy().finally(() => process.exit(1));
  };
}

const input = readline.createInterface({ input: process.stdin });
const lines = input[Symbol.asyncIterator]();

// nextLine returns the test's next line, trimmed.
async function nextLine() {
  const { value, done } = await lines.next();
  if (done) throw new Error('stdin closed');
  return value.trim();
}

module.exports = { say, failer, nextLine };
