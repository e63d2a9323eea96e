/* Runs in <head>: applies the remembered theme before the first paint, and drops no-js early. */
(function () {
  "use strict";
  var root = document.documentElement;
  root.classList.remove("no-js");
  try {
    var value = window.localStorage.getItem("sitegen-theme");
    if (value === "light" || value === "dark") {
      root.setAttribute("data-theme", value);
    }
  } catch (error) {
    // Storage refused (file:// in some browsers): follow the system theme.
  }
})();
