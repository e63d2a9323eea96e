/* sitegen session page: what the model saw. On the shown branch, the entries that its last compaction
   replaced are dimmed and marked; the model's view (button or c) shows only what build_session_context
   returns at the shown leaf: the compaction summary first, then the kept and later messages. */
(function () {
  "use strict";

  var doc = document;
  var body = doc.body;
  var page = window.sitegenPage;
  var button = doc.getElementById("toggle-context");
  if (!page) {
    return;
  }
  var summarised = [];
  var summary = null;
  var openedSummaries = [];

  // The seed's algorithm: the last compaction on the path wins; what precedes its first kept entry
  // is replaced by its summary (all of the path before it, when that entry is not on the path).
  function update() {
    for (var i = 0; i < summarised.length; i++) {
      summarised[i].classList.remove("summarised");
    }
    if (summary) {
      summary.classList.remove("ctx-summary");
    }
    summarised = [];
    summary = null;
    var path = page.pathTo(page.shownLeaf());
    var boundary = -1;
    for (var p = path.length - 1; p >= 0; p--) {
      var candidate = page.entryById.get(path[p]);
      if (candidate && candidate.classList.contains("kind-compaction") && candidate.hasAttribute("data-first-kept")) {
        boundary = p;
        summary = candidate;
        break;
      }
    }
    if (!summary) {
      return;
    }
    summary.classList.add("ctx-summary");
    var firstKept = summary.getAttribute("data-first-kept");
    var start = path.indexOf(firstKept);
    if (start < 0 || start > boundary) {
      start = boundary;
    }
    for (var s = 0; s < start; s++) {
      var entry = page.entryById.get(path[s]);
      if (entry && entry.tagName === "ARTICLE") {
        entry.classList.add("summarised");
        summarised.push(entry);
      }
    }
  }

  function setView(on) {
    body.classList.toggle("view-context", on);
    if (button) {
      button.setAttribute("aria-pressed", String(on));
    }
    // The summary is what the model read first: open it while the view lasts.
    if (on && summary) {
      var closed = summary.querySelectorAll("details.summary:not([open])");
      for (var i = 0; i < closed.length; i++) {
        closed[i].open = true;
        openedSummaries.push(closed[i]);
      }
    } else if (!on) {
      for (var c = 0; c < openedSummaries.length; c++) {
        openedSummaries[c].open = false;
      }
      openedSummaries = [];
    }
    doc.dispatchEvent(new Event("sitegen:view"));
  }

  function toggle() {
    setView(!body.classList.contains("view-context"));
  }

  if (button) {
    button.setAttribute("aria-pressed", "false");
    button.addEventListener("click", toggle);
  }
  if (window.sitegenKeys) {
    window.sitegenKeys.add("c", "Show only what the model saw (the model's view)", toggle);
  }
  // A long page's later entries arrive as it goes: mark them a moment after a burst of them is in.
  var again = 0;
  doc.addEventListener("sitegen:chunks", function (event) {
    window.clearTimeout(again);
    again = window.setTimeout(update, event.detail.complete ? 0 : 400);
  });
  doc.addEventListener("sitegen:path", function () {
    var on = body.classList.contains("view-context");
    if (on) {
      setView(false);
    }
    update();
    if (on) {
      setView(true);
    }
  });
  update();
})();
