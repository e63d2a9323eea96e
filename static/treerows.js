/* sitegen session page: a long page's tree rows, drawn a window at a time. The page holds the first rows;
   the rest come as raw text (one row's markup a line), and only the rows near the sidebar's view are in
   the page: laying out tens of thousands of rows was most of what opening the page cost. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var doc = document;
  var page = window.sitegen.page;
  var treeNav = doc.getElementById("tree");
  var source = doc.getElementById("tree-rows");
  var list = treeNav ? treeNav.querySelector("ol.tree") : null;
  if (!page || !source || !list) {
    return;
  }
  // Rows drawn beyond each edge of the sidebar's view, so a scroll seldom finds an edge.
  var SPARE = 60;
  var ROW_START = /^<li class="([^"]*)" data-id="([^"]*)"/;
  // The text a row shows, from its markup (the same function find uses on deferred entries).
  var plainText = window.sitegen.chunks.plainText;

  // Per row, in display order: its id, its classes as the page wrote them, and its markup until it is
  // made into an element (kept from then on, with the marks the page gave it).
  var ids = [];
  var classes = [];
  var markup = [];
  var elements = [];
  var indexOf = new Map();

  function add(id, cls, html, element) {
    indexOf.set(id, ids.length);
    ids.push(id);
    classes.push(" " + cls + " ");
    markup.push(html);
    elements.push(element);
  }

  var first = list.querySelectorAll(":scope > li[data-id]");
  for (var f = 0; f < first.length; f++) {
    add(first[f].getAttribute("data-id"), first[f].className, null, first[f]);
  }
  var lines = source.textContent.split("\n");
  for (var l = 0; l < lines.length; l++) {
    var head = ROW_START.exec(lines[l]);
    if (head) {
      add(plainText(head[2]), head[1], lines[l], null);
    }
  }
  source.remove();
  lines = null;

  var maker = doc.createElement("template");

  function element(index) {
    var made = elements[index];
    if (!made) {
      maker.innerHTML = markup[index];
      made = maker.content.firstElementChild;
      // The page wrote the default branch's marks: give it the shown one's.
      made.classList.toggle("on-path", page.isShown(ids[index]));
      elements[index] = made;
      markup[index] = null;
      // From now on the page keeps its marks (on-path) as it does the first rows'.
      page.rowById.set(ids[index], made);
    }
    return made;
  }

  // The text the tree's filter looks in, as the row's textContent would give it.
  function text(index) {
    return elements[index] ? elements[index].textContent : plainText(markup[index]);
  }

  // ---- The window: the rows shown (by the view filter and the typed words) and which of them are drawn ----

  var shown = [];
  var placeOf = new Map();
  var drawnFrom = 0;
  var drawnTo = 0;
  var rowHeight = 0;

  // Rows are one line each: their height is measured once from drawn rows.
  function measure() {
    if (!rowHeight && list.firstElementChild) {
      var rows = list.children;
      var height = (rows[rows.length - 1].getBoundingClientRect().bottom - rows[0].getBoundingClientRect().top) / rows.length;
      if (height > 0) {
        rowHeight = height;
      }
    }
    return rowHeight || 20;
  }

  function listTop() {
    return list.getBoundingClientRect().top - treeNav.getBoundingClientRect().top + treeNav.scrollTop;
  }

  function draw(force) {
    var height = measure();
    // Fewer rows shown than the view went down to (words typed while scrolled down): draw the last ones,
    // and the browser brings the scroll back to the shorter list's end.
    var top = Math.min(treeNav.scrollTop - listTop(), Math.max(0, shown.length * height - treeNav.clientHeight));
    var from = Math.max(0, Math.floor(top / height) - SPARE / 2);
    var to = Math.min(shown.length, Math.ceil((top + treeNav.clientHeight) / height) + SPARE / 2);
    if (!force && from >= drawnFrom && to <= drawnTo) {
      return;
    }
    drawnFrom = Math.max(0, from - SPARE / 2);
    drawnTo = Math.min(shown.length, to + SPARE / 2);
    var fragment = doc.createDocumentFragment();
    for (var i = drawnFrom; i < drawnTo; i++) {
      fragment.appendChild(element(shown[i]));
    }
    list.replaceChildren(fragment);
    // Padding stands for the rows not drawn, so the scroll bar spans the whole tree.
    list.style.paddingTop = drawnFrom * height + "px";
    list.style.paddingBottom = (shown.length - drawnTo) * height + "px";
  }

  var queued = false;
  treeNav.addEventListener(
    "scroll",
    function () {
      if (!queued) {
        queued = true;
        window.requestAnimationFrame(function () {
          queued = false;
          draw(false);
        });
      }
    },
    { passive: true }
  );

  // The rows to show, by index in display order: the tree draws those near its view.
  function show(indices) {
    shown = indices;
    placeOf = new Map();
    for (var i = 0; i < shown.length; i++) {
      placeOf.set(shown[i], i);
    }
    draw(true);
  }

  // Scroll the sidebar (only) so the row is in its view, a third down; false if the row is not shown.
  function reveal(index, always) {
    var place = placeOf.get(index);
    if (place === undefined || treeNav.hidden) {
      return false;
    }
    var top = listTop() + place * measure() - treeNav.scrollTop;
    if (always || top < 40 || top > treeNav.clientHeight - 40) {
      treeNav.scrollTop = Math.max(0, treeNav.scrollTop + top - treeNav.clientHeight / 3);
    }
    draw(false);
    return true;
  }

  treeNav.classList.add("virtual");
  var all = [];
  for (var a = 0; a < ids.length; a++) {
    all.push(a);
  }
  shown = all;
  for (var p = 0; p < shown.length; p++) {
    placeOf.set(p, p);
  }
  drawnTo = first.length;

  window.sitegen.treeRows = {
    count: ids.length,
    id: function (index) {
      return ids[index];
    },
    hasClass: function (index, name) {
      return classes[index].indexOf(" " + name + " ") !== -1;
    },
    text: text,
    indexOf: function (id) {
      var index = indexOf.get(id);
      return index === undefined ? -1 : index;
    },
    element: element,
    show: show,
    reveal: reveal,
  };
})();
