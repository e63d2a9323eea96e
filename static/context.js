/* sitegen session page: what the model saw. On the shown branch, the entries that its last compaction
   replaced (or that a /clear left behind, in omp's files) are dimmed and marked; the model's view
   (button or c) shows only what build_session_context returns at the shown leaf, by the rules of the
   agent that wrote the file (body data-rules): the compaction summary first, then the kept and later
   messages; for omp 18 also its notes first, and without the tool calls no result answers. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var doc = document;
  var body = doc.body;
  var page = window.sitegen.page;
  var button = doc.getElementById("toggle-context");
  if (!page) {
    return;
  }
  var omp = (body.getAttribute("data-rules") || "").indexOf("omp") === 0;
  var marked = [];
  var summary = null;
  var openedSummaries = [];

  function mark(element, name) {
    element.classList.add(name);
    marked.push([element, name]);
  }

  function ctxOf(id) {
    var entry = page.entryById.get(id);
    return entry ? entry.getAttribute("data-ctx") || "" : "";
  }

  // Where the kept messages start on the path (index), given the governing compaction at `boundary`.
  function keptStart(path, boundary) {
    var compaction = page.entryById.get(path[boundary]);
    var firstKept = path.indexOf(compaction.getAttribute("data-first-kept") || "\u0000");
    var after = path.indexOf(compaction.getAttribute("data-kept-after") || "\u0000");
    var remote = compaction.getAttribute("data-ctx") === "remote";
    if (!remote && firstKept >= 0 && firstKept < boundary) {
      return firstKept;
    }
    if (after >= 0 && after < boundary - (remote ? 0 : 1)) {
      return after + 1;
    }
    return boundary;
  }

  // A notes-backed compaction (omp) keeps the latest user request before it, when that precedes
  // its first kept entry: its index on the path, or -1.
  function keptRequest(path, boundary, reset) {
    var firstKept = path.indexOf(page.entryById.get(path[boundary]).getAttribute("data-first-kept") || "\u0000");
    for (var i = boundary - 1; i > reset; i--) {
      if (page.entryById.get(path[i]) && page.entryById.get(path[i]).hasAttribute("data-request")) {
        return i < firstKept ? i : -1;
      }
    }
    return -1;
  }

  // A compaction entry (not a message that holds a compaction summary), with a first kept entry or not.
  function isCompaction(entry) {
    var ctx = entry ? entry.getAttribute("data-ctx") : null;
    return ctx === "compaction" || ctx === "remote";
  }

  // pi's algorithm (seed 000): the last compaction on the path wins; what precedes its first kept
  // entry is replaced by its summary. omp 18 also starts after the latest /clear when that follows
  // the compaction, opens with its notes, and strips the tool calls no result on the path answers.
  function update() {
    for (var i = 0; i < marked.length; i++) {
      marked[i][0].classList.remove(marked[i][1]);
    }
    marked = [];
    summary = null;
    var path = page.pathTo(page.shownLeaf());
    var boundary = -1;
    var reset = -1;
    for (var p = path.length - 1; p >= 0; p--) {
      if (boundary < 0 && isCompaction(page.entryById.get(path[p]))) {
        boundary = p;
      }
      if (omp && reset < 0 && ctxOf(path[p]) === "reset") {
        reset = p;
      }
    }
    var start = 0;
    var dropped = "summarised";
    if (reset > boundary) {
      start = reset + 1;
      dropped = "cleared";
    } else if (boundary >= 0) {
      summary = page.entryById.get(path[boundary]);
      mark(summary, "ctx-summary");
      start = keptStart(path, boundary);
    }
    var request = omp && summary && summary.hasAttribute("data-rollover") ? keptRequest(path, boundary, reset) : -1;
    for (var s = 0; s < start; s++) {
      var entry = page.entryById.get(path[s]);
      if (entry && entry.tagName === "ARTICLE" && s !== request) {
        mark(entry, dropped);
      }
    }
    if (omp) {
      markNotes(path);
      markUnanswered(path.slice(start));
    }
  }

  function markNotes(path) {
    for (var p = path.length - 1; p >= 0; p--) {
      var ctx = ctxOf(path[p]);
      if (ctx === "reset" || ctx === "notes-clear") {
        return;
      }
      if (ctx === "notes") {
        mark(page.entryById.get(path[p]), "ctx-notes");
        return;
      }
    }
  }

  function markUnanswered(kept) {
    var sent = new Set(kept);
    for (var k = 0; k < kept.length; k++) {
      var entry = page.entryById.get(kept[k]);
      if (!entry || !entry.classList.contains("kind-assistant") || !entry.classList.contains("msg")) {
        continue;
      }
      var tools = entry.querySelectorAll("section.tool[data-call]");
      var unanswered = 0;
      for (var t = 0; t < tools.length; t++) {
        var result = tools[t].querySelector("[data-parent]");
        if (!result || !sent.has(result.id.slice(6))) {
          mark(tools[t], "ctx-unanswered");
          unanswered++;
        }
      }
      if (unanswered > 0 && unanswered === tools.length && entry.classList.contains("tools-only")) {
        mark(entry, "ctx-dropped");
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
  if (window.sitegen.keys) {
    window.sitegen.keys.add("c", "Show only what the model saw (the model's view)", toggle);
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
