// The studio page: socket state on <body>, refused writes shown, tree keyboard moves,
// elapsed time on running tool steps. Everything else is htmx attributes in the markup.
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", function () {
    document.body.dataset.ws = "closed";
    // Show the server's words for a refused write (409, 422, 429) instead of dropping them.
    htmx.config.responseHandling = [
      { code: "204", swap: false },
      { code: "[23]..", swap: true },
      { code: "(409|422|429)", swap: true, error: false },
      { code: "...", swap: false, error: true },
    ];
  });

  // While the socket is down the page says so (it would otherwise look live and idle),
  // and a send that cannot reach the server says so too; the typed text stays in the box.
  var leaving = false;
  window.addEventListener("beforeunload", function () { leaving = true; });
  function banner(show) {
    var el = document.getElementById("connection-banner");
    if (!el) return;
    el.textContent = show ? el.dataset.lost : "";
    el.hidden = !show;
  }
  document.addEventListener("htmx:wsOpen", function () {
    document.body.dataset.ws = "open";
    banner(false);
  });
  function closed() {
    document.body.dataset.ws = "closed";
    if (!leaving) banner(true);
  }
  document.addEventListener("htmx:wsClose", closed);
  document.addEventListener("htmx:wsError", closed);

  function say(text) {
    var box = document.getElementById("form-error");
    if (box) box.textContent = text;
  }
  document.addEventListener("htmx:sendError", function () {
    var el = document.getElementById("connection-banner");
    say(el ? el.dataset.sendFailed : "The studio cannot be reached.");
  });
  document.addEventListener("htmx:responseError", function (e) {
    var el = document.getElementById("connection-banner");
    say((el ? el.dataset.refused : "The server could not do that") + " (" + e.detail.xhr.status + ").");
  });

  // Keep the newest narration in view.
  document.addEventListener("htmx:wsAfterMessage", function () {
    var stream = document.getElementById("stream");
    if (stream) stream.scrollTop = stream.scrollHeight;
  });

  // A run that is not going any more has no step still ticking (after a reconnect the
  // regions say idle, while the steps shown were those of the run before the restart).
  document.addEventListener("htmx:wsAfterMessage", function () {
    var controls = document.getElementById("controls");
    if (controls && controls.dataset.state !== "running") {
      document.querySelectorAll("#stream-steps [data-started]").forEach(function (el) {
        el.removeAttribute("data-started");
      });
    }
  });

  // Running tool steps show how long they have been going.
  setInterval(function () {
    document.querySelectorAll("#stream-steps [data-started]").forEach(function (el) {
      var s = Math.round((Date.now() - Number(el.dataset.started)) / 1000);
      el.textContent = " (" + s + " s)";
    });
  }, 500);

  // --- the tree: arrows move between parent, child and siblings; Enter continues here.
  function nodes() {
    return Array.prototype.slice.call(document.querySelectorAll("#tree .node"));
  }
  function byId(id) {
    return id ? document.querySelector('#tree .node[data-entry-id="' + CSS.escape(id) + '"]') : null;
  }
  function children(node) {
    var id = node.dataset.entryId;
    return nodes().filter(function (n) { return n.dataset.parentId === id; });
  }
  function focusNode(node) {
    if (!node) return;
    nodes().forEach(function (n) { n.tabIndex = -1; });
    node.tabIndex = 0;
    node.focus();
  }

  document.addEventListener("keydown", function (e) {
    var node = e.target.closest && e.target.closest("#tree .node");
    if (!node) return;
    var next = null;
    if (e.key === "ArrowUp") {
      next = byId(node.dataset.parentId);
    } else if (e.key === "ArrowDown") {
      var kids = children(node);
      next = kids.filter(function (k) { return k.dataset.active === "true"; })[0] || kids[0];
    } else if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      var siblings = nodes().filter(function (n) { return n.dataset.parentId === node.dataset.parentId; });
      var i = siblings.indexOf(node) + (e.key === "ArrowRight" ? 1 : -1);
      next = siblings[i];
    } else if (e.key === "Enter") {
      e.preventDefault();
      var studio = document.querySelector(".studio");
      htmx.ajax("POST", studio.dataset.rewindUrl, {
        values: { entry_id: node.dataset.entryId, expected_leaf_id: document.getElementById("tree").dataset.leafId },
        swap: "none",
      });
      return;
    } else if (e.key === " ") {
      e.preventDefault();
      node.click();
      return;
    } else {
      return;
    }
    e.preventDefault();
    focusNode(next);
  });

  // After the tree is redrawn, make it reachable with Tab again (the leaf first).
  document.addEventListener("htmx:oobAfterSwap", function () { tabbable(); });
  document.addEventListener("htmx:afterSwap", function () { tabbable(); });
  document.addEventListener("DOMContentLoaded", function () { tabbable(); });
  function tabbable() {
    var all = nodes();
    if (!all.length || all.some(function (n) { return n.tabIndex === 0; })) return;
    var leaf = document.querySelector('#tree .node[data-leaf="true"]') || all[all.length - 1];
    leaf.tabIndex = 0;
  }
})();
