// The ladder server's pages redraw themselves from its JSON (/api/snapshot, /api/entrant/NAME) every
// second, so a leaderboard left open follows the games without a reload.  Every string is put in with
// textContent (never parsed as HTML) and its control characters shown as escapes, as the server does;
// the one HTML put in is the chart, drawn and escaped by the server.
"use strict";
(function () {
  var PERIOD_MS = 1000;
  var ODD = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]|(?! )\p{Zs}/gu;
  var NAMED = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

  function shown(s) {
    return String(s === null || s === undefined ? "" : s).replace(ODD, function (c) {
      if (NAMED[c]) return NAMED[c];
      var n = c.codePointAt(0), h = n.toString(16);
      if (n < 0x100) return "\\x" + h.padStart(2, "0");
      if (n < 0x10000) return "\\u" + h.padStart(4, "0");
      return "\\U" + h.padStart(8, "0");
    });
  }
  function el(tag, text, attrs) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    return e;
  }
  function row(cells) {
    var tr = el("tr");
    cells.forEach(function (c) {
      var td = el("td");
      if (c instanceof Node) td.appendChild(c); else td.textContent = c;
      tr.appendChild(td);
    });
    return tr;
  }
  function fill(tbody, rows) {
    tbody.replaceChildren.apply(tbody, rows);
  }
  function num(x) { return x === null || x === undefined ? "-" : Math.round(x).toString(); }
  function interval(r) { return r.low === null || r.high === null ? "-" : num(r.low) + " to " + num(r.high); }
  function rating(r) {
    var span = el("span", r.rating === null ? "-" : (r.bound || "") + num(r.rating));
    if (r.provisional) { span.appendChild(document.createTextNode(" ")); span.appendChild(el("span", "provisional", { "class": "prov" })); }
    return span;
  }

  function board(v) {
    var l = v.ladder;
    document.getElementById("ladder-name").textContent = shown(l.name);
    document.getElementById("ladder-meta").textContent = shown(l.variant) + ", " + l.seats + " seats, " + l.state + ", " +
      l.games + " games" + (l.updated ? ", updated " + l.updated : "");
    fill(document.querySelector("#board tbody"), v.leaderboard.map(function (r) {
      var a = el("a", shown(r.entrant), { href: "/entrant/" + encodeURIComponent(r.entrant) });
      var tr = row([String(r.rank), a, "v" + r.version, rating(r), interval(r), String(r.games), r.status]);
      tr.setAttribute("data-entrant", shown(r.entrant));
      return tr;
    }));
    var fin = document.getElementById("final");
    fin.hidden = !v.final;
    fill(document.querySelector("#final-board tbody"), (v.final ? v.final.standings : []).map(function (r) {
      return row([String(r.rank), shown(r.entrant), "v" + r.version, num(r.rating), interval(r), String(r.games)]);
    }));
  }

  function entrant(v) {
    document.getElementById("ladder-meta").textContent = v.ladder.state + ", " + v.ladder.games + " games";
    fill(document.querySelector("#versions tbody"), v.versions.map(function (r) {
      return row(["v" + r.version, shown(r.submitted), shown(r.fingerprint || ""), shown(r.status), shown(r.reason || ""), String(r.games)]);
    }));
    document.getElementById("chart").innerHTML = v.chart;  // the server's SVG, its labels escaped there
    fill(document.querySelector("#recent tbody"), v.recent_games.map(function (g) {
      var places = Object.keys(g.placings).map(function (b) { return shown(b) + ": " + g.placings[b]; }).join(", ");
      var replay = g.replay ? el("a", "replay", { href: g.replay }) : "-";
      return row([shown(g.game), places, shown(g.finished || ""), replay]);
    }));
    var box = document.getElementById("failures");
    var items = v.failures.map(function (f) {
      var d = el("div", null, { "class": "failure" }), p = el("p");
      p.appendChild(el("b", shown(f.game)));
      p.appendChild(document.createTextNode(": " + shown(f.kind) + ": " + shown(f.reason)));
      d.appendChild(p);
      if (f.excerpt !== null) d.appendChild(el("pre", f.excerpt));
      return d;
    });
    if (!items.length) items = [el("p", "No failures.", { "class": "empty" })];
    box.replaceChildren.apply(box, items);
  }

  var page = document.body.getAttribute("data-page");
  var url = page === "board" ? "/api/snapshot" : document.body.getAttribute("data-api");
  var draw = page === "board" ? board : entrant;
  var last = null;
  function poll() {
    fetch(url, { cache: "no-store" }).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.text();
    }).then(function (text) {
      if (text !== last) { last = text; draw(JSON.parse(text)); }
      document.body.setAttribute("data-polled", String(Date.now()));
    }).catch(function () {
      // the server restarting or the network gone: keep the page as it is and try again
    }).then(function () { setTimeout(poll, PERIOD_MS); });
  }
  if (page === "board" || page === "entrant") setTimeout(poll, PERIOD_MS);
})();
