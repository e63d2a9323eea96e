/* Search page: the query, its filters (project, dates, role) and the results, paged without a cap;
   each result opens its session at the entry with the query's words marked. search-index.js ranks. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var engine = window.sitegen.searchIndex;
  var form = document.getElementById("search-form");
  if (!form || !engine) {
    return;
  }
  var input = document.getElementById("search-query");
  var status = document.getElementById("search-status");
  var list = document.getElementById("search-results");
  var more = document.getElementById("search-more");
  var filters = {
    project: document.getElementById("search-project"),
    from: document.getElementById("search-from"),
    to: document.getElementById("search-to"),
    role: document.getElementById("search-role")
  };
  var PAGE_SIZE = 20;
  var KIND_NAMES = engine.kindNames;
  var ROLE_NAMES = {
    user: "the user",
    assistant: "the assistant",
    tool: "tool output",
    shell: "shell",
    summary: "summaries",
    custom: "custom messages",
    prompt: "prompts of the prompt history",
    title: "session titles"
  };

  // ---- Rendering ----

  function pageUrl(page) {
    return String(page)
      .split("/")
      .map(function (part) {
        return encodeURIComponent(part);
      })
      .join("/");
  }

  function day(ms) {
    return ms ? new Date(ms).toISOString().slice(0, 10) : "";
  }

  // A result opens its session at the entry, with the query's words in ?q= for marks.js to mark.
  function resultUrl(session, row, words) {
    var query = words
      .map(function (word) {
        return word.text;
      })
      .join(" ");
    return (
      pageUrl(session.page) +
      "?q=" +
      encodeURIComponent(query) +
      (row && row.id ? "#entry-" + encodeURIComponent(row.id) : "")
    );
  }

  function metaPart(meta, className, text) {
    if (meta.childNodes.length) {
      meta.appendChild(document.createTextNode(" · "));
    }
    var part = document.createElement("span");
    part.className = className;
    part.textContent = text;
    meta.appendChild(part);
    return part;
  }

  function resultItem(index, result, row, words) {
    var session = index.sessions[result.session];
    var item = document.createElement("li");
    item.className = "result";
    var link = document.createElement("a");
    link.className = "result-title";
    link.href = resultUrl(session, result.entry ? row : null, words);
    engine.appendMarked(link, session.title, engine.findMatches(session.title, words), 0, session.title.length);
    item.appendChild(link);
    if (session.context) {
      // Which session a subagent page belongs to (not searched: its own title is).
      var context = document.createElement("span");
      context.className = "result-context muted";
      context.textContent = " · " + session.context;
      item.appendChild(context);
    }
    var meta = document.createElement("div");
    meta.className = "result-meta muted";
    var kind = row.kind;
    var label = KIND_NAMES[kind] || kind;
    if (row.label) {
      label += " · " + row.label;
    }
    metaPart(meta, "result-kind kind-" + kind, label);
    if (session.project) {
      metaPart(meta, "result-project", session.project);
    }
    if (session.time) {
      var time = metaPart(meta, "result-date", day(session.time));
      time.title = "Last activity " + new Date(session.time).toISOString().replace("T", " ").slice(0, 16) + " UTC";
    }
    item.appendChild(meta);
    if (row.text) {
      item.appendChild(engine.snippet(row.text, words));
    }
    return item;
  }

  // ---- Filters: project and dates per session at once, the role per entry as results are read ----

  function filterValues() {
    return {
      project: filters.project ? filters.project.value : "",
      from: filters.from ? filters.from.value : "",
      to: filters.to ? filters.to.value : "",
      role: filters.role ? filters.role.value : ""
    };
  }

  function sessionFilter(index, values) {
    return function (result) {
      var session = index.sessions[result.session];
      if (values.project && session.project !== values.project) {
        return false;
      }
      var date = day(session.time);
      return !((values.from && date < values.from) || (values.to && (!date || date > values.to)));
    };
  }

  function fillProjects(index) {
    var select = filters.project;
    if (!select || select.options.length > 1) {
      return;
    }
    var wanted = select.getAttribute("data-wanted") || "";
    var names = Array.from(
      new Set(
        index.sessions.map(function (session) {
          return session.project;
        })
      )
    )
      .filter(Boolean)
      .sort();
    names.forEach(function (name) {
      var option = document.createElement("option");
      option.value = name;
      option.textContent = name;
      select.appendChild(option);
    });
    select.value = names.indexOf(wanted) >= 0 ? wanted : "";
  }

  // ---- Results, a page at a time ----

  var current = 0;
  var shown = null;

  function setStatus(text) {
    status.textContent = text;
  }

  function rowOf(state, result) {
    if (result.entry === 0) {
      return Promise.resolve({ kind: "title", label: "", text: null });
    }
    return engine.entryRow(state.index.sessions[result.session], result.entry).catch(function () {
      return null;
    });
  }

  // Appends the next PAGE_SIZE results that pass the role filter; reads further while some do not.
  function showPage() {
    var state = shown;
    var added = 0;
    more.hidden = true;
    function next() {
      if (state !== shown) {
        return Promise.resolve();
      }
      if (added >= PAGE_SIZE || state.next >= state.results.length) {
        more.hidden = state.next >= state.results.length;
        return Promise.resolve();
      }
      var batch = state.results.slice(state.next, state.next + PAGE_SIZE - added);
      state.next += batch.length;
      return Promise.all(
        batch.map(function (result) {
          return rowOf(state, result);
        })
      ).then(function (rows) {
        if (state !== shown) {
          return;
        }
        batch.forEach(function (result, i) {
          if (rows[i] && (!state.role || rows[i].kind === state.role)) {
            list.appendChild(resultItem(state.index, result, rows[i], state.words));
            added++;
            state.listed++;
          }
        });
        return next();
      });
    }
    return next().then(function () {
      if (state === shown) {
        setStatus(describe(state));
      }
    });
  }

  function plural(count, noun) {
    return count + " " + noun + (count === 1 ? "" : "s");
  }

  function describe(state) {
    var query = "“" + state.query + "”";
    if (!state.results.length) {
      return (state.total ? "No results with these filters for " : "No results for ") + query + ".";
    }
    var filtered = state.results.length < state.total ? " (of " + state.total + " without the filters)" : "";
    if (!state.role) {
      var range = state.listed < state.results.length ? ", showing the best " + state.listed : "";
      return plural(state.results.length, "result") + " for " + query + filtered + range + ", best first.";
    }
    var done = state.next >= state.results.length;
    return (
      plural(state.listed, "result") +
      " from " +
      ROLE_NAMES[state.role] +
      " for " +
      query +
      (done ? "" : " so far") +
      ", of " +
      plural(state.results.length, "match") +
      " in any role" +
      filtered +
      ", best first."
    );
  }

  function search(query) {
    var ticket = ++current;
    var parsed = engine.parseQuery(query);
    if (!parsed.terms.length && !parsed.prefix) {
      shown = null;
      list.replaceChildren();
      more.hidden = true;
      setStatus(query.trim() ? "Type at least two letters of a word." : "");
      return Promise.resolve();
    }
    setStatus("Searching…");
    return engine
      .load()
      .then(function (index) {
        fillProjects(index);
        var values = filterValues();
        return engine.run(index, parsed).then(function (outcome) {
          if (ticket !== current) {
            return;
          }
          shown = {
            index: index,
            query: query.trim(),
            total: outcome.results.length,
            results: outcome.results.filter(sessionFilter(index, values)),
            role: values.role,
            words: outcome.words,
            next: 0,
            listed: 0
          };
          list.replaceChildren();
          // The count is announced once the first results are on the page, not before.
          return showPage();
        });
      })
      .catch(function (error) {
        if (ticket === current) {
          setStatus("The search index could not be loaded: " + error.message);
        }
      });
  }

  // The query and its filters are in the address, so a search can be shared, reloaded and gone back to.
  function remember() {
    try {
      var url = new URL(window.location.href);
      var values = filterValues();
      values.q = input.value;
      ["q", "project", "from", "to", "role"].forEach(function (name) {
        if (values[name]) {
          url.searchParams.set(name, values[name]);
        } else {
          url.searchParams.delete(name);
        }
      });
      window.history.replaceState(null, "", url.href);
    } catch (error) {
      // Some browsers refuse history changes on file:// pages; the search still works.
    }
  }

  function searchNow() {
    window.clearTimeout(timer);
    remember();
    search(input.value);
  }

  var timer = 0;
  input.addEventListener("input", function () {
    window.clearTimeout(timer);
    timer = window.setTimeout(searchNow, 150);
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    searchNow();
  });
  Object.keys(filters).forEach(function (name) {
    if (filters[name]) {
      filters[name].addEventListener("change", searchNow);
    }
  });
  more.addEventListener("click", function () {
    if (shown) {
      showPage();
    }
  });

  form.hidden = false;
  var params = new URLSearchParams(window.location.search);
  ["from", "to", "role"].forEach(function (name) {
    if (filters[name] && params.get(name)) {
      filters[name].value = params.get(name);
    }
  });
  if (filters.project) {
    // The project list comes with the index: chosen once it is there.
    filters.project.setAttribute("data-wanted", params.get("project") || "");
  }
  var initial = params.get("q");
  if (initial) {
    input.value = initial;
    search(initial);
  } else {
    engine
      .load()
      .then(fillProjects)
      .catch(function (error) {
        setStatus("The search index could not be loaded: " + error.message);
      });
  }
})();
