/* sitegen session page: find in page, over the shown entries, collapsed parts included. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var doc = document;
  var body = doc.body;
  var conversation = doc.getElementById("conversation");
  var findInput = doc.getElementById("find");
  var findStatus = doc.getElementById("find-status");

  var highlights = window.CSS && CSS.highlights && typeof Highlight === "function" ? CSS.highlights : null;
  // Painting more marks than this costs more than it helps; the count stays exact.
  var MAX_MARKED = 2000;
  // Text in these stays inside its block's line, so a match may cross their boundaries.
  var INLINE = {
    A: 1, ABBR: 1, B: 1, BR: 1, CODE: 1, DEL: 1, EM: 1, I: 1, INS: 1, KBD: 1, MARK: 1, Q: 1, S: 1,
    SAMP: 1, SMALL: 1, SPAN: 1, STRONG: 1, SUB: 1, SUP: 1, TIME: 1, U: 1, VAR: 1,
  };
  var SEPARATOR = "\u0001";
  var findIndex = null;
  var matches = [];
  var currentMatch = -1;
  var openedByFind = [];
  var searchTimer = 0;
  var searchedFor = "";

  function findIsStale() {
    findIndex = null;
    if (findInput && findInput.value) {
      runSearch(false);
    }
  }

  // What stays hidden inside a shown entry: mirrors the filter and branch rules in page.css.
  function hiddenInside(element) {
    var tag = element.tagName;
    if (tag === "BUTTON" || tag === "SCRIPT" || tag === "STYLE" || tag === "TEXTAREA") {
      return true;
    }
    if (element.classList.contains("off-path")) {
      return true;
    }
    return body.classList.contains("filter-no-tools") && element.classList.contains("tool");
  }

  function indexEntry(entry) {
    var unit = { root: entry, nodes: [], starts: [], text: "" };
    var parts = [];
    var length = 0;
    var lastBlock = null;
    var walker = doc.createTreeWalker(entry, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode: function (node) {
        if (node.nodeType === 3) {
          return NodeFilter.FILTER_ACCEPT;
        }
        return hiddenInside(node) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP;
      },
    });
    for (var node = walker.nextNode(); node; node = walker.nextNode()) {
      var value = node.nodeValue;
      if (!value) {
        continue;
      }
      var block = node.parentNode;
      while (block !== entry && INLINE[block.tagName]) {
        block = block.parentNode;
      }
      if (lastBlock !== null && block !== lastBlock) {
        parts.push(SEPARATOR);
        length += 1;
      }
      lastBlock = block;
      unit.nodes.push(node);
      unit.starts.push(length);
      parts.push(value);
      length += value.length;
    }
    unit.text = parts.join("");
    return unit;
  }

  function buildIndex() {
    var units = [];
    // The closed sections under the header first: the system prompt and tool list are text the model saw.
    var headerParts = doc.querySelectorAll(
      ".page-details details.system-prompt, .page-details details.tool-list, .page-details details.buffer"
    );
    for (var h = 0; h < headerParts.length; h++) {
      var part = indexEntry(headerParts[h]);
      if (part.text) {
        units.push(part);
      }
    }
    if (!conversation) {
      return units;
    }
    var entries = conversation.children;
    var visible = [];
    // All layout reads first, then the text walk: no style work interleaved with reads.
    for (var i = 0; i < entries.length; i++) {
      var entry = entries[i];
      if (entry.hasAttribute("data-parent") && !entry.classList.contains("off-path") && entry.getClientRects().length) {
        visible.push(entry);
      }
    }
    for (var v = 0; v < visible.length; v++) {
      var unit = indexEntry(visible[v]);
      if (unit.text) {
        units.push(unit);
      }
    }
    return units;
  }

  function escapeRegExp(text) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }

  function nodeAt(unit, offset) {
    var low = 0;
    var high = unit.starts.length - 1;
    while (low < high) {
      var mid = (low + high + 1) >> 1;
      if (unit.starts[mid] <= offset) {
        low = mid;
      } else {
        high = mid - 1;
      }
    }
    return low;
  }

  function rangeOf(match) {
    var unit = match.unit;
    var first = nodeAt(unit, match.start);
    var last = nodeAt(unit, match.end - 1);
    var range = doc.createRange();
    range.setStart(unit.nodes[first], match.start - unit.starts[first]);
    range.setEnd(unit.nodes[last], match.end - unit.starts[last]);
    return range;
  }

  function setStatus(text) {
    if (findStatus) {
      findStatus.textContent = text;
    }
  }

  function clearMarks() {
    if (highlights) {
      highlights.delete("find-match");
      highlights.delete("find-current");
    }
  }

  function closeOpenedByFind(keep) {
    var still = [];
    for (var i = 0; i < openedByFind.length; i++) {
      if (keep && openedByFind[i].contains(keep)) {
        still.push(openedByFind[i]);
      } else {
        openedByFind[i].open = false;
      }
    }
    openedByFind = still;
  }

  function runSearch(jump) {
    window.clearTimeout(searchTimer);
    searchTimer = 0;
    var query = findInput.value;
    searchedFor = query;
    clearMarks();
    matches = [];
    currentMatch = -1;
    if (!query) {
      closeOpenedByFind(null);
      setStatus("");
      return;
    }
    var pattern = new RegExp(escapeRegExp(query), "gi");
    // A long page puts its later entries in as it goes: those not in yet that hold a match come in now
    // (and make the index stale); the rest cannot match.
    if (window.sitegen.chunks && !window.sitegen.chunks.complete()) {
      window.sitegen.chunks.withText(new RegExp(escapeRegExp(query), "i"));
    }
    if (findIndex === null) {
      findIndex = buildIndex();
    }
    for (var u = 0; u < findIndex.length; u++) {
      var unit = findIndex[u];
      pattern.lastIndex = 0;
      for (var found = pattern.exec(unit.text); found; found = pattern.exec(unit.text)) {
        matches.push({ unit: unit, start: found.index, end: found.index + found[0].length });
      }
    }
    if (!matches.length) {
      closeOpenedByFind(null);
      setStatus("no matches");
      return;
    }
    paintMatches();
    if (jump) {
      goToMatch(0);
    } else {
      setStatus(matches.length === 1 ? "1 match" : matches.length + " matches");
    }
  }

  function paintMatches() {
    if (highlights) {
      var marked = new Highlight();
      for (var m = 0; m < matches.length && m < MAX_MARKED; m++) {
        marked.add(rangeOf(matches[m]));
      }
      highlights.set("find-match", marked);
    }
  }

  // highlight.js colours a long page's later code as it comes into view: the same text in new nodes.
  // The entries it coloured are indexed again and the marks painted on their new nodes.
  function followColouring(event) {
    var root = event.detail.root;
    var seen = new Set();
    var changed = false;
    for (var m = 0; m < matches.length; m++) {
      var unit = matches[m].unit;
      if (seen.has(unit)) {
        continue;
      }
      seen.add(unit);
      if (root.contains(unit.root) || unit.root.contains(root)) {
        var fresh = indexEntry(unit.root);
        if (fresh.text !== unit.text) {
          findIsStale();
          return;
        }
        unit.nodes = fresh.nodes;
        unit.starts = fresh.starts;
        changed = true;
      }
    }
    if (changed) {
      paintMatches();
      if (highlights && currentMatch >= 0) {
        highlights.set("find-current", new Highlight(rangeOf(matches[currentMatch])));
      }
    }
  }

  function goToMatch(index) {
    currentMatch = (index + matches.length) % matches.length;
    var range = rangeOf(matches[currentMatch]);
    var start = range.startContainer;
    closeOpenedByFind(start);
    for (var node = start.parentNode; node && node !== conversation; node = node.parentNode) {
      if (node.tagName === "DETAILS" && !node.open) {
        node.open = true;
        openedByFind.push(node);
      }
    }
    if (highlights) {
      highlights.set("find-current", new Highlight(range));
    } else {
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    }
    window.sitegen.page.scrollSettled(function () {
      return range.getBoundingClientRect().top - window.innerHeight / 3;
    });
    setStatus(currentMatch + 1 + " of " + matches.length);
  }

  function step(backwards) {
    if (searchTimer || searchedFor !== findInput.value || (findIndex === null && findInput.value)) {
      runSearch(false);
    }
    if (!matches.length) {
      return;
    }
    if (currentMatch < 0) {
      goToMatch(backwards ? matches.length - 1 : 0);
    } else {
      goToMatch(currentMatch + (backwards ? -1 : 1));
    }
  }

  if (findInput) {
    findInput.addEventListener("input", function () {
      window.clearTimeout(searchTimer);
      // Wait for a pause in typing: each search walks every shown entry's text.
      searchTimer = window.setTimeout(function () {
        runSearch(true);
      }, 200);
    });
    findInput.addEventListener("keydown", function (event) {
      if (event.key === "Enter") {
        event.preventDefault();
        step(event.shiftKey);
      } else if (event.key === "Escape") {
        event.preventDefault();
        findInput.value = "";
        runSearch(false);
      }
    });
  }

  // page.js says when the shown branch or the filter changes.
  doc.addEventListener("sitegen:view", findIsStale);
  doc.addEventListener("sitegen:chunks", function () {
    findIndex = null;
  });
  doc.addEventListener("sitegen:highlighted", followColouring);
})();
