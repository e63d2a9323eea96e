/* sitegen session page: the prompt outline. One link per user prompt of the shown branch, with the
   tool calls, tokens and cost of its turn; j and k step between prompts; the turn in view is marked. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var doc = document;
  var page = window.sitegen.page;
  var outline = doc.getElementById("outline");
  var list = outline ? outline.querySelector("ol.outline") : null;
  var tab = doc.getElementById("tab-outline");
  if (!page || !list) {
    return;
  }
  var format = window.sitegen.format;
  var turns = [];
  var turnOf = new Map();
  var markedTurn = -1;
  var toolbar = doc.querySelector(".toolbar");

  function promptText(entry, id) {
    // A long page makes the rows it has not drawn yet from their markup (treerows.js).
    var treeRows = window.sitegen.treeRows;
    var row = page.rowById.get(id) || (treeRows && treeRows.indexOf(id) >= 0 ? treeRows.element(treeRows.indexOf(id)) : null);
    if (row) {
      var link = row.querySelector("a");
      return (link || row).textContent;
    }
    var body = entry.querySelector(".entry-body");
    return ((body || entry).textContent || "").trim().split("\n")[0].slice(0, 80);
  }

  // An entry's time from its head ("2026-01-01 10:00:00 UTC"); NaN when it has none.
  function entryTime(entry) {
    var time = entry.querySelector(":scope > .entry-head time, :scope > .marker time");
    var text = time ? time.textContent : "";
    return text ? Date.parse(text.replace(" UTC", "Z").replace(" ", "T")) : NaN;
  }

  function tookText(ms) {
    var seconds = Math.round(ms / 1000);
    if (seconds < 60) {
      return seconds + " s";
    }
    var minutes = Math.floor(seconds / 60);
    if (minutes < 60) {
      return minutes + " min" + (seconds % 60 ? " " + (seconds % 60) + " s" : "");
    }
    return Math.floor(minutes / 60) + " h" + (minutes % 60 ? " " + (minutes % 60) + " min" : "");
  }

  // "5 bash · 2 edit · 1 failed · 3 min 5 s": the turn's calls per tool, most first, its failures and
  // how long it took from the prompt to its last entry.
  function statsText(turn) {
    var names = Object.keys(turn.tools).sort(function (a, b) {
      return turn.tools[b] - turn.tools[a] || (a < b ? -1 : a > b ? 1 : 0);
    });
    var parts = names.length ? names.map(function (name) {
      return turn.tools[name] + " " + name;
    }) : ["0 tools"];
    if (turn.failed) {
      parts.push(turn.failed + " failed");
    }
    if (turn.end > turn.start) {
      parts.push(tookText(turn.end - turn.start));
    }
    if (turn.tokens) {
      parts.push((format ? format.tokens(turn.tokens) : String(turn.tokens)) + " tok");
    }
    if (turn.cost) {
      parts.push("$" + turn.cost.toFixed(turn.cost < 1 ? 3 : 2));
    }
    return parts.join(" · ");
  }

  // A turn runs from a prompt to the next: its tool calls and the usage of its replies.
  function build() {
    turns = [];
    turnOf = new Map();
    markedTurn = -1;
    var path = page.pathTo(page.shownLeaf());
    var turn = null;
    for (var i = 0; i < path.length; i++) {
      var entry = page.entryById.get(path[i]);
      if (!entry) {
        continue;
      }
      if (entry.classList.contains("kind-user") && !entry.classList.contains("is-hidden")) {
        turn = { id: path[i], entry: entry, calls: 0, tokens: 0, cost: 0, tools: {}, failed: 0, start: entryTime(entry), end: NaN };
        turns.push(turn);
      }
      if (!turn) {
        continue;
      }
      turnOf.set(path[i], turns.length - 1);
      turn.calls += Number(entry.getAttribute("data-calls")) || 0;
      var tools = entry.getAttribute("data-tools");
      if (tools) {
        tools.split(" ").forEach(function (name) {
          turn.tools[name] = (turn.tools[name] || 0) + 1;
        });
      }
      turn.failed += Number(entry.getAttribute("data-failed")) || 0;
      var at = entryTime(entry);
      if (at > turn.start && !(at <= turn.end)) {
        turn.end = at;
      }
      var usage = (entry.getAttribute("data-usage") || "").split(" ");
      if (usage.length >= 5) {
        turn.tokens += (Number(usage[0]) || 0) + (Number(usage[1]) || 0) + (Number(usage[2]) || 0) +
          (Number(usage[3]) || 0);
        turn.cost += Number(usage[4]) || 0;
      }
    }
    var items = doc.createDocumentFragment();
    for (var n = 0; n < turns.length; n++) {
      var item = doc.createElement("li");
      var link = doc.createElement("a");
      link.href = "#entry-" + encodeURIComponent(turns[n].id);
      link.setAttribute("data-id", turns[n].id);
      var text = doc.createElement("span");
      text.className = "outline-text";
      text.textContent = promptText(turns[n].entry, turns[n].id);
      var stats = doc.createElement("span");
      stats.className = "outline-stats";
      stats.textContent = statsText(turns[n]);
      link.appendChild(text);
      link.appendChild(stats);
      item.appendChild(link);
      items.appendChild(item);
    }
    list.textContent = "";
    list.appendChild(items);
    if (tab) {
      tab.textContent = "Prompts (" + turns.length + ")";
    }
  }

  function mark(index) {
    if (index === markedTurn) {
      return;
    }
    var items = list.children;
    if (markedTurn >= 0 && items[markedTurn]) {
      items[markedTurn].classList.remove("in-view");
    }
    markedTurn = index;
    if (index >= 0 && items[index]) {
      items[index].classList.add("in-view");
    }
  }

  function turnInView() {
    var id = page.entryInView();
    // An entry inside a turn's reply (a tool result) belongs to the turn of its message.
    var guard = 64;
    while (id && !turnOf.has(id) && guard-- > 0) {
      id = page.parentOf.get(id);
    }
    return id && turnOf.has(id) ? turnOf.get(id) : -1;
  }

  // The turn being read is the last one whose prompt has reached the reading line under the toolbar.
  // Positions, not what is drawn at one point, so that a jump still settling counts as landed.
  function turnBeingRead() {
    var line = (toolbar ? toolbar.getBoundingClientRect().bottom : 0) + 64;
    var current = -1;
    for (var i = 0; i < turns.length; i++) {
      var box = turns[i].entry.getBoundingClientRect();
      if (!box.height) {
        continue;
      }
      if (box.top > line) {
        break;
      }
      current = i;
    }
    return current;
  }

  // The prompt a j or k just jumped to, until the reader moves another way. While that jump settles,
  // entries around it get their real heights and move its prompt for a moment before the page puts it
  // back: the next key steps from where the last one went, not from where the prompt sits that moment.
  var jumpedTo = null;
  var movesAtJump = 0;

  function stillAtJump() {
    return jumpedTo !== null && turnOf.has(jumpedTo) && page.moves() === movesAtJump;
  }

  function go(step) {
    if (!turns.length) {
      return;
    }
    var atJump = stillAtJump();
    var current = atJump ? turnOf.get(jumpedTo) : turnBeingRead();
    var target = current + step;
    if (current < 0) {
      target = step > 0 ? 0 : turns.length - 1;
    } else if (!atJump && step < 0) {
      // Within a long turn, k first goes back to the start of the turn the reader is in; a prompt
      // just above the toolbar counts as its start.
      var bar = toolbar ? toolbar.getBoundingClientRect().bottom : 0;
      if (turns[current].entry.getBoundingClientRect().top < bar - 48) {
        target = current;
      }
    }
    target = Math.max(0, Math.min(turns.length - 1, target));
    page.openEntry(turns[target].id, true, false);
    jumpedTo = turns[target].id;
    movesAtJump = page.moves();
    mark(target);
  }

  // The page counts any other jump and any scroll not its own; these tell of the reader's scroll at once,
  // before its scroll event.
  function readerMovedAnotherWay() {
    jumpedTo = null;
  }
  ["wheel", "touchmove", "mousedown"].forEach(function (type) {
    window.addEventListener(type, readerMovedAnotherWay, { passive: true, capture: true });
  });
  window.addEventListener(
    "keydown",
    function (event) {
      if (event.key !== "j" && event.key !== "k") {
        readerMovedAnotherWay();
      }
    },
    { capture: true }
  );

  list.addEventListener("click", function (event) {
    var link = event.target.closest("a[data-id]");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) {
      return;
    }
    event.preventDefault();
    page.openFromTree(link.getAttribute("data-id"));
    if (window.sitegen.tree && window.matchMedia("(max-width: 900px)").matches) {
      window.sitegen.tree.setDrawer(false);
    }
  });

  doc.addEventListener("sitegen:path", function () {
    jumpedTo = null;
    build();
  });
  // A long page's later entries arrive as it goes: build again once a burst of them is in.
  var rebuild = 0;
  doc.addEventListener("sitegen:chunks", function (event) {
    window.clearTimeout(rebuild);
    rebuild = window.setTimeout(build, event.detail.complete ? 0 : 400);
  });
  doc.addEventListener("sitegen:inview", function () {
    mark(turnInView());
  });
  if (window.sitegen.keys) {
    window.sitegen.keys.add("j", "Next prompt", function () {
      go(1);
    });
    window.sitegen.keys.add("k", "Previous prompt", function () {
      go(-1);
    });
  }
  build();
})();
