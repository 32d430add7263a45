// The hub's live pages: one event stream. It opens with a snapshot of every
// table's row (or, on the browser's own reconnection, the messages it missed);
// then each message holds a patch: per table, only the fields that changed
// (null: the table is gone). The page keeps the rows and applies each patch;
// a row updates its card on the venue screen; a result, an organiser's action,
// a snapshot or a missed message reloads the page's main part (fetched again,
// never a full page reload).
// The organiser page takes the public stream only as a hint that something
// changed: it fetches itself again (behind its login) and swaps in its parts
// marked data-live, keeping whatever the organiser is typing in them.
(function () {
  "use strict";
  var page = document.body.getAttribute("data-page");
  var screen = document.body.classList.contains("screen");
  if (!page || page === "game") { return; }
  var organiser = page === "organiser";
  var live = document.getElementById("live");
  var lastSeq = null;
  var rows = {};
  var source = null;
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
    setText(card, "ending", row.over ? row.ending_text : "");
    setText(card, "score", row.result || "");
    setText(card, "silent", row.silent ? "silent: " + row.silent : (row.unknown ? "unknown: " + row.unknown : ""));
    setText(card, "unscored", row.unscored ? "not scored: " + row.unscored : "");
    card.classList.toggle("offline", row.online === false);
    card.classList.toggle("unknown", row.online !== true && row.online !== false);
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

  // --- the organiser page: swap its live parts, keep what is being typed -----
  function fieldKey(el) {
    var form = el.form;
    var owner = form ? (form.getAttribute("data-key") || form.getAttribute("action") || "") : "";
    var key = owner + "|" + (el.name || el.id);
    return el.type === "radio" ? key + "|" + el.value : key;
  }

  function edited(el) {
    if (el.type === "checkbox" || el.type === "radio") { return el.checked !== el.defaultChecked; }
    if (el.tagName === "SELECT") {
      return Array.from(el.options).some(function (o) { return o.selected !== o.defaultSelected; });
    }
    return el.value !== el.defaultValue;
  }

  function typedIn(root) {
    var kept = {};
    root.querySelectorAll("input, select, textarea").forEach(function (el) {
      if (el.type === "hidden" || el.type === "file" || el.type === "submit") { return; }
      var focused = el === document.activeElement;
      if (!focused && !edited(el)) { return; }
      kept[fieldKey(el)] = { value: el.value, checked: el.checked, focused: focused,
        start: focused && el.selectionStart !== undefined ? el.selectionStart : null };
    });
    root.querySelectorAll("details[id]").forEach(function (d) { kept["details#" + d.id] = { open: d.open }; });
    return kept;
  }

  function putBack(root, kept) {
    root.querySelectorAll("input, select, textarea").forEach(function (el) {
      var k = kept[fieldKey(el)];
      if (!k) { return; }
      if (el.type === "checkbox" || el.type === "radio") { el.checked = k.checked; } else { el.value = k.value; }
      if (k.focused) {
        el.focus();
        if (k.start !== null) { try { el.setSelectionRange(k.start, k.start); } catch (e) { /* not a text field */ } }
      }
    });
    root.querySelectorAll("details[id]").forEach(function (d) {
      var k = kept["details#" + d.id];
      if (k) { d.open = k.open; }
    });
  }

  var swaps = 0;
  // A press in progress (pointer down, not yet up) would lose its click if its
  // button were swapped under it: the swap waits for the release.
  var pressing = false;
  var held = null;
  // A select opened with the pointer shows its list until a choice or a blur.
  var openList = null;
  document.addEventListener("pointerdown", function (e) {
    pressing = true;
    openList = e.target && e.target.tagName === "SELECT" ? e.target : null;
  }, true);
  document.addEventListener("change", function () { openList = null; }, true);
  document.addEventListener("focusout", function () { openList = null; }, true);
  function released() {
    // After the click the release makes has run.
    setTimeout(function () {
      pressing = false;
      if (held) { var doc = held; held = null; swapLive(doc); }
    }, 0);
  }
  document.addEventListener("pointerup", released, true);
  document.addEventListener("pointercancel", released, true);

  function swapLive(doc) {
    if (pressing) { held = doc; document.body.setAttribute("data-held", "1"); return; }
    document.body.removeAttribute("data-held");
    var skipped = false;
    document.querySelectorAll("[data-live][id]").forEach(function (part) {
      var fresh = doc.getElementById(part.id);
      if (!fresh) { return; }
      // An open select's list would close under the organiser: that part waits.
      if (openList && part.contains(openList)) { skipped = true; return; }
      var kept = typedIn(part);
      var node = document.importNode(fresh, true);
      part.replaceWith(node);
      putBack(node, kept);
    });
    swaps += 1;
    document.body.setAttribute("data-swaps", String(swaps));
    if (skipped) { later(); }
  }

  var ended = false;
  function loggedOut() {
    ended = true;
    live.setAttribute("data-state", "off");
    var note = document.getElementById("session-note");
    if (note) { note.hidden = false; }
  }

  // A busy venue sends a message for every challenge: the organiser page fetches
  // at once for what it must show at once (a result, a table going offline,
  // silent or back, the organiser's own actions, a missed message) and at most
  // every 2 s for the rest (challenge counts), so that one open organiser page
  // costs the hub little.
  var linkSeen = {};
  var pending = null;
  function organiserNews(msg, missed) {
    var now = msg.type !== "tables" || missed || msg.results;
    if (msg.type === "tables") {
      Object.keys(msg.patch).forEach(function (table) {
        var row = rows[table];
        var link = row ? String(row.online) + "|" + (row.silent || "") : "gone";
        if (linkSeen[table] !== undefined && linkSeen[table] !== link) { now = true; }
        linkSeen[table] = link;
      });
    }
    if (now) { reloadMain(); } else { later(); }
  }

  function later() {
    if (!pending) { pending = setTimeout(function () { pending = null; reloadMain(); }, 2000); }
  }

  function reloadMain() {
    if (ended) { return; }  // logged out: the page says so, and stops asking
    if (reloading) { again = true; return; }
    reloading = true;
    fetch(organiser ? "/organiser/live" : location.pathname + location.search,
          { cache: "no-store" }).then(function (r) {
      if (organiser && r.redirected) { loggedOut(); return null; }  // to the login page
      return r.ok ? r.text() : null;
    }).then(function (html) {
      if (html === null) { return; }
      var doc = new DOMParser().parseFromString(html, "text/html");
      if (organiser) { swapLive(doc); return; }
      var fresh = doc.getElementById("main");
      var main = document.getElementById("main");
      if (fresh && main) { main.replaceChildren.apply(main, Array.from(fresh.childNodes)); }
      if (screen) { showPage(); }
    }).catch(function () { /* the next message or poll tries again */ }).then(function () {
      reloading = false;
      // The organiser page is heavier: changes arriving meanwhile are fetched once, a bit later.
      if (again) { again = false; setTimeout(reloadMain, organiser ? 250 : 0); }
    });
  }

  function applyPatch(patch) {
    Object.keys(patch).forEach(function (table) {
      var fields = patch[table];
      if (fields === null) { delete rows[table]; return; }
      var row = rows[table] || {};
      Object.keys(fields).forEach(function (k) { row[k] = fields[k]; });
      rows[table] = row;
    });
  }

  function onMessage(ev) {
    var msg;
    try { msg = JSON.parse(ev.data); } catch (e) { return; }
    if (msg.type === "snapshot") {
      rows = {};
      msg.tables.forEach(function (row) { rows[row.table] = row; });
      lastSeq = msg.seq;
      if (organiser) { organiserNews(msg, true); } else { reloadMain(); }
      return;
    }
    if (lastSeq !== null && msg.seq !== lastSeq + 1) {
      // A message missed: the rows cannot be patched; a fresh stream starts with a snapshot.
      lastSeq = null;
      source.close();
      connect();
      return;
    }
    lastSeq = msg.seq;
    if (msg.type === "tables") { applyPatch(msg.patch); }
    if (organiser) { organiserNews(msg, false); return; }
    if (msg.type === "refresh") { reloadMain(); return; }
    if (msg.type !== "tables") { return; }
    if (page === "venue") {
      Object.keys(msg.patch).forEach(function (table) {
        if (rows[table]) { updateCard(rows[table]); } else { reloadMain(); }
      });
    }
    else if (msg.results) { reloadMain(); }
  }

  // The venue screen: up to 50 tables a page (views.SCREEN_PER_PAGE), the rest on
  // further pages shown in turn; the grid's columns and rows come with the page (chosen
  // for the number of tables) and reach the CSS as custom properties (the hub's CSP
  // refuses inline style attributes, not styles set from its own script).
  var PER_PAGE = 50;
  var PAGE_SECONDS = 12;
  var shown = 0;
  function showPage() {
    var grid = document.getElementById("tables");
    if (grid && grid.dataset.cols) {
      grid.style.setProperty("--cols", grid.dataset.cols);
      grid.style.setProperty("--rows", grid.dataset.rows);
    }
    var cards = document.querySelectorAll(".tcard");
    var pages = Math.max(1, Math.ceil(cards.length / PER_PAGE));
    if (shown >= pages) { shown = 0; }
    cards.forEach(function (card, i) { card.hidden = Math.floor(i / PER_PAGE) !== shown; });
    var note = document.getElementById("screen-page");
    if (note) { note.textContent = pages > 1 ? "page " + (shown + 1) + " of " + pages : ""; }
  }
  if (screen) {
    showPage();
    setInterval(function () { shown += 1; showPage(); }, PAGE_SECONDS * 1000);
  }

  var poller = null;
  function connect() {
    var own = new EventSource("/api/events");
    source = own;
    own.onopen = function () {
      live.setAttribute("data-state", ended ? "off" : "on");
      if (poller) { clearInterval(poller); poller = null; }
    };
    own.onmessage = onMessage;
    own.onerror = function () {
      live.setAttribute("data-state", "off");
      if (own.readyState === EventSource.CLOSED && own === source) {
        // Refused (too many viewers): poll, and try the stream again later.
        if (!poller) { poller = setInterval(reloadMain, 10000); }
        setTimeout(connect, 30000);
      }
    };
  }
  connect();
  // A refused message is the organiser's alone (the public stream carries no
  // news of it, and a rogue client's flood must not reach the viewers): the
  // organiser page also looks every so often (15 s unless the hub says otherwise).
  if (organiser) {
    // A button that can take a while (pairing a big Swiss round) says so while the
    // hub works, and cannot be pressed twice.
    document.addEventListener("submit", function (ev) {
      var button = ev.target.querySelector("button[data-busy]");
      if (!button) { return; }
      button.textContent = button.getAttribute("data-busy");
      button.setAttribute("aria-busy", "true");
      button.disabled = true;
    });
    var poll = document.getElementById("org-poll");
    var seconds = poll ? Number(poll.getAttribute("data-seconds")) : 15;
    setInterval(reloadMain, 1000 * (seconds > 0 ? seconds : 15));
  }
})();
