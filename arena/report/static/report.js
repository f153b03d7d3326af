/* The report's behaviour: sortable standings and the filterable games list (rows drawn from JSON). */
"use strict";
(function () {
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      th.addEventListener("click", function () {
        var desc = !th.classList.contains("desc");
        heads.forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(desc ? "desc" : "asc");
        var num = th.getAttribute("data-type") === "num";
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col], y = b.cells[col];
          var u = x.getAttribute("data-value") || x.textContent, v = y.getAttribute("data-value") || y.textContent;
          var r = num ? parseFloat(u.replace("\u00b1", "")) - parseFloat(v.replace("\u00b1", "")) : u.localeCompare(v);
          return desc ? -r : r;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  var games = JSON.parse(document.getElementById("games-data").textContent);
  var body = document.querySelector("#games-table tbody");
  var bot = document.getElementById("f-bot"), failed = document.getElementById("f-failed"), kind = document.getElementById("f-kind");
  var more = document.getElementById("more"), count = document.getElementById("games-count");
  var PAGE = 500, shown = PAGE;

  function td(text) { var c = document.createElement("td"); c.textContent = text; return c; }

  function row(g) {
    var tr = document.createElement("tr");
    tr.setAttribute("data-index", g.index);
    if (g.failed) tr.className = "failed";
    tr.appendChild(td(g.index)); tr.appendChild(td(g.table)); tr.appendChild(td(g.set)); tr.appendChild(td(g.seating));
    tr.appendChild(td(g.seats.map(function (s, i) { return s + " (" + g.placings[i] + ", " + g.totals[i] + ")"; }).join(", ")));
    tr.appendChild(td(g.deals));
    tr.appendChild(td(g.kinds.join(", ") + (g.error ? " " + g.error : "")));
    var cell = document.createElement("td");
    if (g.href) { var a = document.createElement("a"); a.href = g.href; a.textContent = "replay"; a.className = "replay"; cell.appendChild(a); }
    else if (g.held) { cell.textContent = "replay after its twins"; cell.className = "held"; }
    tr.appendChild(cell);
    return tr;
  }

  function draw() {
    var b = bot.value, k = kind.value, f = failed.checked;
    var match = games.filter(function (g) {
      return (!b || g.seats.indexOf(b) >= 0) && (!f || g.failed) && (!k || g.kinds.indexOf(k) >= 0);
    });
    var frag = document.createDocumentFragment();
    match.slice(0, shown).forEach(function (g) { frag.appendChild(row(g)); });
    body.textContent = "";
    body.appendChild(frag);
    count.textContent = match.length + " of " + games.length + " games" + (match.length > shown ? ", first " + shown + " shown" : "");
    more.hidden = match.length <= shown;
  }

  [bot, failed, kind].forEach(function (x) { x.addEventListener("change", function () { shown = PAGE; draw(); }); });
  more.addEventListener("click", function () { shown += PAGE; draw(); });
  draw();
})();
