/* sitegen session page: printing shows every collapsed part (thinking, folded outputs). Browsers with
   ::details-content open them in CSS (views.css); elsewhere they are opened for the print and closed
   again after it. */
(function () {
  "use strict";

  if (window.CSS && CSS.supports && CSS.supports("selector(::details-content)")) {
    return;
  }
  var opened = [];
  window.addEventListener("beforeprint", function () {
    var closed = document.querySelectorAll("details:not([open])");
    for (var i = 0; i < closed.length; i++) {
      closed[i].open = true;
      opened.push(closed[i]);
    }
  });
  window.addEventListener("afterprint", function () {
    for (var i = 0; i < opened.length; i++) {
      opened[i].open = false;
    }
    opened = [];
  });
})();
