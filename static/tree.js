/* sitegen session page: the sidebar. Tree rows open their entry, the tree filters as you type and
   follows the view filters and the reading position; branch links switch branches; tabs and the
   phone drawer show one panel at a time. A long page's rows are drawn a window at a time (treerows.js):
   the filtering below then works on its records, not on elements. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var doc = document;
  var body = doc.body;
  var page = window.sitegen.page;
  var sidebar = doc.getElementById("sidebar");
  var treeNav = doc.getElementById("tree");
  if (!page || !sidebar || !treeNav) {
    return;
  }
  // A long page's rows (treerows.js), else the rows in the page.
  var virtualRows = window.sitegen.treeRows || null;
  var rows = virtualRows ? null : treeNav.querySelectorAll("li[data-id]");
  var rowCount = virtualRows ? virtualRows.count : rows.length;
  var search = doc.getElementById("tree-search");
  var count = doc.getElementById("tree-count");
  var branchList = doc.getElementById("branches");
  var drawerButton = doc.getElementById("toggle-sidebar");
  var currentRow = null;
  var inViewRow = null;
  var narrow = window.matchMedia("(max-width: 900px)");

  // ---- Panels: tabs on every screen, a drawer over the page on narrow ones ----

  var tabs = sidebar.querySelectorAll("[role=tab]");

  function selectTab(tab) {
    for (var i = 0; i < tabs.length; i++) {
      var on = tabs[i] === tab;
      tabs[i].setAttribute("aria-selected", String(on));
      var panel = doc.getElementById(tabs[i].getAttribute("aria-controls"));
      if (panel) {
        panel.hidden = !on;
      }
    }
  }

  for (var t = 0; t < tabs.length; t++) {
    tabs[t].addEventListener("click", function (event) {
      selectTab(event.currentTarget);
    });
  }

  function setDrawer(open) {
    body.classList.toggle("sidebar-open", open);
    if (drawerButton) {
      drawerButton.setAttribute("aria-expanded", String(open));
    }
  }

  if (drawerButton) {
    drawerButton.addEventListener("click", function () {
      setDrawer(!body.classList.contains("sidebar-open"));
    });
  }
  var closeButton = sidebar.querySelector(".close-sidebar");
  if (closeButton) {
    closeButton.addEventListener("click", function () {
      setDrawer(false);
    });
  }
  // A tap beside the open drawer, or Esc, closes it.
  doc.addEventListener("click", function (event) {
    if (body.classList.contains("sidebar-open") && !sidebar.contains(event.target) &&
        !(drawerButton && drawerButton.contains(event.target))) {
      setDrawer(false);
    }
  });
  doc.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && body.classList.contains("sidebar-open")) {
      setDrawer(false);
    }
  });

  // On a phone the drawer covers the page: a jump closes it so the reader sees where they landed.
  function closeDrawerIfNarrow() {
    if (narrow.matches) {
      setDrawer(false);
    }
  }

  // ---- Marks: the row last opened, and the row of the entry in view ----

  // An entry without a row of its own (a message that only calls tools) is shown by the row before it.
  function rowOf(id) {
    if (virtualRows) {
      var index = virtualRows.indexOf(id);
      return index < 0 ? null : virtualRows.element(index);
    }
    return page.rowById.get(id) || null;
  }

  function rowFor(id) {
    var guard = 64;
    while (id && guard-- > 0) {
      var row = rowOf(id);
      if (row) {
        return row;
      }
      var entry = page.entryById.get(id);
      var next = entry && entry.querySelector(".tool-result[data-parent]");
      id = next ? page.entryIdOf(next) : page.parentOf.get(id);
    }
    return null;
  }

  function reveal(row) {
    if (row && virtualRows) {
      virtualRows.reveal(virtualRows.indexOf(row.getAttribute("data-id")), false);
      return;
    }
    // Scroll the sidebar only: scrollIntoView would also move the page.
    if (!row || treeNav.hidden || treeNav.scrollHeight <= treeNav.clientHeight) {
      return;
    }
    var top = row.getBoundingClientRect().top - treeNav.getBoundingClientRect().top;
    if (top < 40 || top > treeNav.clientHeight - 40) {
      treeNav.scrollTop = Math.max(0, treeNav.scrollTop + top - treeNav.clientHeight / 3);
    }
  }

  doc.addEventListener("sitegen:open", function (event) {
    if (currentRow) {
      currentRow.classList.remove("current");
      currentRow.removeAttribute("aria-current");
    }
    currentRow = rowFor(event.detail.id);
    if (currentRow) {
      currentRow.classList.add("current");
      currentRow.setAttribute("aria-current", "true");
      if (!event.detail.fromTree) {
        reveal(currentRow);
      }
    }
  });

  doc.addEventListener("sitegen:inview", function (event) {
    var row = rowFor(event.detail.id);
    if (row === inViewRow) {
      return;
    }
    if (inViewRow) {
      inViewRow.classList.remove("in-view");
    }
    inViewRow = row;
    if (row) {
      row.classList.add("in-view");
      if (!treeNav.matches(":hover")) {
        reveal(row);
      }
    }
  });

  treeNav.addEventListener("click", function (event) {
    var row = event.target.closest("li[data-id]");
    // Modified clicks keep their usual meaning (new tab, new window).
    if (!row || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) {
      return;
    }
    event.preventDefault();
    page.openFromTree(row.getAttribute("data-id"));
    closeDrawerIfNarrow();
  });

  // ---- Branches: a link per leaf switches to its branch and shows where it starts ----

  if (branchList) {
    var branchItems = branchList.querySelectorAll("a[data-leaf]");
    var markShownBranch = function (leaf) {
      for (var i = 0; i < branchItems.length; i++) {
        var item = branchItems[i].parentElement;
        var on = page.isShown(branchItems[i].getAttribute("data-leaf"));
        item.classList.toggle("shown", on && page.shownLeaf() === leaf);
      }
    };
    doc.addEventListener("sitegen:path", function (event) {
      markShownBranch(event.detail.leaf);
    });
    branchList.addEventListener("click", function (event) {
      var link = event.target.closest("a[data-leaf]");
      if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) {
        return;
      }
      event.preventDefault();
      var start = link.getAttribute("href").slice("#entry-".length);
      page.openBranch(link.getAttribute("data-leaf"), decodeURIComponent(start));
      closeDrawerIfNarrow();
    });
  }

  // ---- Filtering: the view filters (as page.css applies them) and the words typed ----

  // Mirrors page.css's "#tree" filter rules, so the count says what the reader sees.
  // `has(i, name)`: whether row i has a class (the row's own, or a long page's record of it).
  function allowedByFilter(has, i, filter) {
    if (filter === "all") {
      return true;
    }
    if (filter === "labelled") {
      return has(i, "labelled");
    }
    if (has(i, "kind-custom") || has(i, "kind-label") || has(i, "is-hidden")) {
      return false;
    }
    if (filter === "user") {
      return has(i, "kind-user");
    }
    if (filter === "no-tools") {
      return !(has(i, "kind-tool") || has(i, "kind-tool_result") || has(i, "kind-execution"));
    }
    return true;
  }

  function elementHas(i, name) {
    return rows[i].classList.contains(name);
  }

  var hasClass = virtualRows ? virtualRows.hasClass : elementHas;

  function rowId(i) {
    return virtualRows ? virtualRows.id(i) : rows[i].getAttribute("data-id");
  }

  var rowTexts = null;
  var firstMatch = null;

  function wordsOf(text) {
    return text.toLowerCase().split(/\s+/).filter(Boolean);
  }

  function applyFilter() {
    var words = search ? wordsOf(search.value) : [];
    var filter = page.currentFilter();
    if (words.length && rowTexts === null) {
      rowTexts = [];
      // A failed step is found by the word too: its mark is only a colour and a sign.
      for (var r = 0; r < rowCount; r++) {
        var failed = hasClass(r, "failed") ? " failed" : "";
        rowTexts.push((virtualRows ? virtualRows.text(r) : rows[r].textContent).toLowerCase() + failed);
      }
    }
    var shown = 0;
    var matched = 0;
    var drawn = [];
    firstMatch = null;
    for (var i = 0; i < rowCount; i++) {
      var allowed = allowedByFilter(hasClass, i, filter);
      var match = true;
      for (var w = 0; w < words.length && match; w++) {
        match = rowTexts[i].indexOf(words[w]) !== -1;
      }
      if (!virtualRows) {
        rows[i].classList.toggle("no-match", !match);
      }
      if (allowed) {
        shown++;
        if (match) {
          matched++;
          firstMatch = firstMatch === null ? rowId(i) : firstMatch;
          drawn.push(i);
        }
      }
    }
    // A long page's tree draws only the rows it shows.
    if (virtualRows) {
      virtualRows.show(drawn);
    }
    treeNav.classList.toggle("searching", words.length > 0);
    if (count) {
      // Typed words: matches of the rows the filter shows; a filter alone: its rows of all rows.
      if (words.length) {
        count.textContent = matched + " of " + shown;
      } else {
        count.textContent = shown === rowCount ? String(shown) : shown + " of " + rowCount;
      }
    }
  }

  if (search) {
    search.addEventListener("input", applyFilter);
    search.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && firstMatch !== null) {
        event.preventDefault();
        page.openFromTree(firstMatch);
        closeDrawerIfNarrow();
      } else if (event.key === "Escape") {
        search.value = "";
        applyFilter();
      }
    });
  }
  doc.addEventListener("sitegen:view", applyFilter);
  // A long page's tree draws the rows the view filter shows from the start (the count as the page wrote it).
  if (virtualRows) {
    var filterAtStart = page.currentFilter();
    var startRows = [];
    for (var s = 0; s < rowCount; s++) {
      if (allowedByFilter(hasClass, s, filterAtStart)) {
        startRows.push(s);
      }
    }
    virtualRows.show(startRows);
  }

  window.sitegen.tree = { selectTab: selectTab, setDrawer: setDrawer };
})();
