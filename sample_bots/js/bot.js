#!/usr/bin/env node
// A greedy sample bot for the Rummy bot arena, in JavaScript on Node.js (protocol v1, see protocol/SPEC.md).
//
// It connects a ZeroMQ DEALER (the `zeromq` npm package, v6) to the referee with its routing id set
// to the token, says hello, and answers the two decisions of every turn:
//   draw: takes the discard pile's top card when it completes a set or a run in its hand;
//   play: puts down the sets and runs it finds (enough points to open when the rules ask for a
//         minimum), lays off what fits on the table, and discards its highest-value loose card.
// It knows every rule option a preset uses: opening minimums (german 30 with the german-opening
// values, czech from observation.opening_requirement), melds_per_turn, layoff (any / own /
// after_own_meld), go_out = discard (a card must be left to discard), meld_all_at_once deals
// (table play only in a turn that goes out), the ban on discarding the card just taken from the
// discard pile, ace low / high_or_low, jokers with max_wilds_per_meld and wilds_at_most_naturals.
// It never swaps wilds. If the referee ever rejects a play, it answers the retried request with
// the always-legal move (no table play, discard the drawn card).
//
// Install: npm ci --prefix sample_bots/js
// Run:     arena play basic greedy "node sample_bots/js/bot.js"
//          arena check-bot "node sample_bots/js/bot.js"
"use strict";

const zmq = require("zeromq");

const NAME = "greedy-js";
const RANKS = "A23456789TJQK";
const SUITS = "CDHS";
const JOKER = "JK";

// -- cards -------------------------------------------------------------------------------------

const isJoker = (c) => c === JOKER;
const rankOf = (c) => RANKS.indexOf(c[0]) + 1; // 1 (ace) .. 13 (king); 0 for the joker
const suitOf = (c) => c[1];
const cardAt = (pos, suit) => RANKS[(pos - 1) % 13] + suit; // run position -> card (14 = ace high)

function removeCards(hand, cards) {
  const rest = hand.slice();
  for (const c of cards) {
    const i = rest.indexOf(c);
    if (i < 0) return null;
    rest.splice(i, 1);
  }
  return rest;
}

// -- value tables (SPEC section 7) -------------------------------------------------------------

function pips(ace, jack, queen, king) {
  return [0, ace, 2, 3, 4, 5, 6, 7, 8, 9, 10, jack, queen, king];
}

const TABLES = {
  basic: { ranks: pips(1, 10, 10, 10), joker: 15, aceHigh: 15, aceLowInRun: null },
  parlett: { ranks: pips(1, 10, 10, 10), joker: 15, aceHigh: 11, aceLowInRun: null },
  czech: { ranks: pips(1, 11, 12, 13), joker: 15, aceHigh: null, aceLowInRun: null },
  german: { ranks: pips(15, 10, 10, 10), joker: 20, aceHigh: 15, aceLowInRun: null },
  "german-opening": { ranks: pips(11, 10, 10, 10), joker: 20, aceHigh: null, aceLowInRun: 1 },
};

function valueTable(spec) {
  if (typeof spec === "string") return TABLES[spec] || TABLES.basic;
  if (spec && typeof spec === "object") {
    const ranks = [0];
    for (let r = 1; r <= 13; r++) ranks.push(spec[RANKS[r - 1]] ?? spec[r === 10 ? "10" : ""] ?? r);
    return { ranks, joker: spec.JK ?? 15, aceHigh: spec.ace_high ?? null, aceLowInRun: spec.ace_low_in_run ?? null };
  }
  return TABLES.basic;
}

// -- the rules of the game being played ------------------------------------------------------

class Rules {
  constructor(r) {
    this.raw = r;
    this.ace = r.ace || "low";
    this.aceHigh = this.ace !== "low";
    this.top = this.ace === "high_or_low" ? 14 : 13; // highest run position
    this.wrap = this.ace === "wrap";
    this.setMax = r.set_max ?? 4;
    this.distinct = r.set_distinct_suits ?? true;
    this.maxWilds = r.max_wilds_per_meld ?? 0;
    this.wildsAtMostNaturals = r.wilds_at_most_naturals ?? true;
    this.wildsAdjacent = r.wilds_adjacent ?? true;
    this.meldsPerTurn = r.melds_per_turn ?? 0;
    this.initialMeld = r.initial_meld ?? 0;
    this.layoff = r.layoff || "any";
    this.goOut = r.go_out || "any";
    this.takeBeforeOpening = r.take_discard_before_opening || "yes";
    this.wildRank = r.wild_rank ? RANKS.indexOf(r.wild_rank) + 1 : 0;
    this.values = valueTable(r.card_values);
    this.openingValues = valueTable(r.initial_meld_values ?? r.card_values);
  }

  // What a card left in a hand costs (RULES 7).
  cardValue(c) {
    if (isJoker(c)) return this.values.joker;
    const r = rankOf(c);
    if (r === 1 && this.aceHigh && this.values.aceHigh != null) return this.values.aceHigh;
    return this.values.ranks[r];
  }

  // What a rank is worth in a meld for the opening (RULES 5.1).
  rankOpeningValue(rank, lowestOfRun) {
    const t = this.openingValues;
    if (rank === 1) {
      if (lowestOfRun && t.aceLowInRun != null) return t.aceLowInRun;
      if (this.aceHigh && t.aceHigh != null) return t.aceHigh;
    }
    return t.ranks[rank];
  }

  // A card of the wild rank is treated as natural by this bot (it never marks one as wild).
  isWild(c) {
    return isJoker(c);
  }

  wildsOk(naturals, wilds) {
    if (naturals < 1) return false;
    if (this.maxWilds && wilds > this.maxWilds) return false;
    if (this.wildsAtMostNaturals && wilds > naturals) return false;
    return true;
  }
}

// -- melds: a uniform shape for the table's melds and the bot's own ---------------------------
// set: {kind:"set", rank, cards, wild:[bool], owner, id}
// run: {kind:"run", suit, low (position of cards[0]), cards, wild:[bool], owner, id}

function tableMeld(m) {
  const wild = m.wilds.map((w) => w !== null && w !== undefined);
  if (m.kind === "set") {
    const nat = m.cards.find((c, i) => !wild[i]);
    return { id: m.id, owner: m.owner, kind: "set", rank: rankOf(nat), cards: m.cards.slice(), wild };
  }
  const first = wild[0] ? m.wilds[0] : m.cards[0];
  return { id: m.id, owner: m.owner, kind: "run", suit: suitOf(first), low: rankOf(first), cards: m.cards.slice(), wild };
}

function openingValue(meld, rules) {
  if (meld.kind === "set") return rules.rankOpeningValue(meld.rank, false) * meld.cards.length;
  let total = 0;
  for (let i = 0; i < meld.cards.length; i++) {
    const pos = meld.low + i;
    total += rules.rankOpeningValue(((pos - 1) % 13) + 1, i === 0);
  }
  return total;
}

// Every set and run (with at most one joker) that the hand can make, each as long as it goes.
function candidateMelds(hand, rules) {
  const jokers = hand.filter(isJoker);
  const naturals = hand.filter((c) => !isJoker(c));
  const out = [];
  const canUseJoker = jokers.length > 0 && rules.wildsOk(2, 1);

  // sets
  const byRank = new Map();
  for (const c of naturals) {
    const r = rankOf(c);
    if (!byRank.has(r)) byRank.set(r, []);
    const group = byRank.get(r);
    if (rules.distinct && group.some((x) => suitOf(x) === suitOf(c))) continue;
    group.push(c);
  }
  for (const [rank, group] of byRank) {
    const cards = group.slice(0, rules.setMax);
    if (cards.length >= 3) {
      out.push({ kind: "set", rank, cards, wild: cards.map(() => false) });
    } else if (cards.length === 2 && canUseJoker && rules.setMax >= 3) {
      out.push({ kind: "set", rank, cards: [...cards, JOKER], wild: [false, false, true] });
    }
  }

  // runs, per suit, over positions 1..top (an ace is position 1, and 14 when it may be high)
  for (const suit of SUITS) {
    const has = new Set();
    for (const c of naturals) {
      if (suitOf(c) !== suit) continue;
      const r = rankOf(c);
      has.add(r);
      if (r === 1 && rules.top === 14) has.add(14);
    }
    // maximal segments of consecutive positions
    const segs = [];
    for (let p = 1; p <= rules.top; p++) {
      if (!has.has(p)) continue;
      if (segs.length && segs[segs.length - 1].end === p - 1) segs[segs.length - 1].end = p;
      else segs.push({ start: p, end: p });
    }
    const runOf = (start, end, gap) => {
      const cards = [];
      const wild = [];
      for (let p = start; p <= end; p++) {
        if (p === gap) {
          cards.push(JOKER);
          wild.push(true);
        } else {
          cards.push(cardAt(p, suit));
          wild.push(false);
        }
      }
      return { kind: "run", suit, low: start, cards, wild };
    };
    const usesAceTwice = (start, end) => start === 1 && end === 14;
    for (let i = 0; i < segs.length; i++) {
      const s = segs[i];
      const len = s.end - s.start + 1;
      if (len >= 3 && !usesAceTwice(s.start, s.end)) out.push(runOf(s.start, s.end, 0));
      if (!canUseJoker) continue;
      const next = segs[i + 1];
      if (next && next.start === s.end + 2 && len + (next.end - next.start + 1) >= 2 && !usesAceTwice(s.start, next.end)) {
        out.push(runOf(s.start, next.end, s.end + 1)); // a joker fills the gap
      } else if (len === 2) {
        if (s.end + 1 <= rules.top) out.push(runOf(s.start, s.end + 1, s.end + 1)); // joker at the high end
        else if (s.start - 1 >= 1) out.push(runOf(s.start - 1, s.end, s.start - 1)); // joker at the low end
      }
    }
  }
  return out;
}

// Pick disjoint melds greedily: the best candidate, then the best of what is left, and so on.
function chooseMelds(hand, rules, limit, forOpening) {
  const chosen = [];
  let rest = hand.slice();
  while (chosen.length < limit) {
    const cands = candidateMelds(rest, rules);
    if (!cands.length) break;
    const score = (m) => {
      const jokers = m.wild.filter(Boolean).length;
      const v = openingValue(m, rules);
      return forOpening ? v * 10 + m.cards.length - jokers * 5 : m.cards.length * 100 + v - jokers * 150;
    };
    cands.sort((a, b) => score(b) - score(a));
    const best = cands[0];
    const left = removeCards(rest, best.cards);
    if (!left) break;
    chosen.push(best);
    rest = left;
  }
  return { melds: chosen, rest };
}

// Where a card could be laid off on a meld: "low", "high", "set", or null. Updates nothing.
function layoffFit(meld, card, rules) {
  const naturals = meld.wild.filter((w) => !w).length;
  const wilds = meld.cards.length - naturals;
  if (meld.kind === "set") {
    if (meld.cards.length >= rules.setMax) return null;
    if (isJoker(card)) return rules.wildsOk(naturals, wilds + 1) ? "set" : null;
    if (rankOf(card) !== meld.rank) return null;
    if (rules.distinct && meld.cards.some((c, i) => !meld.wild[i] && suitOf(c) === suitOf(card))) return null;
    return "set";
  }
  const n = meld.cards.length;
  const lowPos = meld.low - 1;
  const highPos = meld.low + n;
  const roomLow = rules.wrap ? n < 13 : lowPos >= 1;
  const roomHigh = rules.wrap ? n < 13 : highPos <= rules.top;
  if (isJoker(card)) {
    if (!rules.wildsOk(naturals, wilds + 1) || !roomHigh) return null;
    if (!rules.wildsAdjacent && meld.wild[n - 1]) return null;
    return "high";
  }
  if (suitOf(card) !== meld.suit) return null;
  const posRank = (p) => ((((p - 1) % 13) + 13) % 13) + 1;
  if (roomLow && rankOf(card) === posRank(lowPos)) return "low";
  if (roomHigh && rankOf(card) === posRank(highPos)) return "high";
  return null;
}

function applyLayoff(meld, card, where) {
  const m = { ...meld, cards: meld.cards.slice(), wild: meld.wild.slice() };
  if (where === "low") {
    m.cards.unshift(card);
    m.wild.unshift(false);
    m.low = meld.low - 1 >= 1 ? meld.low - 1 : meld.low - 1 + 13;
  } else {
    m.cards.push(card);
    m.wild.push(isJoker(card));
  }
  return m;
}

// -- the bot's decisions ----------------------------------------------------------------------

class GreedyBot {
  constructor() {
    this.rules = new Rules({});
    this.safeNext = false; // the referee rejected our last play: answer the retry with the safe move
  }

  newGame(msg) {
    this.rules = new Rules(msg.rules || {});
    this.seat = msg.seat;
    this.safeNext = false;
  }

  draw(obs) {
    const legal = obs.legal_draws || [];
    if (!legal.includes("discard") || !obs.discard.length) return legal.includes("stock") || !legal.length ? "stock" : legal[0];
    if (!legal.includes("stock")) return legal[0];
    const rules = this.rules;
    const top = obs.discard[obs.discard.length - 1];
    if (obs.must_go_out_to_meld) return "stock";
    if (!obs.opened[obs.seat] && rules.takeBeforeOpening === "only_to_open") return "stock";
    if (rules.isWild(top)) return "discard";
    // does the top card make a new meld with the hand?
    const before = candidateMelds(obs.hand, rules).filter((m) => !m.wild.some(Boolean)).length;
    const after = candidateMelds([...obs.hand, top], rules).filter((m) => !m.wild.some(Boolean) && m.cards.includes(top));
    if (after.length && after.length >= 1 && before >= 0) {
      // only if the hand has another card to discard afterwards
      if (obs.hand.some((c) => c !== top)) return "discard";
    }
    return "stock";
  }

  play(obs) {
    if (this.safeNext) {
      this.safeNext = false;
      return this.safePlay(obs);
    }
    const rules = this.rules;
    const allowed = (c) => !(obs.took_discard && c === obs.drawn);
    const plans = this.plans(obs);
    for (const actions of plans) {
      const rest = this.afterActions(obs.hand, actions);
      if (rest === null) continue;
      if (rest.length === 0) {
        if (rules.goOut === "any" && actions.length) return { actions, discard: null };
        continue;
      }
      if (obs.must_go_out_to_meld && actions.length && rest.length !== 1) continue;
      const discard = this.chooseDiscard(rest.filter(allowed), rest);
      if (discard === undefined) continue;
      return { actions, discard };
    }
    return this.safePlay(obs);
  }

  safePlay(obs) {
    if (obs.drawn && !obs.took_discard) return { actions: [], discard: obs.drawn };
    const options = obs.hand.filter((c) => !(obs.took_discard && c === obs.drawn));
    const discard = this.chooseDiscard(options, obs.hand) ?? obs.hand[0];
    return { actions: [], discard };
  }

  afterActions(hand, actions) {
    let rest = hand;
    for (const a of actions) {
      rest = removeCards(rest, a.cards);
      if (!rest) return null;
    }
    return rest;
  }

  // Candidate action lists, best first: melds + lay-offs, melds only, nothing.
  plans(obs) {
    const rules = this.rules;
    const seat = obs.seat;
    const opened = obs.opened[seat];
    const allAtOnce = obs.must_go_out_to_meld;
    const limit = rules.meldsPerTurn && !allAtOnce ? rules.meldsPerTurn : 99;
    const need = obs.opening_requirement || 0;
    const forOpening = !opened && need > 0;
    let { melds, rest } = chooseMelds(obs.hand, rules, limit, forOpening);
    // a turn that does not reach the opening minimum may contain no melds
    if (forOpening) {
      let total = 0;
      let reached = -1;
      melds.forEach((m, i) => {
        total += openingValue(m, rules);
        if (reached < 0 && total >= need) reached = i;
      });
      if (reached < 0) {
        melds = [];
        rest = obs.hand.slice();
      }
    }
    const openedNow = opened || melds.length > 0;
    const table = obs.melds.map(tableMeld);
    melds.forEach((m, k) => table.push({ ...m, id: obs.melds.length + k, owner: seat }));
    const meldActions = melds.map((m) => ({ type: "meld", cards: m.cards.slice(), ...(this.needsKind(m) ? { kind: m.kind } : {}) }));

    // lay-offs (RULES 5.2, 5.3)
    const layoffs = [];
    const mayLayoff = rules.initialMeld === 0 || rules.initialMeld === "0" ? true : openedNow;
    const hasOwn = table.some((m) => m.owner === seat);
    if (mayLayoff && (rules.layoff !== "after_own_meld" || hasOwn)) {
      const minLeft = rules.goOut === "discard" ? 1 : 0;
      let progress = true;
      while (progress) {
        progress = false;
        const order = rest.filter((c) => !isJoker(c)).sort((a, b) => rules.cardValue(b) - rules.cardValue(a));
        for (const c of order) {
          if (rest.length <= minLeft) break;
          for (let k = 0; k < table.length; k++) {
            const m = table[k];
            if (rules.layoff === "own" && m.owner !== seat) continue;
            const where = layoffFit(m, c, rules);
            if (!where) continue;
            table[k] = applyLayoff(m, c, where);
            layoffs.push({ type: "layoff", meld: m.id, cards: [c] });
            rest = removeCards(rest, [c]);
            progress = true;
            break;
          }
        }
      }
      // jokers only when that lets the bot go out now
      const jokers = rest.filter(isJoker);
      if (jokers.length && rest.length - jokers.length <= 1) {
        for (const j of jokers) {
          if (rest.length <= minLeft) break;
          for (let k = 0; k < table.length; k++) {
            const m = table[k];
            if (rules.layoff === "own" && m.owner !== seat) continue;
            const where = layoffFit(m, j, rules);
            if (!where) continue;
            table[k] = applyLayoff(m, j, where);
            layoffs.push({ type: "layoff", meld: m.id, cards: [j], ...(where === "high" ? { end: "high" } : {}) });
            rest = removeCards(rest, [j]);
            break;
          }
        }
      }
    }
    const plans = [];
    const add = (p) => {
      if (!plans.some((q) => JSON.stringify(q) === JSON.stringify(p))) plans.push(p);
    };
    // (a plan that empties the hand under go_out = discard is skipped by play())
    add([...meldActions, ...layoffs]);
    if (allAtOnce) {
      add([]);
      return plans;
    }
    add(meldActions);
    if (melds.length > 1) {
      const fewer = melds.slice(0, -1);
      if (!forOpening || fewer.reduce((t, m) => t + openingValue(m, rules), 0) >= need) add(meldActions.slice(0, -1));
    }
    add([]);
    return plans;
  }

  // A meld with one natural card and wilds could be read either way; ours always have two naturals.
  needsKind(m) {
    return m.wild.filter((w) => !w).length < 2;
  }

  // The highest-value card that is in no partial meld (never a joker if anything else can go).
  chooseDiscard(options, hand) {
    if (!options.length) return undefined;
    const rules = this.rules;
    const partial = (c) => {
      if (isJoker(c)) return true;
      let selfSeen = false;
      for (const o of hand) {
        if (o === c && !selfSeen) {
          selfSeen = true;
          continue;
        }
        if (isJoker(o)) continue;
        if (rankOf(o) === rankOf(c) && (suitOf(o) !== suitOf(c) || !rules.distinct)) return true;
        if (suitOf(o) === suitOf(c) && Math.abs(rankOf(o) - rankOf(c)) > 0 && Math.abs(rankOf(o) - rankOf(c)) <= 2) return true;
      }
      return false;
    };
    const sorted = options.slice().sort((a, b) => {
      const pa = partial(a) ? 1 : 0;
      const pb = partial(b) ? 1 : 0;
      if (pa !== pb) return pa - pb;
      if (isJoker(a) !== isJoker(b)) return isJoker(a) ? 1 : -1;
      return rules.cardValue(b) - rules.cardValue(a);
    });
    return sorted[0];
  }
}

// -- the session --------------------------------------------------------------------------------

function endpointAndToken(argv, env) {
  const found = {};
  for (let i = 0; i < argv.length; i++) {
    for (const key of ["endpoint", "token"]) {
      if (argv[i] === `--${key}` && i + 1 < argv.length) found[key] = argv[i + 1];
      else if (argv[i].startsWith(`--${key}=`)) found[key] = argv[i].slice(key.length + 3);
    }
  }
  return { endpoint: found.endpoint || env.ARENA_ENDPOINT, token: found.token || env.ARENA_TOKEN };
}

const log = (...args) => console.error(`[${NAME}]`, ...args);

async function main() {
  const { endpoint, token } = endpointAndToken(process.argv.slice(2), process.env);
  if (!endpoint || !token) {
    log("no endpoint/token: pass --endpoint E --token T, or set ARENA_ENDPOINT and ARENA_TOKEN");
    return 2;
  }
  const sock = new zmq.Dealer({ routingId: token, linger: 0 });
  sock.connect(endpoint);
  const send = (msg) => sock.send(JSON.stringify({ v: 1, ...msg }));
  await send({ type: "hello", name: NAME, versions: [1], author: "rummy-arena sample bots" });
  let welcomed = false;
  const noWelcome = setTimeout(() => {
    log("no welcome from the referee within 30 s");
    process.exit(1);
  }, 30000);
  const bot = new GreedyBot();
  for await (const [frame] of sock) {
    let msg;
    try {
      msg = JSON.parse(frame.toString("utf8"));
    } catch (e) {
      log("ignoring a message that is not JSON:", String(frame).slice(0, 200));
      continue;
    }
    switch (msg.type) {
      case "welcome":
        welcomed = true;
        clearTimeout(noWelcome);
        break;
      case "error":
        log(`referee error ${msg.kind}${msg.game ? ` (game ${msg.game}, seq ${msg.seq})` : ""}: ${msg.reason}`);
        if (!welcomed && (msg.kind === "version" || msg.kind === "token")) {
          sock.close();
          return 1; // the handshake was refused
        }
        if (msg.kind === "illegal" && msg.retry) bot.safeNext = true;
        break;
      case "new_game":
        bot.newGame(msg);
        break;
      case "request": {
        const base = { type: msg.decision, game: msg.game, seq: msg.seq };
        let reply;
        try {
          reply = msg.decision === "draw" ? { ...base, source: bot.draw(msg.observation) } : { ...base, ...bot.play(msg.observation) };
        } catch (e) {
          log(`exception in ${msg.decision} (game ${msg.game}, seq ${msg.seq}):`, e && e.stack ? e.stack : e);
          const obs = msg.observation;
          reply = msg.decision === "draw" ? { ...base, source: (obs.legal_draws || ["stock"]).includes("stock") ? "stock" : obs.legal_draws[0] } : { ...base, ...bot.safePlay(obs) };
        }
        await send(reply);
        break;
      }
      case "shutdown":
        sock.close();
        return 0;
      default:
        break; // event, game_over, and message types this bot does not know
    }
  }
  return 0;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      log("fatal:", err && err.stack ? err.stack : err);
      process.exit(1);
    },
  );
}

module.exports = { GreedyBot, Rules, candidateMelds, chooseMelds, layoffFit, openingValue, endpointAndToken };
