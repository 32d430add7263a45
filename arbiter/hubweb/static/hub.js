// The hub's live pages: one event stream; each message holds the rows of the
// tables that changed. A row updates its card on the venue screen; a result, an
// organiser's action, a reconnection or a missed message reloads the
// page's main part (fetched again, never a full page reload).
(function () {
  "use strict";
  var page = document.body.getAttribute("data-page");
  if (!page || page === "organiser" || page === "game") { return; }
  var live = document.getElementById("live");
  var lastSeq = null;
  var reloading = false;
  var again = false;

  function setText(card, key, text) {
    var el = card.querySelector('[data-k="' + key + '"]');
    if (el && el.textContent !== text) { el.textContent = text; }
  }

  function updateCard(row) {
    var card = document.querySelector('.tcard[data-table="' + CSS.escape(row.table) + '"]');
    if (!card) { reloadMain(); return; }
    setText(card, "net", row.online ? "online" : (row.online === false ? "offline" : "unknown"));
    setText(card, "white", row.white || "\u2014");
    setText(card, "black", row.black || "\u2014");
    setText(card, "where", row.round ? "Round " + row.round + " \u00b7 board " + row.board : "not assigned");
    setText(card, "state", (row.state || "\u2014").replace(/_/g, " "));
    setText(card, "challenges", String(row.challenges));
    setText(card, "lostW", String(row.lost.W));
    setText(card, "lostB", String(row.lost.B));
    var result = row.over ? row.ending_text + (row.result ? " \u00b7 " + row.result : "") : (row.result || "");
    setText(card, "result", result);
    setText(card, "silent", row.silent ? "silent: " + row.silent : "");
    card.classList.toggle("offline", row.online === false);
    card.classList.toggle("silent", !!row.silent);
    card.classList.toggle("over", !!row.over);
    var link = card.querySelector('[data-k="link"]');
    if (link) {
      if (row.over && row.game && !link.firstChild) {
        var a = document.createElement("a");
        a.href = "/games/" + encodeURIComponent(row.table) + "/" + encodeURIComponent(row.game);
        a.textContent = "reveal";
        link.appendChild(a);
      } else if (!row.over && link.firstChild) {
        link.textContent = "";
      }
    }
    card.setAttribute("data-seq", String(lastSeq));
  }

  function reloadMain() {
    if (reloading) { again = true; return; }
    reloading = true;
    fetch(location.pathname, { cache: "no-store" }).then(function (r) {
      return r.ok ? r.text() : null;
    }).then(function (html) {
      if (html === null) { return; }
      var doc = new DOMParser().parseFromString(html, "text/html");
      var fresh = doc.getElementById("main");
      var main = document.getElementById("main");
      if (fresh && main) { main.replaceChildren.apply(main, Array.from(fresh.childNodes)); }
    }).catch(function () { /* the next message or poll tries again */ }).then(function () {
      reloading = false;
      if (again) { again = false; reloadMain(); }
    });
  }

  function onMessage(ev) {
    var msg;
    try { msg = JSON.parse(ev.data); } catch (e) { return; }
    var missed = lastSeq !== null && msg.seq !== lastSeq + 1;
    lastSeq = msg.seq;
    if (msg.type === "hello" || msg.type === "refresh" || missed) { reloadMain(); return; }
    if (msg.type !== "tables") { return; }
    if (page === "venue") { msg.tables.forEach(updateCard); }
    else if (msg.results) { reloadMain(); }
  }

  var poller = null;
  function connect() {
    var source = new EventSource("/api/events");
    source.onopen = function () {
      live.setAttribute("data-state", "on");
      if (poller) { clearInterval(poller); poller = null; }
    };
    source.onmessage = onMessage;
    source.onerror = function () {
      live.setAttribute("data-state", "off");
      if (source.readyState === EventSource.CLOSED) {
        // Refused (too many viewers): poll, and try the stream again later.
        if (!poller) { poller = setInterval(reloadMain, 10000); }
        setTimeout(connect, 30000);
      }
    };
  }
  connect();
})();
