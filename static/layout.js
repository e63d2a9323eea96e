/* sitegen session page: the sticky toolbar's real height, as --toolbar-height, so that the sidebar sticks
   below it and jumps land below it whether it takes one row or wraps to three (a search's step buttons,
   a narrow window). */
(function () {
  "use strict";

  var doc = document;
  var toolbar = doc.querySelector(".toolbar");
  if (!toolbar) {
    return;
  }
  var last = -1;

  function measure() {
    var height = Math.ceil(toolbar.getBoundingClientRect().height);
    if (height > 0 && height !== last) {
      last = height;
      doc.documentElement.style.setProperty("--toolbar-height", height + "px");
    }
  }

  measure();
  if (window.ResizeObserver) {
    new ResizeObserver(measure).observe(toolbar);
  } else {
    window.addEventListener("resize", measure);
  }
})();
