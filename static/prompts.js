/* Prompts page: filter every prompt as you type (words, project, dates) and show them as you scroll. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var form = document.getElementById("prompt-filter");
  if (!form) {
    return;
  }
  var input = document.getElementById("prompt-query");
  var projectSelect = document.getElementById("prompt-project");
  var fromInput = document.getElementById("prompt-from");
  var toInput = document.getElementById("prompt-to");
  var status = document.getElementById("prompt-status");
  var list = document.getElementById("prompt-list");
  var more = document.getElementById("prompt-more");
  var indexUrl = form.getAttribute("data-index");
  var base = indexUrl.slice(0, indexUrl.lastIndexOf("/") + 1);

  // Must match sitegen/site/search/index.py (terms, shard buckets), sitegen/site/prompts/data.py (term
  // shards) and sitegen/site/prompts/page.py;
  // token lengths, CJK ranges and case folds come from static/search-spec.json (assets/search-spec.js).
  var SPEC = window.sitegen.searchSpec;
  var RUN = /[\p{L}\p{N}]+/gu;
  var CJK_CHARACTERS = SPEC.cjk_ranges
    .map(function (range) {
      return "\\u{" + range[0].toString(16) + "}-\\u{" + range[1].toString(16) + "}";
    })
    .join("");
  var FOLDED = new RegExp("[" + Object.keys(SPEC.folds).join("") + "]", "gu");
  var CJK_SPLIT = new RegExp("([" + CJK_CHARACTERS + "]+)", "u");
  var FOLD_LINES = 6;
  var FOLD_CHARS = 600;
  // Prompts put into the page at a time, as the reader nears the end of the list.
  var BATCH = 100;
  var DEBOUNCE_MS = 80;

  // ---- Data scripts: each calls window.sitegen.prompts.add(id, data) (no fetch: works from file://) ----

  var files = window.sitegen.data.loader();
  var load = files.load;
  window.sitegen.prompts = { add: files.add };

  function loadChunk(index, number) {
    var name = index.chunks[number];
    return load(base + "c/" + name + ".js", "c:" + name);
  }

  function loadShard(name) {
    return name ? load(base + "t/" + name + ".js", "t:" + name) : Promise.resolve({});
  }

  // ---- The index: per prompt, newest first, its slot, time and project ----

  function sums(deltas) {
    var out = new Array(deltas.length);
    var total = 0;
    for (var i = 0; i < deltas.length; i++) {
      total += deltas[i];
      out[i] = total;
    }
    return out;
  }

  function prepare(data) {
    return {
      size: data.size,
      segment: data.segment,
      chunks: data.chunks,
      firsts: data.firsts,
      order: sums(data.order),
      times: sums(data.times),
      projects: data.projects,
      project: data.project,
      segments: data.segments
    };
  }

  // ---- Words: the terms of the site's search, each word matched from its start ----

  function bucket(term, buckets) {
    var first = term.codePointAt(0);
    var second = term.length > (first > 0xffff ? 2 : 1) ? term.codePointAt(first > 0xffff ? 2 : 1) : 0;
    return (first * 31 + second) % buckets;
  }

  // Each query word becomes its terms: a word as a prefix, a CJK run as its pairs (or its one character).
  function queryWords(query) {
    var words = [];
    var found;
    var lowered = query.toLowerCase().replace(FOLDED, function (character) {
      return SPEC.folds[character];
    });
    RUN.lastIndex = 0;
    while ((found = RUN.exec(lowered)) !== null) {
      found[0].split(CJK_SPLIT).forEach(function (piece, number) {
        var chars = Array.from(piece);
        if (!chars.length) {
          return;
        }
        if (number % 2 === 0) {
          if (chars.length >= SPEC.token_min) {
            words.push({ text: piece, prefix: true });
          }
        } else if (chars.length === 1) {
          words.push({ text: piece, prefix: false });
        } else {
          for (var i = 0; i + 1 < chars.length; i++) {
            words.push({ text: chars[i] + chars[i + 1], prefix: false });
          }
        }
      });
    }
    return words;
  }

  // A term's prompts in one segment: their numbers in it ("3,17,40"; from 1, chunk after chunk of
  // index.size places), as sitegen/site/prompts/data.py exports them from FTS5.
  function decode(code, segmentNumber, index, into) {
    var before = segmentNumber * index.segment * index.size - 1;
    var numbers = code.split(",");
    for (var i = 0; i < numbers.length; i++) {
      into.add(before + +numbers[i]);
    }
  }

  // The slots holding a word (as a prefix, or whole), over every segment.
  function slotsOf(index, word) {
    return Promise.all(
      index.segments.map(function (segment) {
        return loadShard(segment[1][bucket(word.text, segment[0])]);
      })
    ).then(function (shards) {
      var found = new Set();
      shards.forEach(function (shard, segmentNumber) {
        Object.keys(shard).forEach(function (term) {
          if (word.prefix ? term.lastIndexOf(word.text, 0) === 0 : term === word.text) {
            decode(shard[term], segmentNumber, index, found);
          }
        });
      });
      return found;
    });
  }

  function matchingSlots(index, words) {
    return Promise.all(
      words.map(function (word) {
        return slotsOf(index, word);
      })
    ).then(function (sets) {
      sets.sort(function (a, b) {
        return a.size - b.size;
      });
      var result = new Set();
      sets[0].forEach(function (value) {
        for (var i = 1; i < sets.length; i++) {
          if (!sets[i].has(value)) {
            return;
          }
        }
        result.add(value);
      });
      return result;
    });
  }

  // ---- Filtering ----

  function dayStart(value, end) {
    if (!value) {
      return null;
    }
    var time = Date.parse(value + "T00:00:00Z");
    return isNaN(time) ? null : time / 1000 + (end ? 86399 : 0);
  }

  function filtered(index, bySlot) {
    var project = projectSelect.value === "" ? -1 : Number(projectSelect.value);
    var from = dayStart(fromInput.value, false);
    var to = dayStart(toInput.value, true);
    var out = [];
    for (var i = 0; i < index.order.length; i++) {
      if (project >= 0 && index.project[i] !== project) {
        continue;
      }
      if (from !== null || to !== null) {
        var time = i < index.times.length ? index.times[i] : null;
        if (time === null || (from !== null && time < from) || (to !== null && time > to)) {
          continue;
        }
      }
      if (bySlot && !bySlot.has(index.order[i])) {
        continue;
      }
      out.push(i);
    }
    return out;
  }

  // ---- Rendering, the same markup as templates/prompts.html.j2 ----

  function isoOf(seconds) {
    return new Date(seconds * 1000).toISOString();
  }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) {
      node.className = className;
    }
    if (text !== undefined) {
      node.textContent = text;
    }
    return node;
  }

  function promptItem(row) {
    // [anchor, time, folder, project url, session url, session title, uses, text, length]
    var item = element("li", "prompt");
    item.id = "entry-" + row[0];
    var meta = element("p", "prompt-meta");
    var dated = row[1] !== null;
    var time = element("a", "prompt-time", dated ? isoOf(row[1]).slice(11, 16) : "no time");
    time.href = "#entry-" + row[0];
    if (dated) {
      var iso = isoOf(row[1]);
      time.title = iso.slice(0, 10) + " " + iso.slice(11, 19) + " UTC";
    }
    meta.appendChild(time);
    if (row[2]) {
      var project = element("a", "prompt-project", row[2]);
      if (row[3]) {
        project.href = row[3];
      }
      meta.append(" ", project);
    }
    if (row[6] !== null && row[6] > 1) {
      meta.append(" ", element("span", "prompt-uses", "used " + row[6] + " times"));
    }
    if (row[4]) {
      var session = element("a", "prompt-session", row[5] || "session");
      session.href = row[4];
      meta.append(" ", session);
    } else if (row[5]) {
      // A session the site has no page for, named by history.db's session_titles.
      meta.append(" ", element("span", "prompt-session", row[5]));
    }
    item.appendChild(meta);
    var text = row[7];
    var folded = text.length > FOLD_CHARS || text.split("\n").length > FOLD_LINES;
    item.appendChild(element("pre", "prompt-text" + (folded ? " folded" : ""), text));
    if (row[8] > text.length) {
      var rest = (row[8] - text.length).toLocaleString("en");
      item.appendChild(element("p", "prompt-cut muted", "… " + rest + " more characters are in the history store."));
    }
    if (folded) {
      item.appendChild(element("button", "prompt-unfold", "Show all")).type = "button";
    }
    return item;
  }

  function dayOf(index, number) {
    return number < index.times.length ? isoOf(index.times[number]).slice(0, 10) : "No date";
  }

  function append(index, number, row) {
    var day = dayOf(index, number);
    var section = list.lastElementChild;
    if (!section || section.getAttribute("data-day") !== day) {
      section = element("section", "prompt-day");
      section.setAttribute("data-day", day);
      section.appendChild(element("h2", "", day));
      section.appendChild(element("ol", "prompts"));
      list.appendChild(section);
    }
    section.lastElementChild.appendChild(promptItem(row));
  }

  // ---- The list as it is shown: which prompts match, how many are in the page ----

  var state = null;
  var ticket = 0;

  function rowOf(index, chunks, number) {
    var slotNumber = index.order[number];
    return chunks[Math.floor(slotNumber / index.size)][slotNumber % index.size];
  }

  function showMore() {
    var shown = state;
    if (!shown || shown.busy || shown.next >= shown.matches.length) {
      return Promise.resolve();
    }
    shown.busy = true;
    var batch = shown.matches.slice(shown.next, shown.next + BATCH);
    var needed = [];
    batch.forEach(function (number) {
      var chunk = Math.floor(shown.index.order[number] / shown.index.size);
      if (needed.indexOf(chunk) < 0) {
        needed.push(chunk);
      }
    });
    return Promise.all(
      needed.map(function (chunk) {
        return loadChunk(shown.index, chunk);
      })
    ).then(function (loaded) {
      shown.busy = false;
      if (shown !== state) {
        return;
      }
      var chunks = {};
      needed.forEach(function (chunk, i) {
        chunks[chunk] = loaded[i];
      });
      batch.forEach(function (number) {
        append(shown.index, number, rowOf(shown.index, chunks, number));
      });
      shown.next += batch.length;
      fillScreen();
    });
  }

  // Keep adding while the end of the list is near the screen (the observer fires only on changes).
  function fillScreen() {
    if (state && state.next < state.matches.length && more.getBoundingClientRect().top < innerHeight + 800) {
      showMore();
    }
  }

  function describe(count, total, filtering) {
    var of = total.toLocaleString("en");
    if (!filtering) {
      return count === 1 ? "1 prompt." : "All " + of + " prompts, newest first.";
    }
    if (count === 0) {
      return "No prompt matches.";
    }
    return count.toLocaleString("en") + " of " + of + " prompts match, newest first.";
  }

  function show(index, matches, message, keepRendered) {
    state = { index: index, matches: matches, next: keepRendered || 0, busy: false };
    if (!keepRendered) {
      list.replaceChildren();
    }
    // The page's own prompts are there already: more only when the reader nears their end. The
    // status changes once the first prompts it counts are in the page.
    var mine = state;
    return (keepRendered ? Promise.resolve() : showMore()).then(function () {
      if (mine === state) {
        status.textContent = message;
        fillScreen();
      }
    });
  }

  function apply(index) {
    var mine = ++ticket;
    var words = queryWords(input.value);
    var filtering = words.length > 0 || projectSelect.value !== "" || fromInput.value || toInput.value;
    var typedOneLetter = !words.length && /[\p{L}\p{N}]/u.test(input.value);
    var bySlot = words.length ? matchingSlots(index, words) : Promise.resolve(null);
    return bySlot.then(function (found) {
      if (mine !== ticket) {
        return;
      }
      var matches = filtered(index, found);
      var message = describe(matches.length, index.order.length, filtering);
      if (typedOneLetter) {
        message += " Type at least two letters of a word.";
      }
      return show(index, matches, message, 0);
    });
  }

  // A link to one prompt (#entry-p<store>-<id>, from the site's search) shows that prompt.
  function focusHash(index) {
    var match = /^#entry-(p[0-9a-f]+)-(\d+)$/.exec(location.hash);
    if (!match || document.getElementById(location.hash.slice(1))) {
      return Promise.resolve(false);
    }
    var id = Number(match[2]);
    var chunk = -1;
    index.firsts.forEach(function (first, number) {
      if (first[0] === match[1] && first[1] <= id) {
        chunk = number;
      }
    });
    if (chunk < 0) {
      return Promise.resolve(false);
    }
    return loadChunk(index, chunk).then(function (rows) {
      var place = rows.findIndex(function (row) {
        return row[0] === match[1] + "-" + id;
      });
      var number = index.order.indexOf(chunk * index.size + place);
      if (place < 0 || number < 0) {
        return false;
      }
      return show(index, [number], "One prompt, from a link; filter to see the others.", 0).then(function () {
        var target = document.getElementById(location.hash.slice(1));
        if (target) {
          target.scrollIntoView();
        }
        return true;
      });
    });
  }

  function fillProjects(index) {
    var counts = new Array(index.projects.length).fill(0);
    index.project.forEach(function (number) {
      if (number >= 0) {
        counts[number]++;
      }
    });
    index.projects.forEach(function (project, number) {
      var option = element("option", "", project[0] + " (" + counts[number].toLocaleString("en") + ")");
      option.value = String(number);
      projectSelect.appendChild(option);
    });
  }

  list.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest(".prompt-unfold") : null;
    if (!button) {
      return;
    }
    var text = button.parentNode.querySelector(".prompt-text");
    var open = text.classList.toggle("folded") === false;
    button.textContent = open ? "Show less" : "Show all";
  });

  var unfold = list.querySelectorAll(".prompt-unfold");
  for (var u = 0; u < unfold.length; u++) {
    unfold[u].hidden = false;
  }

  load(indexUrl, "index")
    .then(prepare)
    .then(function (index) {
      form.hidden = false;
      fillProjects(index);
      var timer = 0;
      function later() {
        clearTimeout(timer);
        timer = setTimeout(function () {
          apply(index);
        }, DEBOUNCE_MS);
      }
      input.addEventListener("input", later);
      [projectSelect, fromInput, toInput].forEach(function (control) {
        control.addEventListener("change", function () {
          apply(index);
        });
      });
      form.addEventListener("submit", function (event) {
        event.preventDefault();
      });
      window.addEventListener("hashchange", function () {
        focusHash(index);
      });
      if ("IntersectionObserver" in window) {
        new IntersectionObserver(fillScreen, { rootMargin: "800px" }).observe(more);
      }
      window.addEventListener("scroll", fillScreen, { passive: true });
      // The page holds the newest prompts already: keep them and add the rest as the reader scrolls.
      var rendered = list.querySelectorAll(".prompt").length;
      var all = index.order.map(function (_, i) {
        return i;
      });
      return focusHash(index).then(function (focused) {
        if (!focused) {
          return show(index, all, describe(all.length, all.length, false), rendered);
        }
      });
    })
    .catch(function (error) {
      status.textContent = "The prompts' data could not be loaded (" + error.message + ").";
    });
})();
