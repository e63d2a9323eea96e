/* sitegen session page: a copy button on every code block, tool command, argument list, input and output
   (the whole text, folded part included), and "copy as Markdown" on every message. The buttons carry no
   text of their own (CSS draws their label), so find, the outline and selections never see them. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var doc = document;
  var page = window.sitegen.page;
  var conversation = doc.getElementById("conversation");
  if (!page || !conversation) {
    return;
  }

  // Blocks whose text is copied whole: a preview and its folded rest read as one.
  var BLOCKS = ".tool-output, .tool-input, .tool-args, .odek-frame";
  var MESSAGES = "article.msg > .entry-head";
  // Entries decorated per slice of idle time: a page of thousands of entries never stalls on them.
  var SLICE = 150;

  function makeButton(kind, label) {
    var button = doc.createElement("button");
    button.type = "button";
    button.className = "copy copy-" + kind;
    button.setAttribute("data-copy-kind", kind);
    button.setAttribute("aria-label", label);
    button.title = label;
    return button;
  }

  // The text of a block with its folded rest; a pre's own text, never a label or a button.
  function blockText(block) {
    if (block.tagName === "PRE") {
      return block.textContent;
    }
    var parts = [];
    block.querySelectorAll("pre").forEach(function (pre) {
      parts.push(pre.textContent);
    });
    return parts.join("");
  }

  function commandText(head) {
    var tool = head.parentElement;
    var summary = head.querySelector(".tool-summary");
    var args = tool.querySelector(":scope > .tool-args pre");
    if (tool.classList.contains("tool-bash") && summary) {
      return summary.textContent.replace(/^\$ /, "");
    }
    if (args) {
      return args.textContent;
    }
    // A file tool's summary is its path, with "(offset 10, limit 20)" after it for a partial read.
    return summary ? summary.textContent.replace(/ \((?:offset|limit) [^)]*\)$/, "") : "";
  }

  // ---- A message as Markdown: its own text blocks, converted back from their HTML ----

  function inline(node) {
    var out = "";
    node.childNodes.forEach(function (child) {
      if (child.nodeType === 3) {
        out += child.nodeValue;
        return;
      }
      if (child.nodeType !== 1 || child.tagName === "BUTTON") {
        return;
      }
      var inner = inline(child);
      switch (child.tagName) {
        case "CODE":
          var ticks = /`/.test(child.textContent) ? "``" : "`";
          out += ticks + child.textContent + ticks;
          break;
        case "STRONG":
        case "B":
          out += "**" + inner + "**";
          break;
        case "EM":
        case "I":
          out += "*" + inner + "*";
          break;
        case "DEL":
        case "S":
          out += "~~" + inner + "~~";
          break;
        case "A":
          var href = child.getAttribute("href") || "";
          out += href && href !== inner ? "[" + inner + "](" + href + ")" : inner;
          break;
        case "BR":
          out += "\n";
          break;
        case "IMG":
          out += "![" + (child.getAttribute("alt") || "") + "]";
          break;
        default:
          out += inner;
      }
    });
    return out;
  }

  function indent(text, prefix) {
    return text
      .split("\n")
      .map(function (line, index) {
        return (index === 0 ? "" : prefix.replace(/./g, " ")) + line;
      })
      .join("\n");
  }

  function blocks(node) {
    var out = [];
    node.childNodes.forEach(function (child) {
      if (child.nodeType === 3) {
        if (child.nodeValue.trim()) {
          out.push(child.nodeValue.trim());
        }
        return;
      }
      if (child.nodeType !== 1 || child.tagName === "BUTTON") {
        return;
      }
      var tag = child.tagName;
      if (/^H[1-6]$/.test(tag)) {
        out.push("#".repeat(Number(tag.charAt(1))) + " " + inline(child));
      } else if (tag === "P") {
        out.push(inline(child));
      } else if (tag === "PRE") {
        var code = child.querySelector("code");
        var match = code ? /language-(\S+)/.exec(code.className) : null;
        var text = child.textContent.replace(/\n$/, "");
        var fence = /```/.test(text) ? "````" : "```";
        out.push(fence + (match ? match[1] : "") + "\n" + text + "\n" + fence);
      } else if (tag === "UL" || tag === "OL") {
        var number = Number(child.getAttribute("start") || 1);
        var items = [];
        Array.prototype.forEach.call(child.children, function (item) {
          var marker = tag === "OL" ? number++ + ". " : "- ";
          var body = item.querySelector(":scope > p, :scope > ul, :scope > ol, :scope > pre")
            ? blocks(item)
            : inline(item).trim();
          items.push(marker + indent(body, marker));
        });
        out.push(items.join("\n"));
      } else if (tag === "BLOCKQUOTE") {
        out.push(
          blocks(child)
            .split("\n")
            .map(function (line) {
              return line ? "> " + line : ">";
            })
            .join("\n")
        );
      } else if (tag === "HR") {
        out.push("---");
      } else if (tag === "TABLE") {
        var rows = [];
        Array.prototype.forEach.call(child.rows, function (row, index) {
          var cells = Array.prototype.map.call(row.cells, function (cell) {
            return inline(cell).trim().replace(/\|/g, "\\|");
          });
          rows.push("| " + cells.join(" | ") + " |");
          if (index === 0) {
            rows.push("|" + cells.map(function () {
              return " --- |";
            }).join(""));
          }
        });
        out.push(rows.join("\n"));
      } else if (tag === "DIV" && child.classList.contains("code-block")) {
        out.push(blocks(child));
      } else {
        out.push(blocks(child) || inline(child).trim());
      }
    });
    return out.filter(Boolean).join("\n\n");
  }

  function messageMarkdown(head) {
    var body = head.parentElement.querySelector(":scope > .entry-body");
    if (!body) {
      return "";
    }
    var parts = [];
    // The message's own text: thinking and tool cards have their own buttons.
    body.querySelectorAll(":scope > .md, :scope > pre.plain").forEach(function (block) {
      parts.push(block.tagName === "PRE" ? block.textContent : blocks(block));
    });
    return parts.join("\n\n").trim() + "\n";
  }

  // ---- Decorating entries as they are in the page ----

  function decorate(root) {
    root.querySelectorAll(".md pre").forEach(function (pre) {
      if (pre.parentElement.classList.contains("code-block")) {
        return;
      }
      var box = doc.createElement("div");
      box.className = "code-block";
      pre.replaceWith(box);
      box.appendChild(pre);
      box.appendChild(makeButton("code", "Copy code"));
    });
    root.querySelectorAll(BLOCKS).forEach(function (block) {
      if (block.tagName === "PRE" || block.querySelector(":scope > button.copy")) {
        return;
      }
      var label = block.classList.contains("tool-args") ? "Copy arguments" : block.classList.contains("tool-input") ? "Copy input" : "Copy output";
      block.appendChild(makeButton("block", label));
    });
    root.querySelectorAll(".tool-head").forEach(function (head) {
      if (!head.querySelector(":scope > button.copy") && commandText(head)) {
        var tool = head.parentElement;
        var label = tool.classList.contains("tool-bash") ? "Copy command" : tool.querySelector(":scope > .tool-args") ? "Copy arguments" : "Copy path";
        head.appendChild(makeButton("command", label));
      }
    });
    root.querySelectorAll(MESSAGES).forEach(function (head) {
      var body = head.parentElement.querySelector(":scope > .entry-body");
      if (!head.querySelector(":scope > button.copy") && body && body.querySelector(":scope > .md, :scope > pre.plain")) {
        head.appendChild(makeButton("markdown", "Copy as Markdown"));
      }
    });
  }

  function textFor(button) {
    var kind = button.getAttribute("data-copy-kind");
    var host = button.parentElement;
    if (kind === "code") {
      return host.querySelector(":scope > pre").textContent;
    }
    if (kind === "block") {
      return blockText(host);
    }
    if (kind === "command") {
      return commandText(host);
    }
    return messageMarkdown(host);
  }

  function confirm(button, state) {
    button.classList.remove("copied", "copy-failed");
    button.classList.add(state);
    button.setAttribute("aria-label", state === "copied" ? "Copied" : "Copy failed");
    window.clearTimeout(button._copyTimer);
    button._copyTimer = window.setTimeout(function () {
      button.classList.remove(state);
      button.setAttribute("aria-label", button.title);
    }, 1500);
  }

  conversation.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button.copy") : null;
    if (!button || !conversation.contains(button)) {
      return;
    }
    // A button in a fold's summary or a card's header must not also open or close it.
    event.preventDefault();
    page.copyText(textFor(button)).then(
      function () {
        confirm(button, "copied");
      },
      function () {
        confirm(button, "copy-failed");
      }
    );
  });

  // Entries in the page now, in slices; chunks that arrive later as they come.
  var entries = Array.prototype.slice.call(conversation.children);
  function next() {
    var slice = entries.splice(0, SLICE);
    slice.forEach(function (entry) {
      if (entry.nodeType === 1 && entry.tagName !== "SCRIPT") {
        decorate(entry);
      }
    });
    if (entries.length) {
      (window.requestIdleCallback || window.setTimeout)(next);
    }
  }
  next();
  doc.addEventListener("sitegen:chunks", function (event) {
    event.detail.added.forEach(function (entry) {
      if (entry.parentElement === conversation || entry.tagName === "ARTICLE") {
        decorate(entry);
      }
    });
  });

  window.sitegen.copy = { markdownOf: messageMarkdown, decorate: decorate };
})();
