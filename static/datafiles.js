/* sitegen index pages: the data files that the search and the Prompts page load as script tags (which
   work from file://, where fetch does not), and the postings written in them (sitegen/site/search/index.py's
   encoding: base-64 digits of 5 bits, 32 meaning "more follows"). Loaded before search-index.js and
   prompts.js. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  var DIGIT_VALUE = {};
  for (var d = 0; d < DIGITS.length; d++) {
    DIGIT_VALUE[DIGITS.charAt(d)] = d;
  }

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

  // A term's postings in one segment: per place (a session, or a chunk of prompts) its number, an entry
  // count, then (entry delta, weight digit) pairs; visit(place, entry, weight digit) for each posting.
  function eachPosting(code, visit) {
    var pos = 0;
    function number() {
      var value = 0;
      var shift = 0;
      for (;;) {
        var digit = DIGIT_VALUE[code.charAt(pos++)];
        value += (digit & 31) * Math.pow(2, shift);
        if (digit < 32) {
          return value;
        }
        shift += 5;
      }
    }
    while (pos < code.length) {
      var place = number();
      var entries = number();
      var entry = 0;
      for (var i = 0; i < entries; i++) {
        entry += number();
        visit(place, entry, DIGIT_VALUE[code.charAt(pos++)]);
      }
    }
  }

  window.sitegen.data = { loader: loader, eachPosting: eachPosting };
})();
