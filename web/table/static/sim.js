// Simulator panel: virtual slots, the device's LEDs and its buzzer (through WebAudio).
// The piece you pick stays in this browser: the device's status never says which it is.
(function () {
  "use strict";

  var panel = document.getElementById("sim-panel");
  if (!panel) {
    return;
  }

  var POLL_MS = 250;
  var errorBox = document.getElementById("sim-error");
  var playingBox = document.getElementById("playing");
  var soundButton = document.getElementById("sound");
  var leds = {};
  var ledState = {};
  var tunes = null;
  var audio = null;
  var soundOn = false;
  var voices = [];
  var lastStarted = null;
  var names = { sides: {}, ranks: {} };

  Array.prototype.forEach.call(panel.querySelectorAll("[data-led]"), function (el) {
    leds[el.getAttribute("data-led")] = el;
  });

  function request(method, path, body) {
    var options = { method: method, headers: {}, cache: "no-store" };
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    return fetch(path, options).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (data) {
        if (!r.ok) {
          throw new Error(data.error || "HTTP " + r.status);
        }
        return data;
      });
    });
  }

  function showError(text) {
    errorBox.hidden = !text;
    errorBox.textContent = text || "";
  }

  function option(value, label) {
    var el = document.createElement("option");
    el.value = value;
    el.textContent = label;
    return el;
  }

  function fillPickers(choices) {
    choices.sides.forEach(function (s) { names.sides[s.letter] = s.name; });
    choices.ranks.forEach(function (r) { names.ranks[r.code] = r.name; });
    Array.prototype.forEach.call(panel.querySelectorAll(".sim-slot"), function (form, index) {
      var side = form.elements.side;
      var rank = form.elements.rank;
      choices.sides.forEach(function (s) { side.appendChild(option(s.letter, s.name)); });
      choices.ranks.forEach(function (r) { rank.appendChild(option(r.code, r.name + " (" + r.code + ")")); });
      side.selectedIndex = index % choices.sides.length;
    });
  }

  // -- sound ---------------------------------------------------------------

  function ensureAudio() {
    var Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) {
      return null;
    }
    if (!audio) {
      audio = new Context();
    }
    if (audio.state === "suspended") {
      audio.resume();
    }
    return audio;
  }

  function setSound(on) {
    soundOn = on && !!ensureAudio();
    soundButton.setAttribute("aria-pressed", soundOn ? "true" : "false");
    soundButton.textContent = soundOn ? "Sound on" : "Sound off";
    if (!soundOn) {
      silence();
    }
  }

  function silence() {
    voices.forEach(function (v) {
      try { v.stop(); } catch (err) { /* already stopped */ }
    });
    voices = [];
  }

  // A square wave, like the piezo, note by note: [frequency or null, seconds].
  function playTune(name) {
    var notes = tunes && tunes[name];
    if (!soundOn || !audio || !notes) {
      return;
    }
    silence();
    var t = audio.currentTime + 0.02;
    notes.forEach(function (note) {
      var frequency = note[0];
      var seconds = note[1];
      if (frequency) {
        var osc = audio.createOscillator();
        var gain = audio.createGain();
        var end = t + Math.max(0.02, seconds - 0.012);
        osc.type = "square";
        osc.frequency.setValueAtTime(frequency, t);
        gain.gain.setValueAtTime(0.0001, t);
        gain.gain.exponentialRampToValueAtTime(0.06, t + 0.004);
        gain.gain.setValueAtTime(0.06, end - 0.006);
        gain.gain.exponentialRampToValueAtTime(0.0001, end);
        osc.connect(gain);
        gain.connect(audio.destination);
        osc.start(t);
        osc.stop(end + 0.01);
        voices.push(osc);
      }
      t += seconds;
    });
  }

  // -- LEDs ----------------------------------------------------------------

  function blinkLit(blink, now) {
    var cycle = (blink.on_time + blink.off_time) * blink.flashes + blink.pause;
    if (cycle <= 0) {
      return true;
    }
    var t = now % cycle;
    var flashPart = (blink.on_time + blink.off_time) * blink.flashes;
    if (t >= flashPart) {
      return false;
    }
    return (t % (blink.on_time + blink.off_time)) < blink.on_time;
  }

  function drawLeds() {
    var now = performance.now() / 1000;
    Object.keys(leds).forEach(function (name) {
      var s = ledState[name];
      var lit = false;
      if (s && s.mode === "on") {
        lit = true;
      } else if (s && s.mode === "blink" && s.blink) {
        lit = blinkLit(s.blink, now - s.since);
      }
      leds[name].classList.toggle("lit", lit);
    });
  }

  function showOutputs(out) {
    Object.keys(leds).forEach(function (name) {
      var led = out.leds[name] || { mode: "off", blink: null };
      var old = ledState[name];
      if (!old || old.mode !== led.mode || JSON.stringify(old.blink) !== JSON.stringify(led.blink)) {
        ledState[name] = { mode: led.mode, blink: led.blink, since: performance.now() / 1000 };
      }
      leds[name].setAttribute("data-mode", led.mode);
    });
    playingBox.textContent = out.playing ? "playing " + out.playing.name : "silent";
    var played = out.played || [];
    var newest = played.reduce(function (m, p) { return Math.max(m, p.started); }, -1);
    if (lastStarted === null || newest < lastStarted - 1) {
      lastStarted = newest;  // first look (or the arbiter restarted): do not replay history
      return;
    }
    played.forEach(function (p) {
      if (p.started > lastStarted) {
        playTune(p.name);
      }
    });
    lastStarted = Math.max(lastStarted, newest);
  }

  // The slots as the device has them: a piece seated from the terminal or another
  // browser shows here too (never which piece; only this browser's own pick is named).
  function showSlots(slots) {
    Array.prototype.forEach.call(panel.querySelectorAll(".sim-slot"), function (form) {
      var box = form.querySelector('[data-f="picked"]');
      var seen = slots[form.getAttribute("data-slot")] || "empty";
      if (seen === box.getAttribute("data-seen")) {
        return;
      }
      var mine = seen === "present" && box.getAttribute("data-mine") === "1";
      box.setAttribute("data-seen", seen);
      if (!mine) {
        box.setAttribute("data-mine", "0");
        picked(form, seen === "empty" ? "empty" : "seated (" + seen + ")");
      }
    });
  }

  // Bumped by every seat or removal made here: a slots answer asked for before
  // one of them is stale and must not undo what this browser just did.
  var slotActions = 0;

  function pollOutputs() {
    if (document.hidden) {
      window.setTimeout(pollOutputs, 1000);
      return;
    }
    var asked = slotActions;
    request("GET", "/api/sim/slots")
      .then(function (slots) {
        if (asked === slotActions) {
          showSlots(slots);
        }
      })
      .then(function () { return request("GET", "/api/sim/outputs"); })
      .then(showOutputs)
      .catch(function () { /* the arbiter may be restarting */ })
      .then(function () { window.setTimeout(pollOutputs, POLL_MS); });
  }

  // -- slots ---------------------------------------------------------------

  function picked(form, text) {
    form.querySelector('[data-f="picked"]').textContent = text;
  }

  function seat(form) {
    var slot = form.getAttribute("data-slot");
    var side = form.elements.side.value;
    var rank = form.elements.rank.value;
    slotActions += 1;
    return request("PUT", "/api/sim/slots/" + slot, { piece: side + ":" + rank })
      .then(function () {
        slotActions += 1; // a poll asked while the request was on the way is stale too
        showError("");
        var box = form.querySelector('[data-f="picked"]');
        box.setAttribute("data-mine", "1");
        box.setAttribute("data-seen", "present");
        picked(form, "you seated: " + names.sides[side] + " " + names.ranks[rank]);
      })
      .catch(function (err) { showError(err.message); });
  }

  function removePiece(form) {
    var slot = form.getAttribute("data-slot");
    slotActions += 1;
    return request("DELETE", "/api/sim/slots/" + slot)
      .then(function () {
        slotActions += 1;
        showError("");
        var box = form.querySelector('[data-f="picked"]');
        box.setAttribute("data-mine", "0");
        box.setAttribute("data-seen", "empty");
        picked(form, "empty");
      })
      .catch(function (err) { showError(err.message); });
  }

  Array.prototype.forEach.call(panel.querySelectorAll(".sim-slot"), function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (!audio) {
        setSound(true);  // the first click may start the sound (browsers need a gesture)
      }
      seat(form);
    });
    form.querySelector('[data-act="remove"]').addEventListener("click", function () {
      removePiece(form);
    });
  });

  document.getElementById("clear-both").addEventListener("click", function () {
    Array.prototype.forEach.call(panel.querySelectorAll(".sim-slot"), removePiece);
  });

  soundButton.addEventListener("click", function () { setSound(!soundOn); });

  request("GET", "/api/sim/ranks").then(fillPickers).catch(function (err) { showError(err.message); });
  request("GET", "/api/sim/tunes").then(function (t) { tunes = t; }).catch(function () { tunes = {}; });
  window.setInterval(drawLeds, 40);
  pollOutputs();
})();
