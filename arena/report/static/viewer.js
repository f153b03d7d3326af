/* The replay viewer's page: draws ArenaTable.states(record) as a card table and steps through it
 * (buttons, arrow keys, jump to a deal or to the next failure, all hands or one seat's view).
 * Reads window.ARENA_RECORD (the record file's JSON, embedded by arena/report/render.py).
 * Bot-chosen text (names, reasons) only ever goes in through textContent.
 */
"use strict";
(function () {
  var SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
  var rec = window.ARENA_RECORD;
  var steps = window.ArenaTable.states(rec);
  var names = rec.header.seats || [];
  var n = rec.header.players;
  var pos = 0;
  var view = "all";  // "all" or a seat number as a string
  for (var i = names.length; i < n; i++) names.push("seat " + i);

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var x = document.createElement(tag);
    if (cls) x.className = cls;
    if (text !== undefined && text !== null) x.textContent = text;
    return x;
  }

  function cardEl(card, standsFor) {
    var c = el("span", "card");
    c.setAttribute("data-card", card);
    if (card === "JK") {
      c.classList.add("joker");
      c.appendChild(el("span", "rank", "\u2605"));
      c.appendChild(el("span", "suit", "JK"));
    } else {
      c.classList.add(card[1] === "H" || card[1] === "D" ? "red" : "black");
      c.appendChild(el("span", "rank", card[0] === "T" ? "10" : card[0]));
      c.appendChild(el("span", "suit", SUITS[card[1]] || card[1]));
    }
    c.title = card + (standsFor ? " as " + standsFor : "");
    if (standsFor) {
      c.classList.add("wild");
      var w = el("span", "as", "=" + standsFor);
      w.setAttribute("data-stands-for", standsFor);
      c.appendChild(w);
    }
    return c;
  }

  function cardCount(k) { return k + (k === 1 ? " card" : " cards"); }

  function backEl() { var c = el("span", "card back"); c.textContent = "\u00a0"; return c; }

  function visible(seat) { return view === "all" || String(seat) === view; }

  function describe(e) {
    if (!e) return "The game is about to start.";
    var who = typeof e.seat === "number" ? names[e.seat] + " (seat " + e.seat + ")" : "";
    switch (e.e) {
      case "game_start": return "Game starts; seat " + e.dealer + " (" + names[e.dealer] + ") deals first.";
      case "deal_start": return "Deal " + e.deal + ": " + names[e.dealer] + " deals; upcard " + e.upcard + ", stock " + e.stock_size + ".";
      case "draw":
        if (e.card === undefined) return who + " finds the stock empty.";
        if (e.source === "discard") return who + " takes " + e.card + " from the discard pile.";
        return who + " draws from the stock" + (visible(e.seat) ? " (" + e.card + ")" : "") + ".";
      case "play":
        var parts = (e.actions || []).map(function (a) {
          if (a.type === "meld") return "melds " + a.cards.join(" ");
          if (a.type === "layoff") return "lays off " + a.cards.join(" ") + " on meld " + a.meld;
          return "swaps " + a.card + " for the wild in meld " + a.meld;
        });
        parts.push(e.discard ? "discards " + e.discard : "goes out");
        return who + " " + parts.join(", ") + ".";
      case "rebuild": return "The discard pile becomes the stock (" + cardCount(e.stock_size) + ").";
      case "deal_end": return "Deal " + e.deal + " ends (" + e.reason + (e.out !== null ? ", " + names[e.out] + " went out" : "") + "); scores " + e.scores.join(", ") + ".";
      case "game_end": return "Game over (" + e.reason + "): placings " + e.placings.join(", ") + ".";
      case "forfeit": return who + " forfeits (" + e.failure + "): " + e.reason;
      case "failure": return who + " failure: " + e.kind + " (" + e.action + ")";
      default: return e.e;
    }
  }

  function drawSeats(s) {
    var box = $("seats");
    box.textContent = "";
    for (var seat = 0; seat < n; seat++) {
      var p = el("section", "seat");
      p.setAttribute("data-seat", seat);
      p.setAttribute("data-count", s.hands[seat].length);
      if (s.turnSeat === seat) p.classList.add("turn");
      if (s.out[seat]) p.classList.add("gone");
      var head = el("header");
      head.appendChild(el("b", "name", names[seat]));
      head.appendChild(el("span", "meta", "seat " + seat + (s.dealer === seat ? " \u00b7 dealer" : "") + (s.out[seat] ? " \u00b7 forfeited" : "")));
      head.appendChild(el("span", "total", "total " + s.totals[seat]));
      head.appendChild(el("span", "size", cardCount(s.hands[seat].length)));
      var clock = s.ms[seat] === null ? "no timed decision yet" : "last " + s.ms[seat].toFixed(1) + " ms \u00b7 sum " + s.msTotal[seat].toFixed(0) + " ms";
      if (rec.clock && rec.clock.decision_ms) clock += " \u00b7 limit " + rec.clock.decision_ms + " ms";
      head.appendChild(el("span", "clock", clock));
      p.appendChild(head);
      var hand = el("div", "hand");
      s.hands[seat].forEach(function (c) { hand.appendChild(visible(seat) ? cardEl(c) : backEl()); });
      p.appendChild(hand);
      box.appendChild(p);
    }
  }

  function drawTable(s) {
    $("stock").setAttribute("data-count", s.stock);
    $("stock-count").textContent = s.stock;
    var top = $("discard-top");
    top.textContent = "";
    var card = s.discard.length ? s.discard[s.discard.length - 1] : "";
    top.setAttribute("data-card", card);
    if (card) top.appendChild(cardEl(card)); else top.appendChild(el("span", "empty", "empty"));
    $("discard-count").textContent = s.discard.length;
    var box = $("melds");
    box.textContent = "";
    if (!s.melds.length) box.appendChild(el("p", "empty", "No melds on the table."));
    s.melds.forEach(function (m) {
      var d = el("div", "meld");
      d.setAttribute("data-id", m.id);
      d.setAttribute("data-owner", m.owner);
      d.appendChild(el("span", "label", "#" + m.id + " " + m.kind + " \u00b7 " + names[m.owner]));
      var cards = el("span", "cards");
      m.cards.forEach(function (c, i) { cards.appendChild(cardEl(c, m.wilds[i])); });
      d.appendChild(cards);
      box.appendChild(d);
    });
  }

  function drawEvent(s) {
    var e = s.entry;
    $("event").textContent = describe(e);
    var f = $("failure");
    f.textContent = "";
    f.hidden = !(e && (e.e === "failure" || e.e === "forfeit"));
    if (!f.hidden) {
      f.setAttribute("data-kind", e.kind || e.failure);
      f.appendChild(el("b", null, (e.kind || e.failure) + ": "));
      f.appendChild(document.createTextNode(e.reason || ""));
      if (e.e === "failure") f.appendChild(el("span", "meta", " \u2014 deal " + e.deal + ", turn " + e.turn + ", " + e.action));
    }
  }

  function show(p) {
    pos = Math.max(0, Math.min(steps.length - 1, p));
    var s = steps[pos];
    $("step").textContent = pos;
    $("step").setAttribute("data-step", pos);
    $("deal").textContent = s.deal || "-";
    drawSeats(s);
    drawTable(s);
    drawEvent(s);
    var sel = $("jump-deal");
    if (sel.value !== String(s.deal)) sel.value = String(s.deal);
  }

  function nextWhere(test) {
    for (var i = pos + 1; i < steps.length; i++) if (test(steps[i].entry)) return i;
    return pos;
  }

  function init() {
    $("step-total").textContent = steps.length - 1;
    var title = (rec.header.rules && rec.header.rules.name || "?") + " game" + (rec.header.game_id ? " " + rec.header.game_id : "");
    $("title").textContent = title + ": " + names.join(" vs ");
    var deals = $("jump-deal");
    steps.forEach(function (s, i) {
      if (s.entry && s.entry.e === "deal_start") {
        var o = el("option", null, "deal " + s.entry.deal);
        o.value = String(s.entry.deal);
        o.setAttribute("data-step", i);
        deals.appendChild(o);
      }
    });
    deals.addEventListener("change", function () {
      var o = deals.options[deals.selectedIndex];
      if (o && o.getAttribute("data-step")) show(Number(o.getAttribute("data-step")));
    });
    var seatSel = $("view");
    for (var seat = 0; seat < n; seat++) {
      var o = el("option", null, "only " + names[seat] + "'s view");
      o.value = String(seat);
      seatSel.appendChild(o);
    }
    seatSel.addEventListener("change", function () { view = seatSel.value; show(pos); });
    var failures = steps.filter(function (s) { return s.entry && (s.entry.e === "failure" || s.entry.e === "forfeit"); }).length;
    $("failure-count").textContent = failures;
    $("first").onclick = function () { show(0); };
    $("prev").onclick = function () { show(pos - 1); };
    $("next").onclick = function () { show(pos + 1); };
    $("last").onclick = function () { show(steps.length - 1); };
    $("next-failure").onclick = function () {
      show(nextWhere(function (e) { return e && (e.e === "failure" || e.e === "forfeit"); }));
    };
    document.addEventListener("keydown", function (ev) {
      if (ev.target && ev.target.tagName === "SELECT") return;
      if (ev.key === "ArrowRight") { show(pos + 1); ev.preventDefault(); }
      else if (ev.key === "ArrowLeft") { show(pos - 1); ev.preventDefault(); }
      else if (ev.key === "Home") { show(0); ev.preventDefault(); }
      else if (ev.key === "End") { show(steps.length - 1); ev.preventDefault(); }
    });
    var m = /(?:^|[#&])step=(\d+)/.exec(location.hash);
    show(m ? Number(m[1]) : 0);
  }

  window.arenaViewer = { steps: steps, show: show, position: function () { return pos; } };
  init();
})();
