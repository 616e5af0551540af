// The recovery inbox. The list refreshes itself only while nobody works in it: no field
// of its forms is focused, none holds unsent text or a changed choice, and no refused form
// is shown. Meanwhile #inbox-paused polls the count instead. Both poll every 3 s
// (hx-trigger); the poll that is not due now is cancelled before it is sent, and a list
// poll sent while it was quiet is not swapped in if someone started working meanwhile.
(function () {
  "use strict";

  function inboxQuiet() {
    var list = document.getElementById("inbox-list");
    if (!list) return true;
    var active = document.activeElement;
    if (active && active.form && list.contains(active)) return false;
    if (list.querySelector("[data-refused]")) return false;
    var fields = list.querySelectorAll("form textarea, form input");
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (f.type === "radio" || f.type === "checkbox") {
        if (f.checked !== f.defaultChecked) return false;
      } else if (f.type !== "hidden" && f.value !== f.defaultValue) {
        return false;
      }
    }
    return true;
  }

  function pollWhen(e) {
    return e.target && e.target.dataset && e.target.dataset.pollWhen;
  }

  document.addEventListener("htmx:beforeRequest", function (e) {
    var when = pollWhen(e);
    if (!when) return; // a form's own request (they bubble up through #inbox-list)
    if ((when === "quiet") !== inboxQuiet()) e.preventDefault();
  });

  document.addEventListener("htmx:beforeSwap", function (e) {
    // The answer of a quiet poll that was in flight when someone began to type a reason:
    // dropped, so their text stays; the next quiet poll brings the list.
    if (pollWhen(e) === "quiet" && !inboxQuiet()) e.detail.shouldSwap = false;
  });
})();
