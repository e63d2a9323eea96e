/* sitegen session page: the totals of the shown branch (messages, tool calls, tokens, cost), kept in
   step with branch switches. Figures are formatted as sitegen/render/page.py formats them. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var doc = document;
  var page = window.sitegen.page;
  var defaultLeaf = doc.body.getAttribute("data-default-leaf") || "";

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

  // ---- Branch stats in the header: messages, tool calls, tokens and cost of the shown path ----

  var statCells = doc.querySelectorAll("td.branch-stat[data-stat]");
  var serverStats = [];
  for (var s = 0; s < statCells.length; s++) {
    serverStats.push(statCells[s].textContent);
  }

  function updateStats(path) {
    var texts = serverStats;
    // The server's own figures for the default path avoid any float drift from re-adding costs.
    if (page.shownLeaf() !== defaultLeaf) {
      var messages = 0;
      var calls = 0;
      var usage = [0, 0, 0, 0, 0];
      var known = false;
      for (var i = 0; i < path.length; i++) {
        var entry = page.entryById.get(path[i]);
        if (!entry) {
          continue;
        }
        if (entry.classList.contains("kind-user") || entry.classList.contains("kind-assistant")) {
          messages++;
        }
        calls += Number(entry.getAttribute("data-calls")) || 0;
        var recorded = entry.getAttribute("data-usage");
        known = known || recorded !== null;
        var fields = (recorded || "").split(" ");
        for (var f = 0; f < 5 && f < fields.length; f++) {
          usage[f] += Number(fields[f]) || 0;
        }
      }
      // No message on the path recorded its usage: unknown, as the server says ("—"), not zero.
      texts = [
        groupThousands(messages),
        groupThousands(calls),
        known ? formatTokens(usage[0]) : "\u2014",
        known ? formatTokens(usage[1]) : "\u2014",
        known ? formatTokens(usage[2]) : "\u2014",
        known ? formatTokens(usage[3]) : "\u2014",
        known ? "$" + usage[4].toFixed(4) : "\u2014",
      ];
    }
    for (var c = 0; c < statCells.length; c++) {
      var index = Number(statCells[c].getAttribute("data-stat"));
      if (texts[index] !== undefined) {
        statCells[c].textContent = texts[index];
      }
    }
  }

  // The outline formats its figures the same way.
  window.sitegen.format = { tokens: formatTokens, thousands: groupThousands };

  if (page && statCells.length) {
    doc.addEventListener("sitegen:path", function (event) {
      updateStats(page.pathTo(event.detail.leaf));
    });
    // A long page's later entries arrive as it goes: count them once all are in.
    doc.addEventListener("sitegen:chunks", function (event) {
      if (event.detail.complete) {
        updateStats(page.pathTo(page.shownLeaf()));
      }
    });
  }
})();
