// Live status: fills the page from /api/events (Server-Sent Events), no reload.
// Shows only what the device's public status holds: never a rank.
(function () {
  "use strict";

  var root = document.getElementById("live");
  if (!root) {
    return;
  }

  var STATE_WORDS = {
    idle: "Ready",
    waiting: "Waiting for pieces",
    deciding: "Deciding…",
    result: "Verdict",
    game_over: "Game over",
    fault: "Fault"
  };
  var SLOT_WORDS = { empty: "empty", present: "seated", invalid: "misread", fault: "fault" };
  var RESULT_WORDS = {
    attacker: "Attacker survives",
    defender: "Defender survives",
    split: "Split: both fall"
  };
  var SIDES = { W: "White", B: "Black" };

  var serverNow = parseFloat(root.getAttribute("data-server-now"));
  var skew = isFinite(serverNow) ? serverNow - Date.now() / 1000 : 0;
  var current = null;

  function field(name) {
    return root.querySelector('[data-f="' + name + '"]');
  }

  function setText(name, value) {
    var el = field(name);
    if (el && el.textContent !== String(value)) {
      el.textContent = String(value);
    }
  }

  function human(word) {
    var text = String(word || "").replace(/_/g, " ");
    return text.charAt(0).toUpperCase() + text.slice(1);
  }

  function survivorSide(verdict) {
    if (verdict.result === "attacker") {
      return verdict.attacker_side;
    }
    if (verdict.result === "defender") {
      return verdict.attacker_side === "W" ? "B" : "W";
    }
    return null;
  }

  function verdictLine(verdict) {
    var side = survivorSide(verdict);
    var by = SIDES[verdict.attacker_side] || verdict.attacker_side;
    var line = "#" + verdict.number + " · " + by + " attacked · ";
    line += side ? (SIDES[side] + " survives") : "both fall";
    return line;
  }

  function clock(seconds) {
    seconds = Math.max(0, Math.floor(seconds));
    var h = Math.floor(seconds / 3600);
    var m = Math.floor((seconds % 3600) / 60);
    var s = seconds % 60;
    var mm = (h && m < 10 ? "0" : "") + m;
    return (h ? h + ":" : "") + mm + ":" + (s < 10 ? "0" : "") + s;
  }

  function endingWords(ending) {
    var words = human(ending.kind);
    return ending.winner ? words + ": " + (SIDES[ending.winner] || ending.winner) + " wins" : words;
  }

  function renderElapsed() {
    if (!current || !current.started_at) {
      return;
    }
    var end = current.ending ? current.ending.at : Date.now() / 1000 + skew;
    setText("elapsed", clock(end - current.started_at));
  }

  function renderHistory(verdicts) {
    var list = field("history");
    if (!list) {
      return;
    }
    var shown = verdicts.slice(-12).reverse();
    while (list.firstChild) {
      list.removeChild(list.firstChild);
    }
    shown.forEach(function (v) {
      var item = document.createElement("li");
      item.className = "result-" + v.result;
      item.textContent = verdictLine(v);
      list.appendChild(item);
    });
    if (!shown.length) {
      var none = document.createElement("li");
      none.className = "muted";
      none.textContent = "no challenge yet";
      list.appendChild(none);
    }
  }

  function render(s) {
    if (!s || !s.state) {
      return;
    }
    current = s;
    var stateCard = root.querySelector(".state-card");
    stateCard.setAttribute("data-state", s.state);
    setText("game_id", s.game_id);
    var word = STATE_WORDS[s.state] || human(s.state);
    var lastOne = (s.verdicts || []).slice(-1)[0];
    if (s.state === "result" && lastOne) {
      var side = survivorSide(lastOne);
      word = side ? SIDES[side] + " survives" : "Both fall";
    }
    setText("state_word", word);

    var message = field("message");
    message.hidden = !s.message;
    setText("message", s.message || "");

    ["attacker", "defender"].forEach(function (slot) {
      var state = (s.slots && s.slots[slot]) || "empty";
      setText("slot_" + slot, SLOT_WORDS[state] || state);
      root.querySelector('.slot[data-slot="' + slot + '"]').setAttribute("data-slot-state", state);
    });

    var verdicts = s.verdicts || [];
    var last = verdicts.length ? verdicts[verdicts.length - 1] : null;
    root.querySelector(".verdict-card").setAttribute("data-verdict", s.last_verdict || "");
    setText("verdict_word", s.last_verdict ? RESULT_WORDS[s.last_verdict] : "none yet");
    setText("verdict_detail", s.last_verdict && last ?
      "Challenge " + last.number + " · " + (SIDES[last.attacker_side] || "") + " attacked" : "");

    setText("eliminated_W", (s.eliminated && s.eliminated.W) || 0);
    setText("eliminated_B", (s.eliminated && s.eliminated.B) || 0);
    setText("challenge_count", s.challenge_count || 0);
    renderElapsed();
    renderHistory(verdicts);

    var endingCard = field("ending_card");
    endingCard.hidden = !s.ending;
    if (s.ending) {
      setText("ending_word", endingWords(s.ending));
      field("reveal_link").setAttribute("href", "/games/" + encodeURIComponent(s.game_id));
    }

    var readers = field("readers");
    readers.setAttribute("data-ok", s.readers && s.readers.ok ? "true" : "false");
    setText("readers", s.readers && s.readers.ok ? "readers ok" :
      "reader problem: " + ((s.readers && s.readers.detail) || "unknown"));
    setText("mode", s.mode === "sim" ? "simulator" : "");
    field("enrolling").hidden = !s.enrolling;
    // Tournament: the hub's assignment, and the link to its broker.
    field("assignment").hidden = !s.assignment;
    setText("assignment", s.assignment ? s.assignment.text : "");
    // The cause is a few plain words about the network (never a host or a rank).
    var cause = s.broker && s.broker.cause;
    setText("broker", "broker: " + ((s.broker && s.broker.state) || "not configured") +
      (cause ? " \u2014 " + cause : ""));
  }

  function setConnection(state, words) {
    var el = field("connection");
    el.setAttribute("data-conn", state);
    el.textContent = words;
  }

  // A page the server refuses a stream (503: as many pages stream as it serves)
  // polls /api/status every POLL_MS and tries the stream again after RETRY_MS.
  var POLL_MS = 2000;
  var retrySeconds = parseFloat(root.getAttribute("data-stream-retry"));
  var RETRY_MS = (isFinite(retrySeconds) && retrySeconds > 0 ? retrySeconds : 30) * 1000;
  var polling = false;
  var pollRun = 0; // a stopped and restarted poll leaves one loop, not two

  function pollOnce(run) {
    if (!polling || run !== pollRun) {
      return;
    }
    fetch("/api/status", { cache: "no-store" })
      .then(function (r) {
        if (!r.ok) {
          throw new Error("status " + r.status);
        }
        return r.json();
      })
      .then(function (s) {
        if (polling) {
          render(s);
          setConnection("polling", "live (every 2 s)");
        }
      })
      .catch(function () { if (polling) { setConnection("lost", "reconnecting…"); } })
      .then(function () {
        window.setTimeout(function () { pollOnce(run); }, POLL_MS);
      });
  }

  function startPolling() {
    if (!polling) {
      polling = true;
      pollRun += 1;
      pollOnce(pollRun);
    }
  }

  function connect() {
    if (!window.EventSource) {
      startPolling();
      return;
    }
    var source = new EventSource("/api/events");
    source.onopen = function () {
      polling = false;
      setConnection("live", "live");
    };
    source.onmessage = function (event) {
      try {
        render(JSON.parse(event.data));
      } catch (err) {
        // a damaged message: the next one repairs the page
      }
    };
    source.onerror = function () {
      if (source.readyState === EventSource.CLOSED) {
        // Refused (an answer that is not a stream): the browser gives up on it,
        // so poll meanwhile and ask for the stream again later.
        source.close();
        startPolling();
        window.setTimeout(connect, RETRY_MS);
        return;
      }
      setConnection("lost", "reconnecting…"); // the browser reconnects by itself
    };
  }

  try {
    render(JSON.parse(root.getAttribute("data-status") || "{}"));
  } catch (err) {
    // start empty; the stream fills the page
  }
  window.setInterval(renderElapsed, 1000);
  connect();
})();
