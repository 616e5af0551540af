// The prompt box is closed while the session waits for an admin (parked): the server
// renders it so, and this keeps it in step with the controls region (#controls, whose
// data-state the live socket and every answer swap in), showing why it is closed.
(function () {
  "use strict";

  function sync() {
    var controls = document.getElementById("controls");
    var form = document.getElementById("prompt-form");
    if (!controls || !form) return;
    var parked = controls.getAttribute("data-state") === "parked";
    var fields = form.querySelectorAll('textarea[name="text"], [data-action="send"], .chip');
    for (var i = 0; i < fields.length; i++) fields[i].disabled = parked;
    var why = document.getElementById("prompt-parked");
    if (why) why.hidden = !parked;
  }

  function start() {
    sync();
    var dock = document.querySelector(".dock");
    if (dock && window.MutationObserver) {
      new MutationObserver(sync).observe(dock, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-state"] });
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
