/* sitegen session page: a tool output too big for a site page is in a script beside it, loaded the first
   time its section is opened (a script tag, so it works from file:// too). */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var doc = document;
  var waiting = new Map();

  // Each output's script calls this with the output's URL and its rendered HTML.
  window.sitegen.artifact = function (key, html) {
    var sections = waiting.get(key) || [];
    waiting.delete(key);
    for (var i = 0; i < sections.length; i++) {
      var target = sections[i].querySelector(":scope > pre, :scope > .agent-output");
      if (target) {
        target.innerHTML = html;
      }
      sections[i].removeAttribute("data-loading");
      sections[i].setAttribute("data-loaded", "");
    }
    // Find in page indexes what is on the page: it has grown.
    doc.dispatchEvent(new Event("sitegen:view"));
  };

  function load(section) {
    var key = section.getAttribute("data-key");
    section.setAttribute("data-loading", "");
    if (waiting.has(key)) {
      waiting.get(key).push(section);
      return;
    }
    waiting.set(key, [section]);
    var script = doc.createElement("script");
    script.src = section.getAttribute("data-src");
    script.onerror = function () {
      waiting.delete(key);
      section.removeAttribute("data-loading");
      var target = section.querySelector(":scope > pre, :scope > .agent-output");
      if (target) {
        target.textContent = "The output's file is missing beside this page: " + script.src;
      }
    };
    doc.body.appendChild(script);
  }

  // toggle does not bubble: listen while it goes down.
  doc.addEventListener(
    "toggle",
    function (event) {
      var section = event.target;
      if (
        section.open &&
        section.hasAttribute &&
        section.hasAttribute("data-src") &&
        !section.hasAttribute("data-loaded") &&
        !section.hasAttribute("data-loading")
      ) {
        load(section);
      }
    },
    true
  );
})();
