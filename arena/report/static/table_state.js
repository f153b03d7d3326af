/* The table after each entry of a game record (docs/ARCHITECTURE.md section 8).
 *
 * Pure: from the record's header and entries (the record file's JSON, never the
 * engine), states(record)[n] is the table after the first n entries: hands, melds
 * (cards, owner, what each wild stands for), discard pile, stock count, totals.
 * The browser tests check it against the engine's replay at every action.
 */
"use strict";
(function (root) {
  var RANKS = "A23456789TJQK";

  function rankOf(card) { return card === "JK" ? 0 : RANKS.indexOf(card[0]) + 1; }
  function suitOf(card) { return card[1]; }
  function positionRank(p) { return ((p - 1) % 13 + 13) % 13 + 1; }
  function strip(card) { return card.charAt(card.length - 1) === "*" ? card.slice(0, -1) : card; }

  function isWild(card, rules) {
    if (card === "JK") return true;
    return rules.wild_rank !== undefined && rules.wild_rank !== null && card[0] === String(rules.wild_rank);
  }

  function removeCard(hand, card) {
    var i = hand.indexOf(card);
    if (i >= 0) hand.splice(i, 1);
  }

  function copyState(s) {
    return {
      deal: s.deal, dealer: s.dealer, turnSeat: s.turnSeat,
      hands: s.hands.map(function (h) { return h.slice(); }),
      melds: s.melds.map(function (m) {
        return { id: m.id, owner: m.owner, kind: m.kind, cards: m.cards.slice(), wilds: m.wilds.slice(), low: m.low, rank: m.rank, suit: m.suit };
      }),
      discard: s.discard.slice(), stock: s.stock, totals: s.totals.slice(), out: s.out.slice(),
      ms: s.ms.slice(), msTotal: s.msTotal.slice(), entry: null, index: s.index
    };
  }

  function meldFromData(d) {
    var m = { id: d.id, owner: d.owner, kind: d.kind, cards: d.cards.slice(), wilds: d.wilds.slice(), low: 0, rank: 0, suit: "" };
    var i;
    if (m.kind === "set") {
      for (i = 0; i < m.cards.length; i++) if (m.wilds[i] === null) { m.rank = rankOf(m.cards[i]); break; }
    } else {
      for (i = 0; i < m.cards.length; i++) if (m.wilds[i] === null) { m.suit = suitOf(m.cards[i]); break; }
      var first = m.wilds[0] === null ? m.cards[0] : m.wilds[0];
      m.low = rankOf(first);
    }
    return m;
  }

  function standsFor(m, i) {
    if (m.kind === "set") return RANKS[m.rank - 1];
    return RANKS[positionRank(m.low + i) - 1] + m.suit;
  }

  // One card laid off on a meld, as the rules place it (RULES 5.3).
  function layOff(m, raw, rules, end) {
    var asWild = raw.charAt(raw.length - 1) === "*";
    var card = strip(raw);
    var natural = card !== "JK" && !asWild;
    if (m.kind === "set") {
      var w = !(natural && rankOf(card) === m.rank);
      m.cards.push(card);
      m.wilds.push(w ? RANKS[m.rank - 1] : null);
      return;
    }
    var n = m.cards.length;
    var wrap = rules.ace === "wrap";
    var top = rules.ace === "high_or_low" ? 14 : 13;
    var roomLow = wrap ? n < 13 : m.low - 1 >= 1;
    var roomHigh = wrap ? n < 13 : m.low + n <= top;
    var fitsLow = natural && suitOf(card) === m.suit && rankOf(card) === positionRank(m.low - 1) && roomLow;
    var fitsHigh = natural && suitOf(card) === m.suit && rankOf(card) === positionRank(m.low + n) && roomHigh;
    if (end === "low") fitsHigh = false;
    if (end === "high") fitsLow = false;
    var wild, atLow;
    if (fitsLow || fitsHigh) { wild = false; atLow = fitsLow; } else { wild = true; atLow = end === "low"; }
    if (atLow) {
      m.low = wrap ? positionRank(m.low - 1) : m.low - 1;
      m.cards.unshift(card);
      m.wilds.unshift(null);
      if (wild) m.wilds[0] = standsFor(m, 0);
    } else {
      m.cards.push(card);
      m.wilds.push(null);
      if (wild) m.wilds[n] = standsFor(m, n);
    }
    // a run's wilds keep their positions; recompute them all after the low end moved
    for (var i = 0; i < m.cards.length; i++) if (m.wilds[i] !== null) m.wilds[i] = standsFor(m, i);
  }

  function swap(m, card, wildCard) {
    for (var i = 0; i < m.cards.length; i++) {
      if (m.wilds[i] === null || m.cards[i] !== wildCard) continue;
      if (m.kind === "run" && standsFor(m, i) !== card) continue;
      m.cards[i] = card;
      m.wilds[i] = null;
      return;
    }
  }

  function applyPlay(s, e, rules) {
    var hand = s.hands[e.seat];
    var effects = e.effects || [];
    var k = 0;
    (e.actions || []).forEach(function (a) {
      var fx = effects[k++] || {};
      if (a.type === "meld") {
        a.cards.forEach(function (c) { removeCard(hand, strip(c)); });
        if (fx.meld) s.melds.push(meldFromData(fx.meld));
      } else if (a.type === "layoff") {
        var m = s.melds[a.meld];
        a.cards.forEach(function (c) { removeCard(hand, strip(c)); if (m) layOff(m, c, rules, a.end); });
      } else if (a.type === "swap") {
        removeCard(hand, a.card);
        if (s.melds[a.meld] && fx.wild) swap(s.melds[a.meld], a.card, fx.wild);
        if (fx.wild) hand.push(fx.wild);
      }
    });
    if (e.discard !== null && e.discard !== undefined) {
      removeCard(hand, e.discard);
      s.discard.push(e.discard);
    }
  }

  function next(s, e, rules, players) {
    var t = copyState(s);
    t.entry = e;
    t.index = s.index + 1;
    switch (e.e) {
      case "deal_start":
        t.deal = e.deal; t.dealer = e.dealer;
        t.hands = e.hands.map(function (h) { return h.slice(); });
        t.melds = []; t.discard = [e.upcard]; t.stock = e.stock_size;
        t.turnSeat = null;
        break;
      case "draw":
        t.turnSeat = e.seat;
        if (e.card !== undefined) {
          if (e.source === "discard") t.discard.pop(); else t.stock -= 1;
          t.hands[e.seat].push(e.card);
        }
        break;
      case "play":
        t.turnSeat = e.seat;
        applyPlay(t, e, rules);
        break;
      case "rebuild":
        t.discard = e.upcard ? [e.upcard] : [];
        t.stock = e.stock_size;
        break;
      case "deal_end":
        t.hands = e.hands.map(function (h) { return h.slice(); });
        t.totals = e.totals.slice();
        break;
      case "game_end":
        t.totals = e.totals.slice();
        break;
      case "forfeit":
        t.hands[e.seat] = [];
        t.out[e.seat] = true;
        break;
      default:
        break;
    }
    if (typeof e.ms === "number" && typeof e.seat === "number") {
      t.ms[e.seat] = e.ms;
      t.msTotal[e.seat] += e.ms;
    }
    return t;
  }

  function states(record) {
    var h = record.header, n = h.players, rules = h.rules || {};
    var zero = [];
    for (var i = 0; i < n; i++) zero.push(0);
    var s = {
      deal: 0, dealer: null, turnSeat: null, hands: zero.map(function () { return []; }), melds: [],
      discard: [], stock: 0, totals: zero.slice(), out: zero.map(function () { return false; }),
      ms: zero.map(function () { return null; }), msTotal: zero.slice(), entry: null, index: 0
    };
    var out = [s];
    record.entries.forEach(function (e) { s = next(s, e, rules, n); out.push(s); });
    return out;
  }

  root.ArenaTable = { states: states, standsFor: standsFor };
})(typeof window !== "undefined" ? window : this);
