// Reading state, chapters and "back to where I was" on the studio page (issue 30).
//
// The tree region is one drawing for every watcher, so each viewer's unread branches come
// apart: the page posts to the reading URL (the active path is read now) and gets the
// branches this viewer has not opened, each by its head and the node it forks from. A
// drawn branch whose head is unread gets a dot on its first node; a folded fork ("+N")
// with an unread branch behind it gets one on its button. "Next unread" jumps to the first
// unread branch; opening a node in the inspector reads its branch, and the dots follow.
(function () {
  "use strict";

  function csrf() {
    var studio = document.querySelector(".studio");
    try {
      return JSON.parse(studio.getAttribute("hx-headers"))["X-CSRFToken"];
    } catch (e) {
      return "";
    }
  }

  function dot() {
    var span = document.createElement("span");
    span.className = "unread-dot";
    span.dataset.unreadDot = "true";
    span.setAttribute("aria-hidden", "true");
    return span;
  }

  function mark(unread) {
    var tree = document.getElementById("tree");
    if (!tree) return;
    tree.querySelectorAll("[data-unread]").forEach(function (el) {
      el.removeAttribute("data-unread");
    });
    tree.querySelectorAll("[data-unread-dot]").forEach(function (el) {
      el.remove();
    });
    unread.forEach(function (b) {
      var head = CSS.escape(b.start_id);
      var li =
        tree.querySelector('li.item[data-via="' + head + '"]') ||
        (tree.querySelector('.node[data-first-id="' + head + '"]') || { closest: function () { return null; } }).closest("li.item");
      if (li && !li.classList.contains("active")) {
        var node = li.querySelector(".node");
        li.dataset.unread = "true";
        if (node) node.prepend(dot());
        return;
      }
      if (!b.parent_id) return;
      var fork = tree.querySelector('button.forks[data-forks-from="' + CSS.escape(b.parent_id) + '"]');
      if (fork && !fork.dataset.unread) {
        fork.dataset.unread = "true";
        fork.prepend(dot());
      }
    });
    var next = document.querySelector('[data-action="next-unread"]');
    if (next) {
      next.disabled = unread.length === 0;
      var count = next.querySelector("[data-unread-count]");
      if (count) count.textContent = String(unread.length);
      next.dataset.unread = String(unread.length);
    }
  }

  var pending = null;
  function refresh() {
    var tools = document.querySelector("[data-reading-url]");
    if (!tools) return;
    if (pending) clearTimeout(pending);
    pending = setTimeout(function () {
      pending = null;
      fetch(tools.dataset.readingUrl, {
        method: "POST",
        headers: { "X-CSRFToken": csrf() },
        credentials: "same-origin",
      })
        .then(function (r) {
          return r.ok ? r.json() : null;
        })
        .then(function (data) {
          if (data) mark(data.unread);
        })
        .catch(function () {});
    }, 50);
  }

  function touched(e) {
    var t = e.detail && (e.detail.target || e.detail.elt);
    if (!t) return;
    if (t.id === "tree" || t.id === "inspector" || (t.closest && t.closest("#tree"))) refresh();
  }
  document.addEventListener("htmx:oobAfterSwap", touched);
  document.addEventListener("htmx:afterSettle", touched);
  document.addEventListener("DOMContentLoaded", refresh);
})();
