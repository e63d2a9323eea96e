/* sitegen session page, the core: entries and their paths, branch switching, deep links, filters,
   folding, copy links and print. Feature modules (tree, outline, context, find, images) use
   window.sitegen.page and the events it sends: sitegen:view, sitegen:path, sitegen:open, sitegen:inview. */
window.sitegen = window.sitegen || {};
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

  function announce(name, detail) {
    doc.dispatchEvent(new CustomEvent(name, { detail: detail }));
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

  // Entries and tool results: the elements with a parent link; their ids are "entry-" + entry id.
  // A long page holds only its first entries at first (chunks.js); its links name every entry.
  var entryEls = conversation ? conversation.querySelectorAll("[data-parent]") : [];
  var chunks = window.sitegen.chunks || null;
  var links = chunks && chunks.links;
  for (var i = 0; i < entryEls.length; i++) {
    entryById.set(entryIdOf(entryEls[i]), entryEls[i]);
  }
  var rowEls = treeNav ? treeNav.querySelectorAll("li[data-id]") : [];
  for (var r = 0; r < rowEls.length; r++) {
    rowById.set(rowEls[r].getAttribute("data-id"), rowEls[r]);
  }
  // The conversation lists entries depth first with children in timestamp order (as the tree does),
  // so the last child seen of each entry is its newest. Tools-only messages have no tree row.
  function link(id, parentId) {
    parentOf.set(id, parentId);
    if (parentId) {
      newestChild.set(parentId, id);
    }
  }
  if (links) {
    for (var l = 0; l < links.length; l++) {
      link(links[l][0], links[l][1]);
    }
  } else {
    for (var k = 0; k < entryEls.length; k++) {
      link(entryIdOf(entryEls[k]), entryEls[k].getAttribute("data-parent") || "");
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

  // What the page shows at first: the path to the default leaf (the server marked the rest off-path).
  pathTo(defaultLeaf).forEach(function (id) {
    shown.add(id);
  });

  // Entries a long page puts in later: they carry the default path's marks, so give them the shown one's.
  doc.addEventListener("sitegen:chunks", function (event) {
    var added = event.detail.added;
    for (var a = 0; a < added.length; a++) {
      var id = entryIdOf(added[a]);
      entryById.set(id, added[a]);
      added[a].classList.toggle("off-path", !shown.has(id));
    }
  });

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
    // "Context kept after compaction" marks: each belongs to the branch holding its compaction.
    var keptMarks = conversation ? conversation.querySelectorAll(".kept-mark[data-compaction]") : [];
    for (var m = 0; m < keptMarks.length; m++) {
      keptMarks[m].classList.toggle("kept-elsewhere", !shown.has(keptMarks[m].getAttribute("data-compaction")));
    }
    // The live server's reload script reads this to bring the reader back to the same branch.
    body.setAttribute("data-leaf", leaf);
    announce("sitegen:path", { leaf: leaf });
    viewChanged();
  }

  // ---- Navigation: tree clicks, deep links and the back button ----

  var landing = window.sitegen.landing;

  // What a jump lands on: a tool's result is shown inside its call, so the call's card is the target.
  function landingOf(entry) {
    var card = entry.classList.contains("tool-result") ? entry.closest(".tool") : null;
    return card || entry;
  }

  function openEntry(id, keepPath, fromTree) {
    if (chunks) {
      chunks.ensure(id);
    }
    var entry = entryById.get(id);
    if (!entry) {
      return;
    }
    if (!(keepPath && shown.has(id))) {
      showPath(newestLeafBelow(id));
    }
    announce("sitegen:open", { id: id, fromTree: !!fromTree });
    // A filter that hides the target would make the jump look broken: show everything instead.
    if (!entry.getClientRects().length) {
      setFilter("all");
    }
    landing.land(landingOf(entry), 1500);
  }

  // Open a branch at a given entry: show the path to leaf, then scroll to where the branch starts.
  function openBranch(leaf, start) {
    if (chunks) {
      chunks.ensure(start);
    }
    showPath(leaf);
    var entry = entryById.get(start) || entryById.get(leaf);
    if (entry) {
      announce("sitegen:open", { id: start, fromTree: false });
      if (!entry.getClientRects().length) {
        setFilter("all");
      }
      landing.land(landingOf(entry), 1500);
    }
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

  // A tree row's click: open its entry and put it in the address, without the hashchange redoing it.
  function openFromTree(id) {
    openEntry(id, false, true);
    var hash = "#entry-" + encodeURIComponent(id);
    if (window.location.hash !== hash) {
      hashFromTree = id;
      window.location.hash = hash;
    }
  }

  window.addEventListener("hashchange", function () {
    var id = idFromHash();
    if (id !== null && id === hashFromTree) {
      hashFromTree = null;
    } else if (id !== null) {
      openEntry(id, true, false);
    }
  });

  // ---- Filters ----

  var filterButtons = doc.querySelectorAll("button.filter[data-filter]");

  function currentFilter() {
    var name = "default";
    body.classList.forEach(function (cls) {
      if (cls.indexOf("filter-") === 0) {
        name = cls.slice("filter-".length);
      }
    });
    return name;
  }

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

  var keys = window.sitegen.keys;
  if (keys) {
    keys.add("t", "Open or close every thinking block", function () {
      if (thinkingButton) {
        toggleAll(THINKING, thinkingButton);
      }
    });
    keys.add("o", "Open or close every folded tool output", function () {
      if (toolsButton) {
        toggleAll(TOOL_OUTPUT, toolsButton);
      }
    });
    keys.add("/", "Find in page", function () {
      if (findInput) {
        findInput.focus();
      }
    });
  }

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

  // ---- The entry in view: sampled under the toolbar as the reader scrolls, one frame at a time ----

  var inView = "";
  var inViewQueued = false;
  var toolbar = doc.querySelector(".toolbar");

  function entryInView() {
    if (!conversation) {
      return "";
    }
    var box = conversation.getBoundingClientRect();
    var top = (toolbar ? toolbar.getBoundingClientRect().bottom : 0) + 24;
    var x = box.left + Math.min(40, box.width / 2);
    for (var y = top; y < window.innerHeight; y += 48) {
      var hit = doc.elementFromPoint(x, y);
      var entry = hit && hit.closest ? hit.closest("[data-parent]") : null;
      if (entry && conversation.contains(entry)) {
        return entryIdOf(entry);
      }
    }
    return "";
  }

  function updateInView() {
    inViewQueued = false;
    var id = entryInView();
    if (id && id !== inView) {
      inView = id;
      announce("sitegen:inview", { id: id });
    }
  }

  window.addEventListener(
    "scroll",
    function () {
      if (!inViewQueued) {
        inViewQueued = true;
        window.requestAnimationFrame(updateInView);
      }
    },
    { passive: true }
  );

  // The page's core, for the feature modules.
  window.sitegen.page = {
    copyText: copyText,
    scrollSettled: landing.scrollSettled,
    scrollToElement: landing.scrollToElement,
    entryById: entryById,
    parentOf: parentOf,
    rowById: rowById,
    entryIdOf: entryIdOf,
    pathTo: function (leaf) {
      return pathTo(leaf).reverse();
    },
    shownLeaf: function () {
      return shownLeaf;
    },
    isShown: function (id) {
      return shown.has(id);
    },
    showPath: showPath,
    openEntry: openEntry,
    openFromTree: openFromTree,
    openBranch: openBranch,
    newestLeafBelow: newestLeafBelow,
    setFilter: setFilter,
    currentFilter: currentFilter,
    entryInView: function () {
      return inView || entryInView();
    },
    readerMoved: landing.readerMoved,
    moves: landing.moves,
  };

  // ---- Start: a deep link opens the path through its entry ----

  var initial = idFromHash();
  function openInitial() {
    openEntry(initial, true, false);
    // A first load draws the most entries: hold a deep link's target longer.
    landing.holdFor(3000);
  }
  if (initial !== null) {
    // Once every module's script has run, so that each hears sitegen:open (the tree marks the row).
    if (doc.readyState === "loading") {
      doc.addEventListener("DOMContentLoaded", openInitial, { once: true });
    } else {
      openInitial();
    }
    // At load the browser jumps to the fragment again, measured before entries are drawn: redo ours.
    window.addEventListener("load", function () {
      var entry = entryById.get(initial);
      if (entry && !landing.readerMoved() && landing.holding() && idFromHash() === initial) {
        landing.scrollToElement(landingOf(entry), true);
      }
    });
  }
})();
