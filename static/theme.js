/* Every page: the remembered theme before the first paint, no-js dropped early, and the theme toggle. */
(function () {
  "use strict";
  var root = document.documentElement;
  var THEMES = ["auto", "light", "dark"];
  var NAMES = { auto: "system", light: "light", dark: "dark" };
  var KEY = "sitegen-theme";
  root.classList.remove("no-js");

  function stored() {
    try {
      var value = window.localStorage.getItem(KEY);
      return THEMES.indexOf(value) >= 0 ? value : "auto";
    } catch (error) {
      // Storage refused (file:// in some browsers, strict privacy settings): follow the system.
      return "auto";
    }
  }

  function apply(name, remember) {
    root.setAttribute("data-theme", name);
    var button = document.getElementById("toggle-theme");
    if (button) {
      button.textContent = "Theme: " + NAMES[name];
    }
    if (remember) {
      try {
        window.localStorage.setItem(KEY, name);
      } catch (error) {
        // Not remembered across visits, but the page still switches.
      }
    }
  }

  // Runs in <head>: set the theme now, label and wire the button once the body exists.
  apply(stored(), false);
  document.addEventListener("DOMContentLoaded", function () {
    var button = document.getElementById("toggle-theme");
    if (!button) {
      return;
    }
    apply(root.getAttribute("data-theme") || "auto", false);
    button.addEventListener("click", function () {
      var current = THEMES.indexOf(root.getAttribute("data-theme"));
      apply(THEMES[(current + 1) % THEMES.length], true);
    });
  });
})();
