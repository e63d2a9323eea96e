/* sitegen session page: an image opens enlarged in a dialog; Esc, the close button or a click beside
   the image closes it. */
(function () {
  "use strict";

  var doc = document;
  var dialog = doc.getElementById("image-dialog");
  var big = dialog ? dialog.querySelector("img") : null;
  if (!dialog || !big || typeof dialog.showModal !== "function") {
    return;
  }

  doc.addEventListener("click", function (event) {
    var image = event.target.closest ? event.target.closest("img.msg-image, .md img") : null;
    if (!image || dialog.contains(image) || event.button !== 0 || event.ctrlKey || event.metaKey) {
      return;
    }
    event.preventDefault();
    big.src = image.currentSrc || image.src;
    big.alt = image.alt || "";
    dialog.showModal();
  });

  dialog.addEventListener("click", function (event) {
    if (event.target === dialog || event.target.closest(".close")) {
      dialog.close();
    }
  });
  dialog.addEventListener("close", function () {
    big.removeAttribute("src");
  });
})();
