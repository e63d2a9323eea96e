/* sitegen site: the list of every session (sessions.js at the site's root, written by
   sitegen/site/pages/all_sessions.py), loaded as a script so that it works from file:// as over HTTP. Used by
   the All sessions page, the palette (Ctrl+K) and the next/previous session keys. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var pending = null;

  // The list as objects named by the file's columns, newest first; url is relative to the site's root.
  function load(url) {
    if (pending) {
      return pending;
    }
    pending = new Promise(function (resolve, reject) {
      window.sitegen.sessionIndex = function (data) {
        var columns = data[0];
        resolve(
          data[1].map(function (row) {
            var item = {};
            columns.forEach(function (name, index) {
              item[name] = row[index];
            });
            return item;
          })
        );
      };
      var script = document.createElement("script");
      script.src = url;
      script.async = true;
      script.addEventListener("error", function () {
        reject(new Error("could not load " + url));
      });
      document.head.appendChild(script);
    });
    return pending;
  }

  window.sitegen.sessions = { load: load };
})();
