/* sitegen index pages: sortable and filterable tables. */
(function () {
  "use strict";

  var doc = document;
  var root = doc.documentElement;
  root.classList.remove("no-js");

  // ---- Sorting: click a header; text starts A-Z, numbers and dates start with the largest ----

  var collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

  function cellKey(cell, kind) {
    if (!cell) {
      return kind === "text" ? "" : null;
    }
    var raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent.trim();
    if (kind === "text") {
      return raw;
    }
    if (kind === "date" && !/^-?\d+(\.\d+)?$/.test(raw)) {
      var time = Date.parse(raw);
      return isNaN(time) ? null : time;
    }
    // Cells such as "$1,234.50" or "12k" without data-value still sort by their leading number.
    var number = parseFloat(raw.replace(/[^0-9eE.+-]/g, ""));
    return isNaN(number) ? null : number;
  }

  function compareKeys(a, b, kind) {
    if (kind === "text") {
      return collator.compare(a, b);
    }
    // Cells without a value go last whichever way the column is sorted.
    if (a === null || b === null) {
      return a === b ? 0 : a === null ? 1 : -1;
    }
    return a - b;
  }

  function sortTable(table, header, descending) {
    var body = table.tBodies[0];
    if (!body) {
      return;
    }
    var kind = header.getAttribute("data-sort") || "text";
    var column = header.cellIndex;
    var rows = Array.prototype.slice.call(body.rows).map(function (row, index) {
      return { row: row, key: cellKey(row.cells[column], kind), index: index };
    });
    rows.sort(function (x, y) {
      var order = compareKeys(x.key, y.key, kind);
      if (order !== 0 && x.key !== null && y.key !== null) {
        order = descending ? -order : order;
      }
      // Equal keys keep their current order: sorting by a second column refines the first.
      return order || x.index - y.index;
    });
    var fragment = doc.createDocumentFragment();
    rows.forEach(function (item) {
      fragment.appendChild(item.row);
    });
    body.appendChild(fragment);
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell) {
      if (cell === header) {
        cell.setAttribute("aria-sort", descending ? "descending" : "ascending");
      } else if (cell.hasAttribute("aria-sort")) {
        cell.removeAttribute("aria-sort");
      }
    });
  }

  function makeSortable(table) {
    if (!table.tHead || !table.tHead.rows.length) {
      return;
    }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header) {
      if (!header.hasAttribute("data-sort")) {
        return;
      }
      // A real button makes the header reachable and usable from the keyboard.
      var button = doc.createElement("button");
      button.type = "button";
      button.className = "sort-button";
      while (header.firstChild) {
        button.appendChild(header.firstChild);
      }
      header.appendChild(button);
      button.addEventListener("click", function () {
        var state = header.getAttribute("aria-sort");
        var descending;
        if (state === "ascending") {
          descending = true;
        } else if (state === "descending") {
          descending = false;
        } else {
          descending = header.getAttribute("data-sort") !== "text";
        }
        sortTable(table, header, descending);
      });
    });
  }

  Array.prototype.forEach.call(doc.querySelectorAll("table.sortable"), makeSortable);

  // ---- Filtering: every word typed must appear in the row's text ----

  function countLabel(counter) {
    if (!counter.hasAttribute("data-noun")) {
      // The page's own text, "12 sessions", names what is counted.
      var match = /^\s*[\d,]+\s+(.*?)\s*$/.exec(counter.textContent);
      counter.setAttribute("data-noun", match ? match[1] : "");
    }
    return counter.getAttribute("data-noun");
  }

  function filterTable(input) {
    var table = doc.getElementById(input.getAttribute("data-table"));
    if (!table || !table.tBodies[0]) {
      return;
    }
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var rows = table.tBodies[0].rows;
    var shown = 0;
    Array.prototype.forEach.call(rows, function (row) {
      var text = row.textContent.toLowerCase();
      var match = words.every(function (word) {
        return text.indexOf(word) >= 0;
      });
      row.hidden = !match;
      if (match) {
        shown += 1;
      }
    });
    var counters = doc.querySelectorAll("[data-count-for]");
    Array.prototype.forEach.call(counters, function (counter) {
      if (counter.getAttribute("data-count-for") !== table.id) {
        return;
      }
      var noun = countLabel(counter);
      var text = words.length ? shown + " of " + rows.length : String(rows.length);
      counter.textContent = noun ? text + " " + noun : text;
    });
  }

  Array.prototype.forEach.call(doc.querySelectorAll("input.table-filter[data-table]"), function (input) {
    input.addEventListener("input", function () {
      filterTable(input);
    });
    input.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && input.value) {
        input.value = "";
        filterTable(input);
      }
    });
    // The browser may restore a typed filter when the user comes back to the page.
    if (input.value) {
      filterTable(input);
    }
  });
})();
