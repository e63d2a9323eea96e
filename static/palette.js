/* sitegen site: Ctrl+K opens a palette (#palette) that finds sessions across the site by the words of
   their titles and opens the chosen one with Enter; on a session page, ] and [ go to the next and
   previous session of its project, in the project page's order. Only on the site's pages (body
   data-site names the site's root): an exported page has no site to go to. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var doc = document;
  var site = doc.body.getAttribute("data-site");
  if (site === null || !window.sitegen.sessions) {
    return;
  }
  var SHOWN = 50;
  var dataUrl = site + "sessions.js";
  var dialog = null;
  var input = null;
  var list = null;
  var results = [];
  var chosen = 0;

  function load() {
    return window.sitegen.sessions.load(dataUrl);
  }

  function pageUrl(item) {
    return new URL(site + item.url, window.location.href).href;
  }

  // ---- Finding: every word must start a word of the title (or the project's name) ----

  function wordsOf(text) {
    return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) || [];
  }

  function score(item, words) {
    if (!item.words) {
      item.words = wordsOf(item.title);
      item.projectWords = wordsOf(item.project);
    }
    var total = 0;
    for (var w = 0; w < words.length; w++) {
      var word = words[w];
      var best = 0;
      for (var t = 0; t < item.words.length; t++) {
        var candidate = item.words[t];
        if (candidate === word) {
          best = 3;
          break;
        }
        if (best < 2 && candidate.indexOf(word) === 0) {
          best = 2;
        } else if (best < 1 && candidate.indexOf(word) > 0) {
          best = 1;
        }
      }
      if (!best && item.projectWords.some(function (p) { return p.indexOf(word) === 0; })) {
        best = 1;
      }
      if (!best) {
        return 0;
      }
      total += best;
    }
    return total;
  }

  function find(sessions, query) {
    var words = wordsOf(query);
    if (!words.length) {
      return sessions.slice(0, SHOWN);
    }
    var found = [];
    sessions.forEach(function (item, index) {
      var value = score(item, words);
      if (value) {
        found.push({ item: item, value: value, index: index });
      }
    });
    // Better matches first; equal ones newest first, as the list is.
    found.sort(function (a, b) {
      return b.value - a.value || a.index - b.index;
    });
    return found.slice(0, SHOWN).map(function (entry) {
      return entry.item;
    });
  }

  // ---- The dialog ----

  function build() {
    dialog = doc.createElement("dialog");
    dialog.id = "palette";
    dialog.setAttribute("aria-label", "Go to a session");
    input = doc.createElement("input");
    input.type = "search";
    input.id = "palette-input";
    input.placeholder = "Session title words";
    input.setAttribute("aria-label", "Session title words");
    input.setAttribute("role", "combobox");
    input.setAttribute("aria-controls", "palette-results");
    input.setAttribute("aria-expanded", "true");
    input.autocomplete = "off";
    list = doc.createElement("ul");
    list.id = "palette-results";
    list.setAttribute("role", "listbox");
    var hint = doc.createElement("p");
    hint.className = "palette-hint";
    hint.textContent = "↑ ↓ choose · Enter opens · Esc closes";
    dialog.appendChild(input);
    dialog.appendChild(list);
    dialog.appendChild(hint);
    doc.body.appendChild(dialog);
    input.addEventListener("input", update);
    input.addEventListener("keydown", function (event) {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        choose(chosen + (event.key === "ArrowDown" ? 1 : -1));
      } else if (event.key === "Enter") {
        event.preventDefault();
        open(results[chosen]);
      }
    });
    list.addEventListener("click", function (event) {
      var option = event.target.closest("[role=option]");
      if (option) {
        event.preventDefault();
        open(results[Number(option.getAttribute("data-index"))]);
      }
    });
    dialog.addEventListener("click", function (event) {
      if (event.target === dialog) {
        dialog.close();
      }
    });
  }

  function choose(index) {
    if (!results.length) {
      return;
    }
    chosen = (index + results.length) % results.length;
    Array.prototype.forEach.call(list.children, function (option, at) {
      option.setAttribute("aria-selected", at === chosen ? "true" : "false");
      if (at === chosen) {
        input.setAttribute("aria-activedescendant", option.id);
        option.scrollIntoView({ block: "nearest" });
      }
    });
  }

  function update() {
    load().then(function (sessions) {
      results = find(sessions, input.value);
      list.textContent = "";
      results.forEach(function (item, index) {
        var option = doc.createElement("li");
        option.id = "palette-option-" + index;
        option.setAttribute("role", "option");
        option.setAttribute("data-index", String(index));
        var link = doc.createElement("a");
        link.href = pageUrl(item);
        link.tabIndex = -1;
        link.textContent = item.title;
        var project = doc.createElement("span");
        project.className = "palette-project";
        project.textContent = item.project;
        option.appendChild(link);
        option.appendChild(project);
        list.appendChild(option);
      });
      if (!results.length) {
        var none = doc.createElement("li");
        none.className = "palette-none";
        none.textContent = "No session title has these words.";
        list.appendChild(none);
      }
      choose(0);
    });
  }

  function open(item) {
    if (item) {
      window.location.href = pageUrl(item);
    }
  }

  function show() {
    if (!dialog) {
      build();
    }
    if (!dialog.open) {
      dialog.showModal();
    }
    input.select();
    update();
  }

  doc.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && (event.key === "k" || event.key === "K")) {
      event.preventDefault();
      show();
    }
  });

  // ---- Next and previous session of this project (session pages) ----

  var keys = window.sitegen.keys;
  if (!keys || !doc.getElementById("conversation")) {
    return;
  }

  var status = null;
  function say(text) {
    if (!status) {
      status = doc.createElement("p");
      status.id = "session-step";
      status.setAttribute("role", "status");
      doc.body.appendChild(status);
    }
    status.textContent = text;
    status.hidden = false;
    window.clearTimeout(status._timer);
    status._timer = window.setTimeout(function () {
      status.hidden = true;
    }, 2500);
  }

  function step(by) {
    load().then(
      function (sessions) {
        var here = window.location.href.split("#")[0].split("?")[0];
        var at = -1;
        for (var i = 0; i < sessions.length; i++) {
          if (pageUrl(sessions[i]) === here) {
            at = i;
            break;
          }
        }
        if (at < 0) {
          say("This page is not in the site's list of sessions.");
          return;
        }
        var project = sessions[at].projectSlug;
        for (var j = at + by; j >= 0 && j < sessions.length; j += by) {
          if (sessions[j].projectSlug === project) {
            window.location.href = pageUrl(sessions[j]);
            return;
          }
        }
        say(by > 0 ? "This is the project's oldest session." : "This is the project's newest session.");
      },
      function () {
        say("The site's list of sessions could not be loaded.");
      }
    );
  }

  keys.add("]", "Next session of this project (older, in the project page's order)", function () {
    step(1);
  });
  keys.add("[", "Previous session of this project (newer)", function () {
    step(-1);
  });
  keys.add("Ctrl+K", "Find a session across the site by its title's words", show);
})();
