// {{name}}: an arena bot in Node.js over the stdio transport (protocol/SPEC.md section 14.3):
// one JSON message per line on stdin and stdout, no packages needed.
// It draws from the stock, never melds, and discards its highest card. Change decideDraw and decidePlay.
// Logs go to stderr (console.error): stdout is the protocol.
"use strict";
const ORDER = "A23456789TJQK";
const rank = (card) => (card === "JK" ? -1 : ORDER.indexOf(card[0])); // jokers count low, so they are kept
const send = (msg) => process.stdout.write(JSON.stringify({ v: 1, ...msg }) + "\n");

function decideDraw(obs) {
  return obs.legal_draws.includes("stock") ? "stock" : obs.legal_draws[0];
}

function decidePlay(obs) {
  // the card taken from the discard pile (or an equal one) may not be discarded this turn
  const allowed = obs.hand.filter((c) => !(obs.took_discard && c === obs.drawn));
  const discard = allowed.reduce((best, c) => (rank(c) > rank(best) ? c : best));
  return { actions: [], discard };
}

let welcomed = false;
send({ type: "hello", name: "{{name}}", versions: [1] });
require("readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  switch (msg.type) {
    case "welcome": welcomed = true; break;
    case "error":
      console.error(`error ${msg.kind}: ${msg.reason}`);
      if (!welcomed) process.exit(1); // version or token refused: nothing more will come
      break;
    case "new_game": console.error(`new game ${msg.game}: seat ${msg.seat}`); break;
    case "request": {
      const reply = { type: msg.decision, game: msg.game, seq: msg.seq };
      if (msg.decision === "draw") reply.source = decideDraw(msg.observation);
      else Object.assign(reply, decidePlay(msg.observation));
      send(reply);
      break;
    }
    case "shutdown": process.exit(0);
    default: break; // event, game_over and anything new: nothing to do
  }
}).on("close", () => process.exit(0));
