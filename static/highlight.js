/* sitegen session page: a long page leaves the code of its later entries plain (span.hl-later, with the
   lexer's name in data-lang), and this colours it when its entry comes near the view, with the rules of
   the same pygments lexer the server uses (script.sitegen-lexer, written by lexer_tables.py): the reader
   sees what the server would have written, and the page is written twice as fast. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var doc = document;
  var conversation = doc.getElementById("conversation");
  if (!conversation) {
    return;
  }

  var tables = {};
  // str.isspace() in Python: a run of these joins the coloured run it is in, as on the server.
  var SPACE = /^[\t\n\x0b\x0c\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/;

  // A lexer's table by its name or any of its aliases (a Markdown fence names its language as it likes).
  function table(lang) {
    if (!Object.prototype.hasOwnProperty.call(tables, lang)) {
      tables[lang] = null;
      var scripts = doc.querySelectorAll("script.sitegen-lexer");
      for (var i = 0; i < scripts.length; i++) {
        var aliases = (scripts[i].getAttribute("data-aliases") || "").split(" ");
        if (scripts[i].getAttribute("data-lang") === lang || aliases.indexOf(lang) >= 0) {
          var data = JSON.parse(scripts[i].textContent);
          data.compiled = [];
          tables[lang] = data;
          break;
        }
      }
    }
    return tables[lang];
  }

  // A pattern is compiled when first tried: a page uses a few states of each lexer.
  function pattern(lexer, index) {
    var compiled = lexer.compiled[index];
    if (!compiled) {
      var source = lexer.patterns[index];
      compiled = lexer.compiled[index] = new RegExp(source[0], source[1]);
    }
    return compiled;
  }

  // pygments' RegexLexer over text from the given state stack; pushes [class, text] pairs to out.
  function run(lexer, text, stack, out) {
    stack = stack.slice();
    var rules = lexer.states[stack[stack.length - 1]];
    var pos = 0;
    for (;;) {
      var found = null;
      var rule = null;
      for (var r = 0; r < rules.length; r++) {
        var regex = pattern(lexer, rules[r][0]);
        regex.lastIndex = pos;
        found = regex.exec(text);
        if (found) {
          rule = rules[r];
          break;
        }
      }
      if (!rule) {
        if (pos >= text.length) {
          return;
        }
        if (text.charCodeAt(pos) === 10) {
          // At the end of a line an unmatched state falls back to root.
          stack = ["root"];
          rules = lexer.states.root;
          out.push(["", "\n"]);
          pos += 1;
        } else {
          var code = text.codePointAt(pos);
          var width = code > 0xffff ? 2 : 1;
          out.push(["err", text.substr(pos, width)]);
          pos += width;
        }
        continue;
      }
      act(lexer, rule[1], found[0], found, out);
      pos = found.index + found[0].length;
      var next = rule[2];
      if (next !== null) {
        if (typeof next === "number") {
          stack.length = -next >= stack.length ? 1 : stack.length + next;
        } else if (next === "#push") {
          stack.push(stack[stack.length - 1]);
        } else {
          for (var n = 0; n < next.length; n++) {
            if (next[n] === "#pop") {
              if (stack.length > 1) {
                stack.pop();
              }
            } else {
              stack.push(next[n] === "#push" ? stack[stack.length - 1] : next[n]);
            }
          }
        }
        rules = lexer.states[stack[stack.length - 1]];
      }
    }
  }

  // A rule's token: a class, none (null), bygroups ({g}), another lexing of the text (using(), {u, l}) or
  // Markdown's fenced code ({f, c}).
  function act(lexer, action, text, found, out) {
    if (action === null) {
      return;
    }
    if (typeof action === "string") {
      out.push([action, text]);
    } else if (action.f) {
      fenced(action, found, out);
    } else if (action.g) {
      for (var i = 0; i < action.g.length; i++) {
        var each = action.g[i];
        var group = found[i + 1];
        if (each === null || group === undefined) {
          continue;
        }
        if (typeof each === "string") {
          if (group) {
            out.push([each, group]);
          }
        } else {
          act(lexer, each, group, null, out);
        }
      }
    } else {
      run(action.l ? table(action.l) : lexer, text, action.u, out);
    }
  }

  // pygments' MarkdownLexer._handle_codeblock: the fence and its info string, then the code by the lexer
  // the info string names (the server shipped its table), or as a string when pygments knows none.
  function fenced(action, found, out) {
    var group = action.f;
    var fence = action.c[0];
    out.push([fence, found[group[0]]]);
    out.push([fence, found[group[1]]]);
    if (found[group[2]] !== undefined) {
      out.push(["", found[group[3]]]);
      out.push(["", found[group[4]]]);
    }
    out.push(["", found[group[5]]]);
    var code = found[group[6]];
    var lexer = table(found[group[1]].trim().toLowerCase());
    if (lexer) {
      run(lexer, code, ["root"], out);
    } else {
      out.push([action.c[1], code]);
    }
    out.push([fence, found[group[7]]]);
  }

  function escapeHtml(text) {
    return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  // The server's format: no span for plain text, runs of one class merged, whitespace kept in its run.
  function toHtml(tokens) {
    var out = [];
    var current = "";
    for (var i = 0; i < tokens.length; i++) {
      var css = tokens[i][0];
      var value = tokens[i][1];
      if (css !== current && value && !SPACE.test(value)) {
        if (current) {
          out.push("</span>");
        }
        if (css) {
          out.push("<span class=" + css + ">");
        }
        current = css;
      }
      out.push(escapeHtml(value));
    }
    if (current) {
      out.push("</span>");
    }
    return out.join("");
  }

  function colour(span) {
    var lexer = table(span.getAttribute("data-lang"));
    if (!lexer) {
      span.classList.remove("hl-later");
      return;
    }
    // pygments' input: no byte order mark, newlines as \n.
    var text = span.textContent.replace(/^\ufeff/, "").replace(/\r\n?/g, "\n");
    var tokens = [];
    run(lexer, text, ["root"], tokens);
    var html = toHtml(tokens);
    // Parsing drops a newline right after <pre>: so it did on the server's page.
    if (html.charAt(0) === "\n" && !span.previousSibling && span.parentNode.tagName === "PRE") {
      html = html.slice(1);
    }
    // The span stands where the server's spans would: it goes, they come in its place.
    span.insertAdjacentHTML("beforebegin", html);
    span.remove();
  }

  function colourWithin(root) {
    var spans = root.querySelectorAll(".hl-later");
    for (var i = 0; i < spans.length; i++) {
      colour(spans[i]);
    }
    if (spans.length) {
      doc.dispatchEvent(new CustomEvent("sitegen:highlighted", { detail: { root: root } }));
    }
  }

  // An entry is coloured when it comes within a screen of the view.
  var observer =
    typeof IntersectionObserver === "function"
      ? new IntersectionObserver(
          function (seen) {
            for (var i = 0; i < seen.length; i++) {
              if (seen[i].isIntersecting) {
                observer.unobserve(seen[i].target);
                colourWithin(seen[i].target);
              }
            }
          },
          { rootMargin: "100% 0px" }
        )
      : null;

  function watch(entries) {
    for (var i = 0; i < entries.length; i++) {
      if (entries[i].querySelector(".hl-later")) {
        if (observer) {
          observer.observe(entries[i]);
        } else {
          colourWithin(entries[i]);
        }
      }
    }
  }

  watch(conversation.querySelectorAll("[data-parent]"));
  doc.addEventListener("sitegen:chunks", function (event) {
    watch(event.detail.added);
  });
  // Printing shows every entry (chunks.js puts them in first): all of it coloured.
  window.addEventListener("beforeprint", function () {
    colourWithin(conversation);
  });

  window.sitegen.highlight = { within: colourWithin };
})();
