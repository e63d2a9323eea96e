// sitegen watch: reload this page when a rebuild changes it, keeping the scroll position and the shown branch.
// The server adds this script to pages while serving them; built files never contain it.
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var STORE_KEY = "sitegen-reload";
  // Within this many pixels of the bottom counts as following the end of a growing session.
  var BOTTOM_SLACK = 48;
  var script = document.currentScript;
  var version = (script && script.getAttribute("data-version")) || "";
  // Relative to this script, so the page works behind any host name or port.
  var eventsUrl = new URL("events", script ? script.src : window.location.href);
  var body = document.body;
  // The branch the server drew by default; only a different one needs pinning across a reload.
  // (data-leaf follows the shown branch; data-default-leaf stays what the server drew.)
  var defaultLeaf = (body && body.getAttribute("data-default-leaf")) || "";

  // ---- Which files this page shows: reload only when the rebuild wrote one of them ----

  function sitePath(url) {
    var parsed = new URL(url, window.location.href);
    if (parsed.origin !== window.location.origin) {
      return null;
    }
    var path = parsed.pathname;
    if (path.charAt(path.length - 1) === "/") {
      path += "index.html";
    }
    try {
      path = decodeURIComponent(path);
    } catch (error) {
      // Keep the encoded form: it simply will not match.
    }
    return path.replace(/^\/+/, "");
  }

  function affected(written) {
    if (!written) {
      return true;
    }
    var changed = new Set(written);
    if (changed.has(sitePath(window.location.href))) {
      return true;
    }
    var used = document.querySelectorAll("script[src], link[href][rel~='stylesheet'], img[src]");
    for (var i = 0; i < used.length; i++) {
      var url = used[i].getAttribute("src") || used[i].getAttribute("href");
      if (changed.has(sitePath(url))) {
        return true;
      }
    }
    return false;
  }

  // ---- Save before reloading, restore after ----

  function save() {
    var root = document.documentElement;
    var state = {
      path: window.location.pathname,
      x: window.scrollX,
      y: window.scrollY,
      atBottom: window.scrollY > 0 && window.innerHeight + window.scrollY >= root.scrollHeight - BOTTOM_SLACK,
      leaf: (body && body.dataset.leaf) || "",
      defaultLeaf: defaultLeaf,
    };
    try {
      window.sessionStorage.setItem(STORE_KEY, JSON.stringify(state));
    } catch (error) {
      // Storage can be disabled; the reload still happens, just without the position.
    }
  }

  function takeSaved() {
    try {
      var raw = window.sessionStorage.getItem(STORE_KEY);
      window.sessionStorage.removeItem(STORE_KEY);
      var state = raw ? JSON.parse(raw) : null;
      return state && state.path === window.location.pathname ? state : null;
    } catch (error) {
      return null;
    }
  }

  function restore(state) {
    var loaded = document.readyState === "complete";
    var hashPending = false;
    var done = false;

    function scrollBack() {
      if (done || !loaded || hashPending) {
        return;
      }
      done = true;
      // After the page script's own jump to the fragment, which also runs at load.
      window.requestAnimationFrame(function () {
        var root = document.documentElement;
        var page = window.sitegen.page;
        if (page && page.scrollSettled) {
          // The session page's settling scroll: it also cancels the page's own, still running
          // jump to an #entry- fragment, and holds while off-screen entries get their heights.
          window.scrollTo(state.x, window.scrollY);
          page.scrollSettled(function () {
            var target = state.atBottom ? root.scrollHeight - window.innerHeight : state.y;
            return target - window.scrollY;
          });
        } else {
          window.scrollTo(state.x, state.atBottom ? root.scrollHeight : state.y);
        }
        window.history.scrollRestoration = "auto";
      });
    }

    // A branch other than the default one was shown: open it again through the page's deep-link handling.
    if (state.leaf && state.leaf !== state.defaultLeaf) {
      var hash = "#entry-" + encodeURIComponent(state.leaf);
      if (window.location.hash !== hash) {
        hashPending = true;
        window.addEventListener(
          "hashchange",
          function () {
            hashPending = false;
            scrollBack();
          },
          { once: true }
        );
        window.location.replace(window.location.href.split("#")[0] + hash);
        window.setTimeout(function () {
          hashPending = false;
          scrollBack();
        }, 500);
      }
    }
    if (!loaded) {
      window.addEventListener("load", function () {
        loaded = true;
        scrollBack();
      });
    }
    scrollBack();
  }

  function reload() {
    save();
    // The browser's own scroll restoration would race with ours.
    window.history.scrollRestoration = "manual";
    window.location.reload();
  }

  // ---- A banner while the last rebuild failed ----

  var banner = null;

  function showFailure(message) {
    if (!message) {
      if (banner) {
        banner.remove();
        banner = null;
      }
      return;
    }
    if (!banner) {
      banner = document.createElement("div");
      banner.setAttribute("role", "alert");
      banner.id = "sitegen-rebuild-failed";
      var style = banner.style;
      style.position = "fixed";
      style.left = "0";
      style.right = "0";
      style.top = "0";
      style.zIndex = "2147483647";
      style.padding = "0.6em 1em";
      style.font = "14px/1.4 system-ui, sans-serif";
      style.background = "#b00020";
      style.color = "#fff";
      style.whiteSpace = "pre-wrap";
      document.body.appendChild(banner);
    }
    banner.textContent = "sitegen: the rebuild failed; this is the last good site.\n" + message;
  }

  // ---- The event stream ----

  var retryDelay = 1000;

  function connect() {
    var source = new EventSource(eventsUrl.pathname + "?since=" + encodeURIComponent(version));
    source.addEventListener("open", function () {
      retryDelay = 1000;
    });
    source.addEventListener("reload", function (event) {
      var data = JSON.parse(event.data);
      if (affected(data.written)) {
        source.close();
        reload();
      } else {
        version = data.version;
      }
    });
    source.addEventListener("failure", function (event) {
      showFailure(JSON.parse(event.data).message);
    });
    source.addEventListener("error", function () {
      // EventSource retries by itself after a dropped connection, but gives up after an HTTP error.
      if (source.readyState === EventSource.CLOSED) {
        window.setTimeout(connect, retryDelay);
        retryDelay = Math.min(retryDelay * 2, 10000);
      }
    });
  }

  var saved = takeSaved();
  if (saved) {
    restore(saved);
  }
  connect();
})();
