/* sitegen session page: landing a jump. The page scrolls to a jump's target and keeps it there while
   entries around it get their real heights, until the reader moves; page.js and the feature modules
   jump through window.sitegen.landing. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var conversation = document.getElementById("conversation");

  var scrollJob = 0;

  // Entries skip rendering while off screen (content-visibility), so their real heights only
  // appear once drawn and a first jump can land short: repeat it for a few frames until it holds.
  // Entries drawn for the first time on the way change the distance again: keep at it until two frames
  // in a row find the target in place (or a second has passed).
  // Any other jump (a tree click, find, a restore after a live reload) ends the hold of a deep link,
  // and so does a scroll that is not ours (a script's, or the scroll bar's). The browser's own scroll
  // that keeps what is in view in place while entries above get their real heights (scroll anchoring)
  // leaves our target where we put it: that one is ours.
  var holdEnded = false;
  var ownScrollY = -1; // where our last scroll left the page; -1 once a scroll not ours has moved it
  var placing = null; // how far what our last scroll put in place is from its place
  var placedAt = 0; // and how far it was when we left it
  var moves = 0; // jumps and scrolls not ours so far: what moves the page other than a jump settling
  var readerInputs = 0; // the reader's wheel, touch, key and mouse presses so far

  // Checked as each scroll event comes, a frame after the scroll, and when asked in between.
  function checkScroll() {
    if (ownScrollY < 0 || Math.abs(window.scrollY - ownScrollY) <= 2) {
      return;
    }
    if (placing && Math.abs(placing() - placedAt) < 2) {
      ownScrollY = window.scrollY;
    } else {
      holdEnded = true;
      moves++;
      ownScrollY = -1;
    }
  }
  window.addEventListener("scroll", checkScroll, { passive: true });

  function scrollSettled(distance, holding) {
    if (!holding) {
      holdEnded = true;
      moves++;
    }
    var job = ++scrollJob;
    var frames = 0;
    var still = 0;
    var inputs = readerInputs;
    function step() {
      // A later jump took over, or the reader scrolled, typed or clicked during a hold: theirs now.
      if (job !== scrollJob || (holding && readerInputs !== inputs)) {
        return;
      }
      var delta = distance();
      var before = window.scrollY;
      if (Math.abs(delta) >= 2) {
        window.scrollBy(0, delta);
        // At the top or the bottom of the page the target cannot come closer: that is in place too.
        still = window.scrollY === before ? still + 1 : 0;
      } else {
        still++;
      }
      // Where the page is now is ours even when we did not scroll: the browser may have moved it to
      // keep the target in place, and its scroll event, one frame on, must not end the hold.
      ownScrollY = window.scrollY;
      placing = distance;
      placedAt = delta - (window.scrollY - before);
      if (still < 2 && ++frames < 60) {
        window.requestAnimationFrame(step);
      }
    }
    step();
  }

  function scrollToElement(element, holding) {
    var margin = parseFloat(window.getComputedStyle(element).scrollMarginTop) || 0;
    scrollSettled(function () {
      return element.getBoundingClientRect().top - margin;
    }, holding);
  }

  // Entries above a jump's target get their real heights as they are drawn, some after the jump has
  // settled, which moves the target: for a while after landing, each change in the conversation's size
  // lands on it again, until the reader scrolls, types or clicks, or jumps elsewhere.
  var held = null;
  var heldUntil = 0;
  var userMoved = false; // since the page opened
  ["wheel", "touchmove", "keydown", "mousedown"].forEach(function (type) {
    window.addEventListener(
      type,
      function () {
        holdEnded = true;
        userMoved = true;
        readerInputs++;
      },
      { passive: true, capture: true }
    );
  });
  if (conversation && typeof ResizeObserver === "function") {
    new ResizeObserver(function () {
      if (held && !holdEnded && Date.now() < heldUntil && held.isConnected) {
        scrollToElement(held, true);
      } else {
        held = null;
      }
    }).observe(conversation);
  }

  function land(element, milliseconds) {
    held = element;
    heldUntil = Date.now() + milliseconds;
    holdEnded = false;
    moves++;
    // Where the page is counts as ours even when landing needs no scroll, so that a scroll bar drag
    // (no mousedown in some browsers) ends the hold too.
    ownScrollY = window.scrollY;
    scrollToElement(element, true);
  }

  window.sitegen.landing = {
    scrollSettled: scrollSettled,
    scrollToElement: scrollToElement,
    land: land,
    // A deep link's first landing, while the page draws the most entries, holds its target longer.
    holdFor: function (milliseconds) {
      heldUntil = Date.now() + milliseconds;
    },
    holding: function () {
      return !holdEnded;
    },
    // Whether the reader has scrolled, typed or clicked since the page opened.
    readerMoved: function () {
      return userMoved;
    },
    // How many times so far something other than a jump settling moved the page: jumps, find, the
    // reader's scrolls (the scroll bar's too, which sends no event of its own), a script's.
    moves: function () {
      checkScroll();
      return moves;
    },
  };
})();
