// The studio page: socket state on <body>, refused writes shown, one-click rewinds, chips
// that fill in the prompt, tabs on narrow screens, the tree's keyboard moves and scrolling,
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

  // A form whose HTML is kept and shared (a tree turn's chapter, a strip panel's look and
  // variant forms) names no leaf: it sends the leaf the tree shows when it is submitted,
  // so that a write made on a page that has moved on is refused as stale.
  document.addEventListener("htmx:configRequest", function (e) {
    var form = e.detail && e.detail.elt;
    if (!form || !form.matches || !form.matches("form[data-fills-leaf]")) return;
    var tree = document.getElementById("tree");
    e.detail.parameters.expected_leaf_id = tree ? tree.dataset.leafId : "";
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

  // Keep the newest narration in view: the end of what streams, and the beginning of a
  // committed reply too long for the box (what the director did comes first in it; the
  // rest is a scroll away), so a short box on a phone never opens mid-sentence.
  document.addEventListener("htmx:wsAfterMessage", function () {
    var stream = document.getElementById("stream");
    if (!stream) return;
    stream.scrollTop = stream.scrollHeight;
    var reply = stream.querySelector("#stream-text > p:last-child");
    if (!reply) return;
    var top = reply.getBoundingClientRect().top - stream.getBoundingClientRect().top;
    if (top < 0) stream.scrollTop += top;
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

  // --- "continue from here": a turn of the tree, a panel of the strip, a step of the
  // inspector. One click appends the rewind; the regions come back out of band.
  function rewindTo(entryId, from) {
    var studio = document.querySelector(".studio");
    var tree = document.getElementById("tree");
    if (!studio || !entryId) return;
    // ``source``: the element asking, inside .studio, so the request carries its
    // hx-headers (the CSRF token); nothing is swapped but the regions out of band.
    htmx.ajax("POST", studio.dataset.rewindUrl, {
      source: from || studio,
      values: { entry_id: entryId, expected_leaf_id: tree ? tree.dataset.leafId : "" },
      swap: "none",
    });
  }
  document.addEventListener("click", function (e) {
    var button = e.target.closest && e.target.closest(
      '[data-action="continue-turn"], [data-action="continue-panel"], [data-action="continue-step"]'
    );
    if (!button) return;
    e.preventDefault();
    rewindTo(button.dataset.target, button);
  });

  // --- chips: each fills in a command of the director's grammar (one command a line).
  document.addEventListener("click", function (e) {
    var chip = e.target.closest && e.target.closest("[data-fill]");
    if (!chip) return;
    var box = document.querySelector('#prompt-form textarea[name="text"]');
    if (!box) return;
    var text = box.value;
    box.value = text && text.slice(-1) !== "\n" ? text + "\n" + chip.dataset.fill : text + chip.dataset.fill;
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
  });

  // --- "Draw it": the director's offered /draw line, put in the prompt box and sent.
  document.addEventListener("click", function (e) {
    var offer = e.target.closest && e.target.closest('[data-action="draw-it"]');
    if (!offer) return;
    var form = document.getElementById("prompt-form");
    var box = form && form.querySelector('textarea[name="text"]');
    if (!box) return;
    box.value = offer.dataset.prompt;
    offer.disabled = true;
    form.requestSubmit();
  });

  // --- tabs (narrow screens): the story, the tree, the characters.
  document.addEventListener("click", function (e) {
    var tab = e.target.closest && e.target.closest("[data-tab-target]");
    if (!tab) return;
    var columns = document.querySelector(".studio .columns");
    if (!columns) return;
    columns.dataset.tab = tab.dataset.tabTarget;
    document.querySelectorAll("[data-tab-target]").forEach(function (t) {
      t.setAttribute("aria-selected", t === tab ? "true" : "false");
    });
    if (tab.dataset.tabTarget === "tree") showLeaf(true);
  });

  // --- the newest turn in view: the tree pane scrolls to it whenever the leaf moves.
  var shownLeaf = null;
  function showLeaf(force) {
    var tree = document.getElementById("tree");
    if (!tree) return;
    if (!force && tree.dataset.leafId === shownLeaf) return;
    var node = tree.querySelector('.node[data-leaf="true"]');
    if (!node) {
      var active = tree.querySelectorAll('.node[data-active="true"]');
      node = active[active.length - 1];
    }
    if (!node || !tree.offsetParent) return; // hidden (another tab): when it shows
    shownLeaf = tree.dataset.leafId;
    var box = tree.getBoundingClientRect();
    var at = node.getBoundingClientRect();
    if (at.top < box.top || at.bottom > box.bottom) {
      tree.scrollTop += at.top - box.top - Math.max(0, (box.height - at.height) / 2);
    }
  }
  // A redrawn tree (every committed fact redraws it) keeps the reader's place, unless the
  // leaf moved: then the newest turn is brought into view.
  var treeScroll = 0;
  function isTree(e) { return e.detail && e.detail.target && e.detail.target.id === "tree"; }
  var treeFocus = null; // the node a keyboard user was on when the tree was redrawn
  document.addEventListener("htmx:oobBeforeSwap", function (e) {
    if (!isTree(e)) return;
    treeScroll = e.detail.target.scrollTop;
    var focused = document.activeElement;
    var node = focused && focused.closest ? focused.closest("#tree .node") : null;
    treeFocus = node ? node.dataset.entryId : null;
  });
  var placed = null; // the tree element placed last (htmx tells of one swap more than once)
  document.addEventListener("htmx:oobAfterSwap", function (e) {
    var tree = document.getElementById("tree");
    if (!isTree(e) || !tree || tree === placed) return;
    placed = tree;
    if (tree.dataset.leafId === shownLeaf) tree.scrollTop = treeScroll;
    else showLeaf(true);
  });
  document.addEventListener("DOMContentLoaded", function () { showLeaf(true); });

  // --- the tree: ↑/↓ the turn before/after on its line (↑ from a branch's first turn: the
  // turn it forks from), ←/→ the other turns hanging from the same node; Enter continues.
  function nodes() {
    return Array.prototype.slice.call(document.querySelectorAll("#tree .node"));
  }
  function nodeOf(li) {
    return li ? li.querySelector(":scope > .card > .node") : null;
  }
  function itemSibling(li, forward) {
    var el = forward ? li.nextElementSibling : li.previousElementSibling;
    while (el && !el.matches("li.item")) el = forward ? el.nextElementSibling : el.previousElementSibling;
    return el;
  }
  function up(li) {
    return itemSibling(li, false) || li.parentElement.closest("li.item");
  }
  function down(li) {
    return itemSibling(li, true) ||
      li.querySelector(":scope > ol.forks > li.branch > ol.chain > li.item");
  }
  // A filter hides cards, not their branches: the keys step over the hidden ones.
  function filteredOut(li) {
    return li.classList.contains("filtered-out");
  }
  function shownFrom(li, step) {
    var at = step(li);
    while (at && filteredOut(at)) at = step(at);
    return at;
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
    var li = node.closest("li.item");
    var next = null;
    if (e.key === "ArrowUp") {
      next = nodeOf(shownFrom(li, up));
    } else if (e.key === "ArrowDown") {
      next = nodeOf(shownFrom(li, down));
    } else if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      var siblings = nodes().filter(function (n) {
        return n.dataset.parentId === node.dataset.parentId && !filteredOut(n.closest("li.item"));
      });
      next = siblings[siblings.indexOf(node) + (e.key === "ArrowRight" ? 1 : -1)];
    } else if (e.key === "Enter") {
      e.preventDefault();
      if (node.dataset.leaf !== "true") rewindTo(node.dataset.entryId, node);
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

  // After the tree is redrawn, the node a keyboard user was on keeps the focus (a live
  // update must not throw them back to the top of the page); else the tree is made
  // reachable with Tab again (the leaf first).
  document.addEventListener("htmx:oobAfterSwap", function (e) {
    var again = isTree(e) && treeFocus
      ? document.querySelector('#tree .node[data-entry-id="' + CSS.escape(treeFocus) + '"]')
      : null;
    if (isTree(e)) treeFocus = null;
    if (again && again !== document.activeElement) focusNode(again);
    tabbable();
  });
  document.addEventListener("htmx:afterSwap", function () { tabbable(); });
  document.addEventListener("DOMContentLoaded", function () { tabbable(); });
  function tabbable() {
    var all = nodes();
    if (!all.length || all.some(function (n) { return n.tabIndex === 0; })) return;
    var leaf = document.querySelector('#tree .node[data-leaf="true"]') || all[all.length - 1];
    leaf.tabIndex = 0;
  }
})();

// --- share links: the copy button beside a link just made (shown once). The field stays
// selected when the clipboard is not available (plain http), so Ctrl+C still copies it.
(function () {
  "use strict";
  document.addEventListener("click", function (e) {
    var button = e.target.closest('[data-action="copy-share-url"]');
    if (!button) return;
    var field = button.parentElement.querySelector("[data-share-url]");
    if (!field) return;
    field.focus();
    field.select();
    function copied() { button.textContent = button.dataset.copied || button.textContent; }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(copied, function () {});
    } else if (document.execCommand && document.execCommand("copy")) {
      copied();
    }
  });
})();

// --- the tree's tools: filters, and a search hit's jump to its node. The filters hide the
// cards of the turns drawn that do not match (their branches stay, so a match below a
// hidden card still shows); "show all" brings every card back. A redrawn tree or a loaded
// fold is filtered again.
(function () {
  "use strict";

  var filter = null; // "labelled" | "prompts" | "panels" | null (everything)
  var TESTS = {
    labelled: function (node) { return Boolean(node.querySelector(".label-chip")); },
    prompts: function (node) { return Boolean(node.querySelector(':scope > .icon[data-icon="you"]')); },
    panels: function (node) { return Boolean(node.querySelector(":scope > .thumbs")); },
  };

  function applyFilter() {
    var items = document.querySelectorAll("#tree li.item");
    var hidden = 0;
    items.forEach(function (li) {
      var node = li.querySelector(":scope > .card > .node");
      var out = Boolean(filter && node && !TESTS[filter](node));
      li.classList.toggle("filtered-out", out);
      if (out) hidden += 1;
    });
    document.querySelectorAll(".tree-filters [data-filter]").forEach(function (b) {
      if (b.dataset.filter === "all") b.hidden = !filter;
      else b.setAttribute("aria-pressed", b.dataset.filter === filter ? "true" : "false");
    });
    var count = document.querySelector("[data-filter-count]");
    if (count) {
      count.hidden = !filter;
      count.textContent = filter
        ? count.dataset.text.replace("{hidden}", hidden).replace("{total}", items.length)
        : "";
    }
  }

  document.addEventListener("click", function (e) {
    var button = e.target.closest && e.target.closest(".tree-filters [data-filter]");
    if (!button) return;
    var wanted = button.dataset.filter;
    filter = wanted === "all" || wanted === filter ? null : wanted;
    applyFilter();
  });
  function treeChanged(e) {
    var t = e.detail && (e.detail.target || e.detail.elt);
    if (!t || !(t.id === "tree" || (t.closest && t.closest("#tree")))) return;
    applyFilter();
    if (jumped) markJumped(findNode(jumped), false); // the redrawn tree keeps the mark
  }
  document.addEventListener("htmx:oobAfterSwap", treeChanged);
  document.addEventListener("htmx:afterSettle", treeChanged);

  // A hit's jump: its node, when the tree draws it, is scrolled to and marked; the
  // inspector opens on it either way (the jump's own hx-trigger="load").
  var jumped = null; // {node, entry} of the last jump
  function findNode(where) {
    var tree = document.getElementById("tree");
    if (!tree) return null;
    return (
      tree.querySelector('.node[data-entry-id="' + CSS.escape(where.node) + '"]') ||
      tree.querySelector('.node[data-first-id="' + CSS.escape(where.entry) + '"]') ||
      tree.querySelector('.node[data-entry-id="' + CSS.escape(where.entry) + '"]')
    );
  }
  function markJumped(node, scroll) {
    var tree = document.getElementById("tree");
    if (!tree) return;
    tree.querySelectorAll(".node.jumped").forEach(function (n) {
      n.classList.remove("jumped");
      n.removeAttribute("data-jumped");
    });
    if (!node) return;
    node.classList.add("jumped");
    node.dataset.jumped = "true";
    if (!scroll) return;
    var box = tree.getBoundingClientRect();
    var at = node.getBoundingClientRect();
    if (at.top < box.top || at.bottom > box.bottom) {
      tree.scrollTop += at.top - box.top - Math.max(0, (box.height - at.height) / 2);
    }
  }
  function jumpTo(jump) {
    var note = document.querySelector("[data-jump-note]");
    jumped = { node: jump.dataset.node, entry: jump.dataset.entry };
    var node = findNode(jumped);
    if (note) {
      note.hidden = Boolean(node);
      note.textContent = node ? "" : note.dataset.folded;
    }
    var li = node && node.closest("li.item");
    if (filter && li && li.classList.contains("filtered-out")) {
      filter = null; // what was asked for is in view, whatever the filter hid
      applyFilter();
    }
    markJumped(node, true);
  }
  document.addEventListener("htmx:load", function (e) {
    var el = e.detail && e.detail.elt;
    if (el && el.id === "tree-jump" && el.dataset.node) jumpTo(el);
  });
})();

// --- what the forms do once their request is answered (no hx-on attributes: the site's
// Content-Security-Policy runs no inline script). The prompt box empties once a prompt
// was taken (2xx), and keeps its text otherwise; "Share up to here" opens the share panel
// its link was added to.
(function () {
  "use strict";
  document.addEventListener("htmx:afterRequest", function (e) {
    var form = e.target;
    if (!form || !form.matches) return;
    if (form.matches("form[data-reset-when-sent]")) {
      var status = e.detail.xhr ? e.detail.xhr.status : 0;
      if (status >= 200 && status < 300) form.reset();
    }
    if (form.matches("form[data-opens-share]")) {
      var share = document.getElementById("share");
      if (share) share.open = true;
    }
  });
})();

// --- the live socket comes back fast after a restart. htmx's ws extension waits a random
// time up to 2^n seconds between tries (up to 64 s); here the first try is after 0.5 s,
// the next after 0.75 s, then every second, so a page is back within two seconds of the
// server answering. After two minutes down it tries every 5 s. The
// extension reconnects by itself only after an abnormal close; a server that says it is
// going away (1001, a restart that closes its sockets) is tried again the same way.
// Whatever the close, the server re-sends every region on connect (consumers.py).
(function () {
  "use strict";
  var FAST_TRIES = 120; // about two minutes of tries at most a second apart
  function delay(tries) {
    if (tries >= FAST_TRIES) return 5000;
    return Math.min(500 + 250 * tries, 1000);
  }
  if (window.htmx) htmx.config.wsReconnectDelay = delay;

  var RETRIED_BY_HTMX = [1006, 1011, 1012, 1013];
  var leaving = false;
  var own = 0; // tries made here (a close htmx does not retry)
  window.addEventListener("beforeunload", function () { leaving = true; });
  document.addEventListener("htmx:wsOpen", function () { own = 0; });
  document.addEventListener("htmx:wsClose", function (e) {
    var event = e.detail && e.detail.event;
    var wrapper = e.detail && e.detail.socketWrapper;
    if (leaving || !event || !wrapper || RETRIED_BY_HTMX.indexOf(event.code) >= 0) return;
    if (!document.body.contains(e.target)) return; // the socket's element is gone
    setTimeout(function () {
      if (!leaving && document.body.dataset.ws !== "open") wrapper.reconnect();
    }, delay(own++));
  });
})();

// --- Read mode: the comic as its readers see it (pages, captions, speech), in place of
// the working view (tree, strip with narration, prompt box). The pages are read from the
// server when the mode opens and again whenever the strip changes; "#read" in the address
// keeps the mode across a reload.
(function () {
  "use strict";
  var timer = null;
  function box() { return document.getElementById("reading"); }
  function reading() { var s = document.querySelector(".studio"); return s && s.dataset.mode === "read"; }
  function load() {
    var el = box();
    if (!el || !window.htmx) return;
    htmx.ajax("GET", el.dataset.readUrl, { target: el, swap: "innerHTML" });
  }
  function setMode(mode) {
    var studio = document.querySelector(".studio");
    var el = box();
    if (!studio || !el) return;
    studio.dataset.mode = mode;
    document.querySelectorAll("[data-mode-target]").forEach(function (b) {
      b.setAttribute("aria-pressed", b.dataset.modeTarget === mode ? "true" : "false");
    });
    el.hidden = mode !== "read";
    if (mode === "read") load();
    var url = location.pathname + location.search + (mode === "read" ? "#read" : "");
    history.replaceState(history.state, "", url);
    document.dispatchEvent(new CustomEvent("studio:mode", { detail: { mode: mode } }));
  }
  document.addEventListener("click", function (e) {
    var button = e.target.closest && e.target.closest("[data-mode-target]");
    if (!button) return;
    e.preventDefault();
    setMode(button.dataset.modeTarget);
  });
  document.addEventListener("DOMContentLoaded", function () {
    if (location.hash === "#read") setMode("read");
  });
  document.addEventListener("htmx:oobAfterSwap", function (e) {
    if (!reading() || !e.detail || !e.detail.target || e.detail.target.id !== "strip") return;
    clearTimeout(timer);
    timer = setTimeout(load, 250); // a run's facts come in bursts: one read after it
  });
  // A panel moved earlier or later: the pages are read again, and the focus stays on the
  // same panel's button (its other one once it reached an end), not lost at the page top.
  var moved = null;
  document.addEventListener("click", function (e) {
    var button = e.target.closest && e.target.closest("#reading .arrange button");
    if (!button) return;
    moved = { entry: button.form.dataset.entryId, action: button.dataset.action };
  });
  document.addEventListener("htmx:afterSwap", function (e) {
    if (!moved || !e.detail || !e.detail.target || e.detail.target.id !== "reading") return;
    var form = box().querySelector('.arrange[data-entry-id="' + CSS.escape(moved.entry) + '"]');
    var action = moved.action;
    moved = null;
    if (!form) return;
    var buttons = Array.prototype.filter.call(form.querySelectorAll("button"), function (b) {
      return !b.disabled;
    });
    var same = buttons.filter(function (b) { return b.dataset.action === action; })[0];
    (same || buttons[0] || form).focus();
  });
})();

// --- the newest panel in view. After a turn the strip scrolls to its newest panel, clear
// of the sticky prompt box (and, on a narrow screen, of the sticky tabs), unless the
// reader scrolled away from it on purpose; sending a prompt brings it back to the newest.
(function () {
  "use strict";
  var follow = true; // the reader is at the newest panel (or has not scrolled away)
  var newest = null; // the newest panel's entry id, as last seen
  var GAP = 8;

  function lastPanel() {
    var all = document.querySelectorAll("#strip [data-panel]");
    return all.length ? all[all.length - 1] : null;
  }
  // The part of the window that nothing sticky covers once the page scrolls: the dock
  // sticks to the bottom, and the tabs (narrow screens) to the top.
  function band() {
    var top = 0;
    var bottom = window.innerHeight;
    var dock = document.querySelector(".work .dock");
    if (dock && dock.offsetParent) bottom -= dock.offsetHeight;
    var tabs = document.querySelector(".studio .tabs");
    if (tabs && tabs.offsetParent && getComputedStyle(tabs).position === "sticky") {
      top += tabs.offsetHeight;
    }
    return { top: top, bottom: bottom };
  }
  function seen(el) {
    var b = band();
    var r = el.getBoundingClientRect();
    return r.bottom > b.top + 24 && r.top < b.bottom - 24;
  }
  function showNewest() {
    var el = lastPanel();
    if (!el || !el.offsetParent) return; // no panel, or another tab or mode shows
    var b = band();
    var r = el.getBoundingClientRect();
    if (r.top >= b.top && r.bottom <= b.bottom) return; // already whole in view
    var room = b.bottom - b.top - 2 * GAP;
    var by = r.height <= room ? r.bottom - (b.bottom - GAP) : r.top - (b.top + GAP);
    window.scrollBy(0, by);
  }
  function settle() {
    showNewest();
    // the dock may grow as the controls change (an approval); place it again once laid out
    requestAnimationFrame(function () { if (follow) showNewest(); });
  }
  window.addEventListener("scroll", function () {
    var el = lastPanel();
    if (!el || !el.offsetParent) return;
    follow = seen(el);
  }, { passive: true });
  document.addEventListener("submit", function (e) {
    if (e.target && e.target.id === "prompt-form") follow = true;
  }, true);
  document.addEventListener("htmx:oobAfterSwap", function (e) {
    if (!e.detail || !e.detail.target || e.detail.target.id !== "strip") return;
    var el = lastPanel();
    var id = el ? el.dataset.entryId : null;
    if (id === newest) return;
    newest = id;
    if (follow) settle();
  });
  document.addEventListener("click", function (e) {
    var tab = e.target.closest && e.target.closest('[data-tab-target="work"], [data-mode-target="work"]');
    if (tab && follow) setTimeout(settle, 0);
  });
  document.addEventListener("DOMContentLoaded", function () {
    var el = lastPanel();
    newest = el ? el.dataset.entryId : null;
    if (el) settle();
    // The dock grows as a run goes on (its narration, an approval): while the reader is
    // with the newest panel, it stays clear of it.
    var dock = document.querySelector(".work .dock");
    if (dock && window.ResizeObserver) {
      new ResizeObserver(function () { if (follow) showNewest(); }).observe(dock);
    }
  });
})();

// --- an answer's regions, told to the socket. A write's answer carries the regions it
// changed; the command that made the change also announced it to the session's sockets.
// While a write is under way the page asks its socket to hold its regions back
// ("writing"), and once the answer is swapped in it says which regions it now shows
// ("shown", the answer's X-Jaiweb-Regions header: each region's name and digest, and how
// many of the socket's frames the page had then), so the socket sends only what the
// answer did not bring.
(function () {
  "use strict";
  var socket = null;
  var frames = 0; // frames the socket brought since it opened, counted as the server does
  var writes = 0; // writes under way
  document.addEventListener("htmx:wsOpen", function (e) {
    socket = e.detail && e.detail.socketWrapper;
    frames = 0;
    // a new socket (a reconnect) holds its regions back for the writes still under way
    for (var i = 0; socket && i < writes; i++) socket.send(JSON.stringify({ type: "writing" }));
  });
  document.addEventListener("htmx:wsBeforeMessage", function () { frames += 1; });
  function writing(detail) {
    var verb = detail && detail.requestConfig && detail.requestConfig.verb;
    return !!verb && verb.toLowerCase() !== "get";
  }
  document.addEventListener("htmx:beforeRequest", function (e) {
    if (!writing(e.detail)) return;
    writes += 1;
    if (socket) socket.send(JSON.stringify({ type: "writing" }));
  });
  document.addEventListener("htmx:afterRequest", function (e) {
    if (!writing(e.detail)) return;
    writes = Math.max(0, writes - 1);
    if (!socket) return;
    var xhr = e.detail.xhr;
    var regions = (xhr && xhr.getResponseHeader("X-Jaiweb-Regions")) || "";
    // "seen": a region the socket sent after these frames came after the answer's
    socket.send(JSON.stringify({ type: "shown", regions: regions, seen: frames }));
  });
})();
