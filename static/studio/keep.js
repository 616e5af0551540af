// What the artist is doing inside a live region survives the region being drawn again.
//
// The studio's regions (the tree, the strip, the characters…) are replaced whole whenever
// the session changes: after a run's step, another tab's write, an answer. Without this, a
// chapter title half typed, a character's field being edited, an open "director's notes"
// or "start a chapter" fold, a fork's branches opened with "+N", the turns loaded with
// "… N more" and the keyboard focus were all lost at every redraw. Before a region is
// swapped, the open folds, the fields whose value differs from what the server sent and
// the focused field are noted by where they are (the ids, entry ids, panels, characters
// and tool calls of their ancestors); after the swap they are put back where the same
// place exists. A form whose own write has just been answered is left as the answer draws
// it. The tree's opened forks and "… N more" folds are asked for again (the second part).
(function () {
  "use strict";

  var NAMED = [
    "id", "data-item", "data-entry-id", "data-panel", "data-character", "data-tool-call-id",
  ];

  function plainSig(el) {
    var classes = Array.prototype.slice.call(el.classList).sort().join(".");
    var name = el.getAttribute("name");
    return el.tagName + "." + classes + (name ? "@" + name : "");
  }

  // An element's step on a path from its region: its name when it has one, else its tag,
  // classes and field name with its place among the siblings that share them.
  function sig(el) {
    for (var i = 0; i < NAMED.length; i++) {
      var value = el.getAttribute(NAMED[i]);
      if (value !== null) return el.tagName + "[" + NAMED[i] + "=" + value + "]";
    }
    var base = plainSig(el);
    var n = 0;
    for (var s = el.previousElementSibling; s; s = s.previousElementSibling) {
      if (!NAMED.some(function (a) { return s.hasAttribute(a); }) && plainSig(s) === base) n++;
    }
    return base + "#" + n;
  }

  function pathOf(el, root) {
    var parts = [];
    for (; el && el !== root; el = el.parentElement) parts.unshift(sig(el));
    return el === root ? parts : null;
  }

  function find(root, path) {
    var el = root;
    for (var i = 0; el && i < path.length; i++) {
      var next = null;
      for (var c = el.firstElementChild; c && !next; c = c.nextElementSibling) {
        if (sig(c) === path[i]) next = c;
      }
      el = next;
    }
    return el;
  }

  function edited(field) {
    if (field.tagName === "SELECT") {
      return Array.prototype.some.call(field.options, function (o) {
        return o.selected !== o.defaultSelected;
      });
    }
    if (field.tagName === "TEXTAREA") return field.value !== field.defaultValue;
    var type = (field.getAttribute("type") || "text").toLowerCase();
    if (type === "checkbox" || type === "radio") return field.checked !== field.defaultChecked;
    if (["hidden", "submit", "button", "file", "image", "reset"].indexOf(type) >= 0) return false;
    return field.value !== field.defaultValue;
  }

  var answered = null; // the form (or its fold) whose write's answer is being swapped in
  document.addEventListener("htmx:beforeSwap", function (e) {
    var elt = e.detail && e.detail.requestConfig && e.detail.requestConfig.elt;
    var form = elt && elt.closest ? elt.closest("form") : null;
    var ok = e.detail.xhr && e.detail.xhr.status >= 200 && e.detail.xhr.status < 300;
    if (!form || !ok) return;
    answered = form.closest("details") || form;
    setTimeout(function () { answered = null; }, 0); // its swaps run before this
  });

  var kept = {}; // region id → what to put back after its swap
  document.addEventListener("htmx:oobBeforeSwap", function (e) {
    var root = e.detail && e.detail.target;
    if (!root || !root.id) return;
    var skip = answered && root.contains(answered) ? answered : null;
    function mine(el) { return !(skip && skip.contains(el)); }
    var note = { open: [], fields: [], focus: null };
    root.querySelectorAll("details[open]").forEach(function (d) {
      var path = mine(d) && pathOf(d, root);
      if (path) note.open.push(path);
    });
    root.querySelectorAll("input, textarea, select").forEach(function (f) {
      var path = mine(f) && edited(f) && pathOf(f, root);
      if (path) note.fields.push({ path: path, value: f.value, checked: f.checked });
    });
    // the focus only in a field: a button's place may hold another one after the redraw
    // (the next approval's), which a second keypress must not press
    var active = document.activeElement;
    var field = active && active.matches && active.matches("input, textarea, select");
    if (field && root.contains(active) && mine(active)) {
      var at = { path: pathOf(active, root) };
      try {
        at.start = active.selectionStart;
        at.end = active.selectionEnd;
      } catch (err) { /* not a text field */ }
      note.focus = at.path ? at : null;
    }
    if (note.open.length || note.fields.length || note.focus) kept[root.id] = note;
    else delete kept[root.id]; // nothing of an earlier swap is put back by a later one
  });

  document.addEventListener("htmx:oobAfterSwap", function (e) {
    var id = e.detail && e.detail.target && e.detail.target.id;
    var note = id && kept[id];
    var root = note && document.getElementById(id);
    if (!root) return;
    delete kept[id];
    note.open.forEach(function (path) {
      var d = find(root, path);
      if (d && d.tagName === "DETAILS") d.open = true;
    });
    note.fields.forEach(function (saved) {
      var f = find(root, saved.path);
      if (!f || f.disabled) return;
      if (f.type === "checkbox" || f.type === "radio") f.checked = saved.checked;
      else f.value = saved.value;
    });
    var focus = note.focus && find(root, note.focus.path);
    if (focus && typeof focus.focus === "function") {
      focus.focus({ preventScroll: true });
      if (note.focus.start != null && typeof focus.setSelectionRange === "function") {
        try { focus.setSelectionRange(note.focus.start, note.focus.end); } catch (err) { /* */ }
      }
    }
  });
})();

// The parts of the tree the artist opened stay open through its redraws: a fork's "+N"
// branches and the "… N more" folds. A redraw folds them again, and each is asked for
// anew (what it holds is the tree's as it is now). They are remembered as they are
// clicked, not as they are found open before a redraw: a click whose answer lands after
// the redraw (in the tree it replaced) is asked for again all the same. A fork is known
// by the node it hangs from; a fold of the active path by where it starts on the path,
// since its end moves as turns are added; a side branch's by its chain and the position
// it starts at. What opens inside a part opened again opens too, when it had been.
(function () {
  "use strict";

  var opened = {}; // the key of each fork and fold clicked open → true, for the page's life

  function partKey(button) {
    if (button.matches("button.forks")) return "forks:" + button.getAttribute("data-forks-from");
    var query = (button.getAttribute("hx-get") || "").split("?")[1] || "";
    var params = new URLSearchParams(query);
    if (params.has("path")) return "path:" + params.get("start");
    if (params.has("chain")) return "chain:" + params.get("chain") + ":" + params.get("from");
    return null;
  }

  var OPENERS = "li.more > button.fold, button.forks[data-forks-from]";

  function openers(root) {
    var found = Array.prototype.slice.call(root.querySelectorAll(OPENERS));
    if (root.matches && root.matches("li.more")) {
      var own = root.querySelector(":scope > button.fold");
      if (own) found.push(own);
    }
    return found;
  }

  function reopen(root) {
    if (!window.htmx) return;
    openers(root).forEach(function (button) {
      var key = partKey(button);
      if (!key || !opened[key] || button.hasAttribute("data-reopening")) return;
      button.setAttribute("data-reopening", "");
      // asked for here, not by a click: htmx may not have taken in the new tree yet
      var target = button.matches("button.forks") ? button : button.closest("li.more");
      window.htmx.ajax("GET", button.getAttribute("hx-get"), {
        source: button, target: target, swap: "outerHTML",
      });
    });
  }

  document.addEventListener("click", function (e) {
    var button = e.target.closest && e.target.closest("#tree button.fold, #tree button.forks");
    var key = button && partKey(button);
    if (key) opened[key] = true;
  }, true);
  document.addEventListener("htmx:oobAfterSwap", function (e) {
    var root = e.detail && e.detail.target;
    if (root && root.id === "tree") reopen(document.getElementById("tree"));
  });
  document.addEventListener("htmx:load", function (e) {
    var el = e.target;
    if (el && el.closest && el.closest("#tree")) reopen(el);
  });
})();
