/* Fills the "Related sessions" panel of a site page from its <page>.related.js data file. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";
  // The data file calls this with [{title, url, project}], URLs relative to the page.
  window.sitegen.related = function (items) {
    var panel = document.getElementById("related");
    if (!panel || !Array.isArray(items) || items.length === 0) {
      return;
    }
    var list = panel.querySelector("ul");
    items.forEach(function (item) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = String(item.url);
      a.textContent = String(item.title);
      li.appendChild(a);
      if (item.project) {
        var project = document.createElement("span");
        project.className = "muted";
        project.textContent = " · " + String(item.project);
        li.appendChild(project);
      }
      list.appendChild(li);
    });
    panel.hidden = false;
  };
})();
