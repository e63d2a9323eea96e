/* sitegen session page: the words of a site search (?q=) marked where the reader lands, with n and N
   stepping between the marks, opening folded parts on the way, and a button to clear them. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var doc = document;
  var conversation = doc.getElementById("conversation");
  var query = "";
  try {
    query = new URLSearchParams(window.location.search).get("q") || "";
  } catch (error) {
    query = "";
  }
  var page = window.sitegen.page;
  if (!conversation || !page || !query.trim()) {
    return;
  }

  // More marks than this cost more than they help; stepping goes through the first ones.
  var MAX_MARKS = 5000;
  var WORD = /[\p{L}\p{N}]/u;
  var CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;
  var SKIP = { SCRIPT: 1, STYLE: 1, TEXTAREA: 1, BUTTON: 1, MARK: 1 };

  // Words as the site search splits them: runs of letters and digits, two or more (one for CJK).
  var words = [];
  (query.toLowerCase().match(/[\p{L}\p{N}]+/gu) || []).forEach(function (word) {
    if ((word.length >= 2 || CJK.test(word)) && words.indexOf(word) < 0) {
      words.push(word);
    }
  });
  if (!words.length) {
    return;
  }
  // Longest first, so that "tests" is marked whole where both "test" and "tests" were asked for.
  words.sort(function (a, b) {
    return b.length - a.length;
  });
  var pattern = new RegExp(
    words
      .map(function (word) {
        return word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      })
      .join("|"),
    "giu"
  );

  var marks = [];
  var current = -1;
  var opened = [];

  // A word matches at the start of a word (the search matches whole words, and the last as a beginning);
  // CJK text has no spaces between words, so there it matches anywhere.
  function startsWord(text, index, found) {
    return index === 0 || CJK.test(found.charAt(0)) || !WORD.test(text.charAt(index - 1));
  }

  function markText(node) {
    var text = node.nodeValue;
    pattern.lastIndex = 0;
    var pieces = null;
    var cursor = 0;
    for (var found = pattern.exec(text); found; found = pattern.exec(text)) {
      if (!startsWord(text, found.index, found[0])) {
        continue;
      }
      pieces = pieces || doc.createDocumentFragment();
      pieces.appendChild(doc.createTextNode(text.slice(cursor, found.index)));
      var mark = doc.createElement("mark");
      mark.className = "search-mark";
      mark.textContent = found[0];
      pieces.appendChild(mark);
      cursor = found.index + found[0].length;
    }
    if (pieces) {
      pieces.appendChild(doc.createTextNode(text.slice(cursor)));
      node.parentNode.replaceChild(pieces, node);
    }
  }

  function markWithin(root) {
    var walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: function (node) {
        for (var up = node.parentNode; up && up !== root.parentNode; up = up.parentNode) {
          if (SKIP[up.tagName]) {
            return NodeFilter.FILTER_REJECT;
          }
        }
        return NodeFilter.FILTER_ACCEPT;
      },
    });
    var nodes = [];
    for (var node = walker.nextNode(); node; node = walker.nextNode()) {
      nodes.push(node);
    }
    nodes.forEach(markText);
  }

  function markEntries() {
    if (marks.length >= MAX_MARKS) {
      return;
    }
    var entries = conversation.querySelectorAll("[data-parent]:not([data-marked])");
    for (var i = 0; i < entries.length; i++) {
      entries[i].setAttribute("data-marked", "");
    }
    for (var j = 0; j < entries.length; j++) {
      // A result nested in its call's card was marked with the card.
      if (!entries[j].parentNode.closest("[data-marked][data-parent]")) {
        markWithin(entries[j]);
      }
    }
    var currentMark = marks[current];
    marks = Array.prototype.slice.call(conversation.querySelectorAll("mark.search-mark"), 0, MAX_MARKS);
    current = currentMark ? marks.indexOf(currentMark) : current;
    updateStatus();
  }

  // ---- The status in the toolbar: what is marked, where the reader is, and a way out ----

  var status = doc.createElement("span");
  status.id = "search-marks";
  status.className = "search-marks";
  status.setAttribute("role", "status");
  var label = doc.createElement("span");
  label.className = "search-marks-text";
  status.appendChild(label);

  function button(text, title, action) {
    var element = doc.createElement("button");
    element.type = "button";
    element.textContent = text;
    element.title = title;
    element.addEventListener("click", action);
    status.appendChild(element);
    return element;
  }

  button("↑", "Previous marked word (N)", function () {
    step(-1);
  });
  button("↓", "Next marked word (n)", function () {
    step(1);
  });
  button("×", "Clear the marks", clear);

  function updateStatus() {
    var count = marks.length >= MAX_MARKS ? MAX_MARKS + "+" : String(marks.length);
    var where = current >= 0 ? current + 1 + " of " + count : count + (marks.length === 1 ? " mark" : " marks");
    label.textContent = "“" + query.trim() + "”: " + where;
  }

  var findStatus = doc.getElementById("find-status");
  var toolbar = doc.querySelector(".toolbar");
  if (findStatus && findStatus.parentNode) {
    findStatus.parentNode.insertBefore(status, findStatus.nextSibling);
  } else if (toolbar) {
    toolbar.appendChild(status);
  }

  // ---- Stepping ----

  function closeOpened(keep) {
    opened = opened.filter(function (details) {
      if (keep && details.contains(keep)) {
        return true;
      }
      details.open = false;
      return false;
    });
  }

  function reveal(mark) {
    closeOpened(mark);
    for (var node = mark.parentNode; node && node !== conversation; node = node.parentNode) {
      if (node.tagName === "DETAILS" && !node.open) {
        node.open = true;
        opened.push(node);
      }
    }
    return mark.getClientRects().length > 0;
  }

  function setCurrent(index, scroll) {
    if (marks[current]) {
      marks[current].classList.remove("current");
    }
    current = index;
    var mark = marks[current];
    mark.classList.add("current");
    updateStatus();
    if (scroll) {
      page.scrollSettled(function () {
        return mark.getBoundingClientRect().top - window.innerHeight / 3;
      });
    }
  }

  // The next mark the reader can see (not on another branch or hidden by a filter).
  function step(direction) {
    if (!marks.length) {
      return;
    }
    var start = current < 0 ? (direction > 0 ? -1 : 0) : current;
    for (var tries = 0; tries < marks.length; tries++) {
      var index = (start + direction * (tries + 1) + marks.length * (tries + 2)) % marks.length;
      if (reveal(marks[index])) {
        setCurrent(index, true);
        return;
      }
    }
    closeOpened(null);
  }

  function clear() {
    closeOpened(null);
    marks.forEach(function (mark) {
      var parent = mark.parentNode;
      if (parent) {
        parent.replaceChild(doc.createTextNode(mark.textContent), mark);
        parent.normalize();
      }
    });
    marks = [];
    current = -1;
    if (status.parentNode) {
      status.parentNode.removeChild(status);
    }
    try {
      var url = new URL(window.location.href);
      url.searchParams.delete("q");
      window.history.replaceState(window.history.state, "", url.href);
    } catch (error) {
      // A file:// page may refuse; the marks are gone all the same.
    }
    doc.dispatchEvent(new Event("sitegen:view"));
  }

  if (window.sitegen.keys) {
    window.sitegen.keys.add("n", "Next word of the search that opened this page", function () {
      step(1);
    });
    window.sitegen.keys.add("N", "Previous word of that search", function () {
      step(-1);
    });
  }

  function outOfView(mark) {
    var box = mark.getBoundingClientRect();
    return box.top < 0 || box.bottom > window.innerHeight;
  }

  function landAgain() {
    var mark = marks[current];
    if (mark && !page.readerMoved() && outOfView(mark)) {
      setCurrent(current, true);
    }
  }

  markEntries();
  // The reader lands on the entry the result named, at its first mark (a folded part opened for it).
  var target = window.location.hash.indexOf("#entry-") === 0 ? decodeURIComponent(window.location.hash.slice(7)) : "";
  var entry = target ? page.entryById.get(target) : null;
  if (entry) {
    for (var i = 0; i < marks.length; i++) {
      if (entry.contains(marks[i]) && reveal(marks[i])) {
        setCurrent(i, outOfView(marks[i]));
        // page.js lands on the entry again at load (the browser's own jump came first): then ours.
        window.addEventListener("load", landAgain);
        break;
      }
    }
  }
  doc.addEventListener("sitegen:chunks", markEntries);
})();
