/* sitegen session page: a long page ships its entries past the first screen as raw text, which the browser
   only scans, so the page shows and answers at once. The chunks go into the page in the background, and
   at once where the reader goes: a link or tree row (its own chunk), find (those holding a match) and
   print (all of them). */
window.sitegen = window.sitegen || {};
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
    texts.delete(script);
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

  // The text of a chunk as the page would show it: its markup without tags, the entities our escaping
  // writes decoded: to tell whether a chunk can hold a match, and (treerows.js) what a far tree row says.
  var ENTITY = /&(?:#(\d+)|#x([0-9a-fA-F]+)|(amp|lt|gt|quot|apos|nbsp));/g;
  var NAMED = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

  function decodeEntity(whole, decimal, hex, name) {
    if (name) {
      return NAMED[name];
    }
    var code = parseInt(decimal || hex, decimal ? 10 : 16);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  }

  function plainText(html) {
    return html.replace(/<[^>]*>/g, "").replace(ENTITY, decodeEntity);
  }

  // Each chunk's text, made at the first search and kept for the next ones (typing goes on after a
  // pause): making it from the markup is most of what a search of the chunks costs.
  var texts = new Map();

  function textOf(script) {
    var text = texts.get(script);
    if (text === undefined) {
      text = plainText(script.textContent);
      texts.set(script, text);
    }
    return text;
  }

  // Put in the chunks whose text matches `pattern` (find): the others cannot hold a match, so a search
  // of a long page builds only what it finds instead of every entry.
  function withText(pattern) {
    var matching = pending.filter(function (script) {
      pattern.lastIndex = 0;
      return pattern.test(textOf(script));
    });
    matching.forEach(materialize);
    return matching.length;
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

  // A chunk going in above what the reader looks at would push it down: the view moves with it.
  function materializeKeepingView(script) {
    // The first thing after it with a box (the chunks still to come have none).
    var after = script.nextElementSibling;
    while (after && after.tagName === "SCRIPT") {
      after = after.nextElementSibling;
    }
    var top = after ? after.getBoundingClientRect().top : Infinity;
    materialize(script);
    if (after && top < window.innerHeight) {
      var moved = after.getBoundingClientRect().top - top;
      if (moved) {
        window.scrollBy(0, moved);
      }
    }
  }

  function step() {
    if (pending.length) {
      materializeKeepingView(pending[0]);
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

  window.sitegen.chunks = {
    links: links,
    plainText: plainText,
    ensure: ensure,
    withText: withText,
    all: all,
    complete: function () {
      return pending.length === 0;
    },
  };
})();
