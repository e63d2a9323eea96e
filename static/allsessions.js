/* sitegen All sessions page: every session of the site, newest first, filtered by words, and drawn a
   page of rows at a time as the reader scrolls (2,000 sessions never cost 2,000 rows at once). */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var doc = document;
  var table = doc.getElementById("all-sessions");
  var input = doc.getElementById("all-filter");
  var count = doc.getElementById("all-count");
  var more = doc.getElementById("all-more");
  if (!table || !input || !window.sitegen.sessions) {
    return;
  }
  var PAGE = 100;
  var body = table.tBodies[0];
  var root = table.getAttribute("data-src").replace(/[^/]*$/, "");
  var sessions = [];
  var matches = [];
  var drawn = 0;
  var sentinel = doc.createElement("p");
  sentinel.className = "all-sentinel";
  table.after(sentinel);

  function pad(n) {
    return n < 10 ? "0" + n : String(n);
  }

  function minute(ms) {
    if (!ms) {
      return "";
    }
    var d = new Date(ms);
    return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + " " +
      pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes());
  }

  function element(tag, className, text) {
    var node = doc.createElement(tag);
    if (className) {
      node.className = className;
    }
    if (text !== undefined) {
      node.textContent = text;
    }
    return node;
  }

  function row(item) {
    var tr = doc.createElement("tr");
    var cell = element("td", "session-cell");
    var link = element("a", "session-title", item.title);
    link.href = root + item.url;
    link.title = item.title;
    cell.appendChild(link);
    var meta = element("div", "session-meta");
    var project = element("a", "session-project", item.project);
    project.href = root + "projects/" + encodeURIComponent(item.projectSlug) + ".html";
    meta.appendChild(project);
    item.models.forEach(function (model) {
      meta.appendChild(doc.createTextNode(" · "));
      meta.appendChild(element("span", "model", model));
    });
    if (item.family !== "pi") {
      meta.appendChild(doc.createTextNode(" "));
      meta.appendChild(element("span", "badge", item.family));
    }
    cell.appendChild(meta);
    tr.appendChild(cell);
    var when = element("td", "when last", minute(item.modified));
    tr.appendChild(when);
    tr.appendChild(element("td", "opt", String(item.messages)));
    // A session that recorded no usage (odek's) has no cost to show: "—", as the server writes it.
    tr.appendChild(element("td", "opt", item.cost === null ? "\u2014" : "$" + item.cost.toFixed(2)));
    return tr;
  }

  function drawMore() {
    var fragment = doc.createDocumentFragment();
    var end = Math.min(matches.length, drawn + PAGE);
    for (var i = drawn; i < end; i++) {
      fragment.appendChild(row(matches[i]));
    }
    drawn = end;
    body.appendChild(fragment);
  }

  function haystack(item) {
    if (!item.text) {
      item.text = [item.title, item.project, item.models.join(" "), item.family].join(" ").toLowerCase();
    }
    return item.text;
  }

  function filter() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    matches = words.length
      ? sessions.filter(function (item) {
          var text = haystack(item);
          return words.every(function (word) {
            return text.indexOf(word) >= 0;
          });
        })
      : sessions;
    body.textContent = "";
    drawn = 0;
    drawMore();
    var total = sessions.length.toLocaleString("en");
    count.textContent = words.length ? matches.length.toLocaleString("en") + " of " + total + " sessions" : total + " sessions";
  }

  window.sitegen.sessions.load(table.getAttribute("data-src")).then(function (list) {
    sessions = list;
    matches = list;
    drawn = body.rows.length;
    input.disabled = false;
    if (more) {
      more.hidden = true;
    }
    input.addEventListener("input", filter);
    input.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && input.value) {
        input.value = "";
        filter();
      }
    });
    if (input.value) {
      filter();
    }
    // The next page of rows when the end of the table comes near.
    new IntersectionObserver(
      function (seen) {
        if (seen[0].isIntersecting && drawn < matches.length) {
          drawMore();
        }
      },
      { rootMargin: "600px" }
    ).observe(sentinel);
  });
})();
