/* sitegen index pages: the data files that the search and the Prompts page load as script tags (which
   work from file://, where fetch does not). Loaded before search-index.js and prompts.js. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  // Each data file calls add(id, data); load(url, id) adds the script once and is the promise of its data.
  function loader() {
    var slots = Object.create(null);

    function slot(id) {
      if (!slots[id]) {
        var entry = { requested: false };
        entry.promise = new Promise(function (resolve, reject) {
          entry.resolve = resolve;
          entry.reject = reject;
        });
        slots[id] = entry;
      }
      return slots[id];
    }

    return {
      add: function (id, data) {
        slot(String(id)).resolve(data);
      },
      load: function (url, id) {
        var entry = slot(id);
        if (!entry.requested) {
          entry.requested = true;
          var script = document.createElement("script");
          script.src = url;
          script.async = true;
          script.addEventListener("error", function () {
            entry.reject(new Error("could not load " + url));
          });
          document.head.appendChild(script);
        }
        return entry.promise;
      }
    };
  }

  window.sitegen.data = { loader: loader };
})();
