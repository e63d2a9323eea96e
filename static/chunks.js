/* sitegen session page: a long page ships its entries past the first screen as raw text, which the browser
   only scans, so the page shows and answers at once. The chunks go into the page in the background, and
   at once where the reader goes: a link or tree row (its own chunk), find and print (all of them). */
(function () {
  "use strict";

  var doc = document;
  var conversation = doc.getElementById("conversation");
  var linksElement = doc.getElementById("entry-links");
  var pending = conversation
    ? Array.prototype.slice.call(conversation.querySelectorAll('script[type="text/x-sitegen-entries"]'))
    : [];
  // [[id, parent id], ...] of every entry, in display order (only on long pages).
  var links = linksElement ? JSON.parse(linksElement.textContent) : null;
  var positionOf = new Map();
  if (links) {
    for (var i = 0; i < links.length; i++) {
      positionOf.set(links[i][0], i);
    }
  }

  // Put one chunk in the page where its script stands; tell the page which entries arrived.
  function materialize(script) {
    var index = pending.indexOf(script);
    if (index < 0) {
      return;
    }
    pending.splice(index, 1);
    var template = doc.createElement("template");
    template.innerHTML = script.textContent;
    var added = Array.prototype.slice.call(template.content.querySelectorAll("[data-parent]"));
    script.replaceWith(template.content);
    doc.dispatchEvent(new CustomEvent("sitegen:chunks", { detail: { added: added, complete: !pending.length } }));
  }

  // The chunk holding the entry at a place in display order: the last one starting at or before it.
  function chunkAt(position) {
    var found = null;
    for (var i = 0; i < pending.length; i++) {
      if (Number(pending[i].getAttribute("data-at")) <= position) {
        found = pending[i];
      }
    }
    return found;
  }

  // Make sure an entry is in the page. A tool result sits inside its call's message, which may have
  // ended the chunk before the one its place names: that one comes too when needed.
  function ensure(id) {
    if (!pending.length || !positionOf.has(id) || doc.getElementById("entry-" + id)) {
      return;
    }
    var position = positionOf.get(id);
    var chunk = chunkAt(position);
    if (chunk) {
      materialize(chunk);
    }
    while (!doc.getElementById("entry-" + id) && position > 0 && (chunk = chunkAt(--position))) {
      materialize(chunk);
    }
  }

  function all() {
    while (pending.length) {
      materialize(pending[0]);
    }
  }

  // In the background, a chunk at a time when the browser is idle, top of the page first.
  var idle =
    window.requestIdleCallback ||
    function (callback) {
      return window.setTimeout(callback, 16);
    };

  function step() {
    if (pending.length) {
      materialize(pending[0]);
      idle(step, { timeout: 250 });
    }
  }

  if (pending.length) {
    window.addEventListener("load", function () {
      idle(step, { timeout: 250 });
    });
    // Printing shows every entry.
    window.addEventListener("beforeprint", all);
  }

  window.sitegenChunks = {
    links: links,
    ensure: ensure,
    all: all,
    complete: function () {
      return pending.length === 0;
    },
  };
})();
