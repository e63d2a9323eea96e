/* sitegen session page: branch switching, filters, folding keys, find in page and copy links. */
(function () {
  "use strict";

  var doc = document;
  var root = doc.documentElement;
  var body = doc.body;
  root.classList.remove("no-js");

  // Find in page (find.js) indexes what is shown: tell it when the branch or the filter changes.
  function viewChanged() {
    doc.dispatchEvent(new Event("sitegen:view"));
  }

  // ---- Number formats: the same as sitegen/render/page.py so recomputed stats match the server ----

  function groupThousands(count) {
    return String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  // Python rounds an exact tie to even where toFixed rounds it up; only exact ties differ.
  function fixedLikePython(count, unit, digits, fivePart) {
    var text = (count / unit).toFixed(digits);
    var step = unit / Math.pow(10, digits);
    var rest = count % step;
    if (rest * 2 === step && count % fivePart === 0) {
      var lower = (count - rest) / step;
      if (lower % 2 === 0) {
        text = (lower / Math.pow(10, digits)).toFixed(digits);
      }
    }
    return text;
  }

  function formatTokens(count) {
    if (count >= 1000000) {
      return fixedLikePython(count, 1000000, 1, 15625) + "M";
    }
    if (count >= 10000) {
      return fixedLikePython(count, 1000, 0, 125) + "k";
    }
    return groupThousands(count);
  }

  // ---- The tree: maps built once, so switching branches touches only what changes ----

  function entryIdOf(element) {
    return element.id.slice("entry-".length);
  }

  var conversation = doc.getElementById("conversation");
  var treeNav = doc.getElementById("tree");
  var findInput = doc.getElementById("find");
  var entryById = new Map();
  var parentOf = new Map();
  var newestChild = new Map();
  var rowById = new Map();
  var shown = new Set();
  var defaultLeaf = body.getAttribute("data-leaf") || "";
  var shownLeaf = defaultLeaf;
  var currentRow = null;

  // Entries and tool results: the elements with a parent link; their ids are "entry-" + entry id.
  var entryEls = conversation ? conversation.querySelectorAll("[data-parent]") : [];
  // "Context kept after compaction" marks: each belongs to the branch holding its compaction.
  var keptMarks = conversation ? conversation.querySelectorAll(".kept-mark[data-compaction]") : [];
  for (var i = 0; i < entryEls.length; i++) {
    var el = entryEls[i];
    var id = entryIdOf(el);
    entryById.set(id, el);
    parentOf.set(id, el.getAttribute("data-parent") || "");
    if (!el.classList.contains("off-path")) {
      shown.add(id);
    }
  }
  var rowEls = treeNav ? treeNav.querySelectorAll("li[data-id]") : [];
  for (var r = 0; r < rowEls.length; r++) {
    rowById.set(rowEls[r].getAttribute("data-id"), rowEls[r]);
  }
  // Children are in timestamp order in the tree (and in the conversation when there is no tree).
  var ordered = rowEls.length ? rowEls : entryEls;
  for (var k = 0; k < ordered.length; k++) {
    var childId = rowEls.length ? ordered[k].getAttribute("data-id") : entryIdOf(ordered[k]);
    var parentId = parentOf.get(childId);
    if (parentId) {
      newestChild.set(parentId, childId);
    }
  }

  function pathTo(leaf) {
    var path = [];
    var guard = parentOf.size + 1;
    for (var id = leaf; id && parentOf.has(id) && guard > 0; guard--) {
      path.push(id);
      id = parentOf.get(id);
    }
    return path;
  }

  function newestLeafBelow(id) {
    var guard = parentOf.size + 1;
    while (newestChild.has(id) && guard > 0) {
      id = newestChild.get(id);
      guard--;
    }
    return id;
  }

  function markOnPath(id, on) {
    var entry = entryById.get(id);
    if (entry) {
      entry.classList.toggle("off-path", !on);
    }
    var row = rowById.get(id);
    if (row) {
      row.classList.toggle("on-path", on);
    }
  }

  function showPath(leaf) {
    if (leaf === shownLeaf) {
      return;
    }
    var path = pathTo(leaf);
    var next = new Set(path);
    // Writes only, no layout reads in between: one style pass however long the page is.
    shown.forEach(function (id) {
      if (!next.has(id)) {
        markOnPath(id, false);
      }
    });
    for (var i = 0; i < path.length; i++) {
      if (!shown.has(path[i])) {
        markOnPath(path[i], true);
      }
    }
    shown = next;
    shownLeaf = leaf;
    for (var m = 0; m < keptMarks.length; m++) {
      keptMarks[m].classList.toggle("kept-elsewhere", !shown.has(keptMarks[m].getAttribute("data-compaction")));
    }
    // The live server's reload script reads this to bring the reader back to the same branch.
    body.setAttribute("data-leaf", leaf);
    updateStats(path);
    viewChanged();
  }

  // ---- Branch stats in the header: messages, tool calls, tokens and cost of the shown path ----

  var statCells = doc.querySelectorAll("td.branch-stat[data-stat]");
  var serverStats = [];
  for (var s = 0; s < statCells.length; s++) {
    serverStats.push(statCells[s].textContent);
  }

  function updateStats(path) {
    if (!statCells.length) {
      return;
    }
    var texts = serverStats;
    // The server's own figures for the default path avoid any float drift from re-adding costs.
    if (shownLeaf !== defaultLeaf) {
      var messages = 0;
      var calls = 0;
      var usage = [0, 0, 0, 0, 0];
      for (var i = 0; i < path.length; i++) {
        var entry = entryById.get(path[i]);
        if (!entry) {
          continue;
        }
        if (entry.classList.contains("kind-user") || entry.classList.contains("kind-assistant")) {
          messages++;
        }
        calls += Number(entry.getAttribute("data-calls")) || 0;
        var fields = (entry.getAttribute("data-usage") || "").split(" ");
        for (var f = 0; f < 5 && f < fields.length; f++) {
          usage[f] += Number(fields[f]) || 0;
        }
      }
      texts = [
        groupThousands(messages),
        groupThousands(calls),
        formatTokens(usage[0]),
        formatTokens(usage[1]),
        formatTokens(usage[2]),
        formatTokens(usage[3]),
        "$" + usage[4].toFixed(4),
      ];
    }
    for (var c = 0; c < statCells.length; c++) {
      var index = Number(statCells[c].getAttribute("data-stat"));
      if (texts[index] !== undefined) {
        statCells[c].textContent = texts[index];
      }
    }
  }

  // ---- Navigation: tree clicks, deep links and the back button ----

  var scrollJob = 0;

  // Entries skip rendering while off screen (content-visibility), so their real heights only
  // appear once drawn and a first jump can land short: repeat it for a few frames until it holds.
  function scrollSettled(distance) {
    var job = ++scrollJob;
    var frames = 0;
    function step() {
      if (job !== scrollJob) {
        return;
      }
      var delta = distance();
      if (Math.abs(delta) >= 2) {
        window.scrollBy(0, delta);
      }
      if (++frames < 6) {
        window.requestAnimationFrame(step);
      }
    }
    step();
  }

  function scrollToElement(element) {
    var margin = parseFloat(window.getComputedStyle(element).scrollMarginTop) || 0;
    scrollSettled(function () {
      return element.getBoundingClientRect().top - margin;
    });
  }

  function markCurrent(id) {
    if (currentRow) {
      currentRow.classList.remove("current");
      currentRow.removeAttribute("aria-current");
    }
    currentRow = rowById.get(id) || null;
    if (currentRow) {
      currentRow.classList.add("current");
      currentRow.setAttribute("aria-current", "true");
    }
  }

  function revealRow(row) {
    // Scroll the sidebar only: scrollIntoView would also move the page away from the entry.
    if (!treeNav || treeNav.scrollHeight <= treeNav.clientHeight) {
      return;
    }
    var offset = row.getBoundingClientRect().top - treeNav.getBoundingClientRect().top;
    treeNav.scrollTop = Math.max(0, treeNav.scrollTop + offset - treeNav.clientHeight / 3);
  }

  function openEntry(id, keepPath, fromTree) {
    var entry = entryById.get(id);
    if (!entry) {
      return;
    }
    if (!(keepPath && shown.has(id))) {
      showPath(newestLeafBelow(id));
    }
    markCurrent(id);
    // A filter that hides the target would make the jump look broken: show everything instead.
    if (!entry.getClientRects().length) {
      setFilter("all");
    }
    if (currentRow && !fromTree) {
      revealRow(currentRow);
    }
    scrollToElement(entry);
  }

  function idFromHash() {
    var hash = window.location.hash;
    if (hash.indexOf("#entry-") !== 0) {
      return null;
    }
    try {
      return decodeURIComponent(hash.slice(7));
    } catch (error) {
      return hash.slice(7);
    }
  }

  // The hash a tree click just set: its hashchange has nothing left to do.
  var hashFromTree = null;

  window.addEventListener("hashchange", function () {
    var id = idFromHash();
    if (id !== null && id === hashFromTree) {
      hashFromTree = null;
    } else if (id !== null) {
      openEntry(id, true, false);
    }
  });

  if (treeNav) {
    treeNav.addEventListener("click", function (event) {
      var row = event.target.closest("li[data-id]");
      // Modified clicks keep their usual meaning (new tab, new window).
      if (!row || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) {
        return;
      }
      event.preventDefault();
      var id = row.getAttribute("data-id");
      openEntry(id, false, true);
      var hash = "#entry-" + encodeURIComponent(id);
      if (window.location.hash !== hash) {
        hashFromTree = id;
        window.location.hash = hash;
      }
    });
  }

  // ---- Filters ----

  var filterButtons = doc.querySelectorAll("button.filter[data-filter]");

  function setFilter(name) {
    var stale = [];
    body.classList.forEach(function (cls) {
      if (cls.indexOf("filter-") === 0) {
        stale.push(cls);
      }
    });
    for (var i = 0; i < stale.length; i++) {
      body.classList.remove(stale[i]);
    }
    body.classList.add("filter-" + name);
    for (var b = 0; b < filterButtons.length; b++) {
      var on = filterButtons[b].getAttribute("data-filter") === name;
      filterButtons[b].classList.toggle("active", on);
      filterButtons[b].setAttribute("aria-pressed", String(on));
    }
    viewChanged();
  }

  for (var fb = 0; fb < filterButtons.length; fb++) {
    filterButtons[fb].setAttribute(
      "aria-pressed",
      String(filterButtons[fb].classList.contains("active"))
    );
  }

  // ---- Open or close every thinking block, or every folded tool output, at once ----

  var thinkingButton = doc.getElementById("toggle-thinking");
  var toolsButton = doc.getElementById("toggle-tools");
  var THINKING = "details.thinking";
  var TOOL_OUTPUT =
    ".tool details.fold, .tool-output details.fold, .kind-tool_result details.fold, details.attachment";

  function toggleAll(selector, button) {
    var open = button.getAttribute("aria-pressed") !== "true";
    var list = doc.querySelectorAll(selector);
    for (var i = 0; i < list.length; i++) {
      list[i].open = open;
    }
    button.setAttribute("aria-pressed", String(open));
  }

  if (thinkingButton) {
    thinkingButton.setAttribute("aria-pressed", "false");
  }
  if (toolsButton) {
    toolsButton.setAttribute("aria-pressed", "false");
  }

  function isTyping(target) {
    if (!target || target.nodeType !== 1) {
      return false;
    }
    var tag = target.tagName;
    return target.isContentEditable || tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT";
  }

  doc.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.altKey || event.metaKey || event.defaultPrevented || isTyping(event.target)) {
      return;
    }
    if (event.key === "t" && thinkingButton) {
      toggleAll(THINKING, thinkingButton);
    } else if (event.key === "o" && toolsButton) {
      toggleAll(TOOL_OUTPUT, toolsButton);
    } else if (event.key === "/" && findInput) {
      event.preventDefault();
      findInput.focus();
    }
  });

  // ---- Copy link ----

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () {
        return copyWithSelection(text);
      });
    }
    return Promise.resolve().then(function () {
      return copyWithSelection(text);
    });
  }

  // Older browsers and some file:// pages have no async clipboard: copy a selected text field.
  function copyWithSelection(text) {
    var field = doc.createElement("textarea");
    field.value = text;
    field.setAttribute("readonly", "");
    field.className = "copy-buffer";
    body.appendChild(field);
    field.select();
    var done = false;
    try {
      done = doc.execCommand("copy");
    } finally {
      body.removeChild(field);
    }
    if (!done) {
      throw new Error("copy refused");
    }
  }

  function flash(button, text, cls) {
    button.textContent = text;
    button.classList.add(cls);
    window.setTimeout(function () {
      button.textContent = button.getAttribute("data-label") || "copy link";
      button.classList.remove(cls);
    }, 1500);
  }

  // ---- A copy-link button per entry, made when the pointer or the focus first reaches its header:
  // one per entry in the HTML would weigh more than the header itself ----

  function addCopyButton(event) {
    var head = event.target.closest ? event.target.closest(".entry-head, .marker, .tool-head") : null;
    if (!head || head.querySelector(".copy-link")) {
      return;
    }
    // A tool call's header links to its result, which is an entry of its own.
    var isTool = head.classList.contains("tool-head");
    var permalink = isTool ? null : head.querySelector(":scope > .permalink");
    var entry = isTool ? head.parentElement.querySelector(":scope > .tool-result[data-parent]") : head.parentElement;
    if ((!isTool && !permalink) || !entry || !entry.hasAttribute("data-parent")) {
      return;
    }
    var button = doc.createElement("button");
    button.type = "button";
    button.className = "copy-link";
    button.setAttribute("data-copy", entryIdOf(entry));
    button.textContent = isTool ? "copy link to result" : "copy link";
    button.setAttribute("data-label", button.textContent);
    if (permalink) {
      permalink.after(button);
    } else {
      head.appendChild(button);
    }
  }

  doc.addEventListener("pointerover", addCopyButton, { passive: true });
  doc.addEventListener("focusin", addCopyButton);

  // ---- Clicks on the toolbar and the copy buttons, one listener for the page ----

  doc.addEventListener("click", function (event) {
    var button = event.target.closest("button");
    if (!button) {
      return;
    }
    if (button.classList.contains("copy-link") && button.hasAttribute("data-copy")) {
      var url =
        window.location.href.split("#")[0] + "#entry-" + encodeURIComponent(button.getAttribute("data-copy"));
      copyText(url).then(
        function () {
          flash(button, "copied", "copied");
        },
        function () {
          flash(button, "copy failed", "copy-failed");
        }
      );
    } else if (button.classList.contains("filter") && button.hasAttribute("data-filter")) {
      setFilter(button.getAttribute("data-filter"));
    } else if (button === thinkingButton) {
      toggleAll(THINKING, thinkingButton);
    } else if (button === toolsButton) {
      toggleAll(TOOL_OUTPUT, toolsButton);
    }
  });

  // find.js scrolls to its matches the same way the tree scrolls to entries.
  window.sitegenPage = { scrollSettled: scrollSettled };

  // ---- Print: open collapsed parts where CSS cannot (browsers without ::details-content) ----

  var openedForPrint = [];
  var cssOpensDetails = window.CSS && CSS.supports && CSS.supports("selector(::details-content)");
  window.addEventListener("beforeprint", function () {
    if (cssOpensDetails) {
      return;
    }
    var closed = doc.querySelectorAll("details:not([open])");
    for (var i = 0; i < closed.length; i++) {
      closed[i].open = true;
      openedForPrint.push(closed[i]);
    }
  });
  window.addEventListener("afterprint", function () {
    for (var i = 0; i < openedForPrint.length; i++) {
      openedForPrint[i].open = false;
    }
    openedForPrint = [];
  });

  // ---- Start: a deep link opens the path through its entry ----

  var userMoved = false;
  ["wheel", "touchmove", "keydown", "mousedown"].forEach(function (type) {
    window.addEventListener(
      type,
      function () {
        userMoved = true;
      },
      { once: true, passive: true, capture: true }
    );
  });

  var initial = idFromHash();
  if (initial !== null) {
    openEntry(initial, true, false);
    // At load the browser jumps to the fragment again, measured before entries are drawn: redo ours.
    window.addEventListener("load", function () {
      var entry = entryById.get(initial);
      if (entry && !userMoved && idFromHash() === initial) {
        scrollToElement(entry);
      }
    });
  }
})();
