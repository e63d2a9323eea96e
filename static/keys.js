/* sitegen session page: keyboard shortcuts. One listener for every module; "?" lists the keys. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var doc = document;
  var bindings = new Map();
  var order = [];
  var dialog = null;

  function isTyping(target) {
    if (!target || target.nodeType !== 1) {
      return false;
    }
    var tag = target.tagName;
    return target.isContentEditable || tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT";
  }

  // A module names its key, says what it does (for the "?" list) and gives the action.
  function add(key, help, run) {
    if (!bindings.has(key)) {
      order.push(key);
    }
    bindings.set(key, { help: help, run: run });
  }

  function helpDialog() {
    if (dialog) {
      return dialog;
    }
    dialog = doc.createElement("dialog");
    dialog.id = "keys-dialog";
    dialog.setAttribute("aria-label", "Keyboard shortcuts");
    var title = doc.createElement("h2");
    title.textContent = "Keys";
    var list = doc.createElement("dl");
    order.forEach(function (key) {
      var term = doc.createElement("dt");
      var kbd = doc.createElement("kbd");
      kbd.textContent = key;
      term.appendChild(kbd);
      var description = doc.createElement("dd");
      description.textContent = bindings.get(key).help;
      list.appendChild(term);
      list.appendChild(description);
    });
    var close = doc.createElement("p");
    close.className = "muted";
    close.textContent = "Esc closes this list.";
    dialog.appendChild(title);
    dialog.appendChild(list);
    dialog.appendChild(close);
    dialog.addEventListener("click", function (event) {
      if (event.target === dialog) {
        dialog.close();
      }
    });
    doc.body.appendChild(dialog);
    return dialog;
  }

  add("?", "List these keys", function () {
    var box = helpDialog();
    if (box.open) {
      box.close();
    } else {
      box.showModal();
    }
  });

  doc.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.altKey || event.metaKey || event.defaultPrevented || isTyping(event.target)) {
      return;
    }
    var binding = bindings.get(event.key);
    if (binding) {
      event.preventDefault();
      binding.run(event);
    }
  });

  window.sitegen.keys = { add: add, isTyping: isTyping };
})();
