// Admin page: keeps the RFID enrollment prompt and progress current while it runs.
(function () {
  "use strict";

  var box = document.getElementById("enrollment");
  if (!box || box.getAttribute("data-active") !== "true") {
    return;
  }

  function field(name) {
    return box.querySelector('[data-f="' + name + '"]');
  }

  function show(e) {
    var prompt = field("prompt");
    if (!prompt) {
      return;
    }
    prompt.textContent = e.active ? e.prompt : "finished";
    var bar = field("progress");
    bar.max = e.progress[1] || 1;
    bar.value = e.progress[0];
    field("progress_text").textContent = e.progress[0] + " / " + e.progress[1];
    field("last").textContent = e.last || "";
    box.setAttribute("data-active", e.active ? "true" : "false");
  }

  function tick() {
    fetch("/api/admin/enrollment", { cache: "no-store", credentials: "same-origin" })
      .then(function (r) {
        if (!r.ok) {
          throw new Error("HTTP " + r.status);
        }
        return r.json();
      })
      .then(function (e) {
        show(e);
        if (e.active) {
          window.setTimeout(tick, 700);
        }
      })
      .catch(function () { window.setTimeout(tick, 3000); });
  }

  tick();
})();
