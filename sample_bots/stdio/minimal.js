// The smallest arena bot: the stdio transport (one JSON message per line), Node.js, no packages.
// It draws from the stock, never melds, and discards the card it drew.
// Run: arena play basic greedy "node sample_bots/stdio/minimal.js" --stdio 1
const send = (msg) => process.stdout.write(JSON.stringify({ v: 1, ...msg }) + "\n");
let welcomed = false;
send({ type: "hello", name: "minimal-js", versions: [1] });
require("readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "welcome") welcomed = true;
  if (msg.type === "error" && !welcomed) process.exit(1); // version or token refused
  if (msg.type === "shutdown") process.exit(0);
  if (msg.type !== "request") return; // new_game, event, game_over, errors: nothing to do
  const obs = msg.observation;
  const reply = { type: msg.decision, game: msg.game, seq: msg.seq };
  if (msg.decision === "draw") {
    reply.source = obs.legal_draws.includes("stock") ? "stock" : obs.legal_draws[0];
  } else {
    // the card taken from the discard pile (or an equal one) may not be discarded this turn
    reply.actions = [];
    reply.discard = obs.drawn && !obs.took_discard ? obs.drawn : obs.hand.find((c) => !(obs.took_discard && c === obs.drawn));
  }
  send(reply);
}).on("close", () => process.exit(0));
