/* sitegen session page: an opened fold says so. Its summary offers to show less, and a second control at
   the end of the text closes it from there, bringing its start back into view. */
(function () {
  "use strict";

  var doc = document;
  var LESS = "Show less";

  function summaryOf(fold) {
    var summary = fold.firstElementChild;
    return summary && summary.tagName === "SUMMARY" ? summary : null;
  }

  function update(fold) {
    var summary = summaryOf(fold);
    if (!summary) {
      return;
    }
    if (!summary.hasAttribute("data-closed")) {
      summary.setAttribute("data-closed", summary.textContent);
    }
    summary.textContent = fold.open ? LESS : summary.getAttribute("data-closed");
    if (fold.open && !fold.querySelector(":scope > button.fold-less")) {
      var button = doc.createElement("button");
      button.type = "button";
      button.className = "fold-less";
      button.setAttribute("aria-label", LESS);
      fold.appendChild(button);
    }
  }

  // The toggle event does not bubble: heard while it goes down to the fold.
  doc.addEventListener(
    "toggle",
    function (event) {
      var fold = event.target;
      if (fold.tagName === "DETAILS" && fold.classList.contains("fold")) {
        update(fold);
      }
    },
    true
  );

  doc.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button.fold-less") : null;
    if (!button) {
      return;
    }
    var fold = button.parentElement;
    fold.open = false;
    var summary = summaryOf(fold);
    if (summary && summary.getBoundingClientRect().top < 0) {
      summary.scrollIntoView({ block: "center" });
    }
    if (summary) {
      summary.focus();
    }
  });

  // Folds the page drew open (a reader's find, a deep link) before this script ran.
  doc.querySelectorAll("details.fold[open]").forEach(update);
})();
