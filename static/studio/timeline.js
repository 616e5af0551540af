// The timeline: the whole session tree as it was after the first N entries of its journal.
//
// The page ships the timeline once (journal.timeline's rows). Nodes come in the order they
// appeared, so the tree at position N is a prefix of them; a position costs the active
// path (its depth) and the cards in view (the tree draws only those: a long session's
// thousands of turns are not in the page at once). Every text from the journal goes in
// with textContent, never as HTML.
(function () {
  "use strict";
  const root = document.getElementById("timeline");
  const slider = document.getElementById("timeline-slider");
  if (!root || !slider) return;
  const data = JSON.parse(document.getElementById("timeline-data").textContent);
  const words = JSON.parse(document.getElementById("timeline-words").textContent);
  const tree = document.getElementById("timeline-tree");
  const edges = document.getElementById("timeline-edges");
  const SVG = "http://www.w3.org/2000/svg";
  const COL = 212, ROW = 118, W = 196, H = 104, PAD = 8; // the grid: lanes × depths
  const RECENT = 6; // steps listed up to the current one

  const nodes = data.nodes.map((r) => ({
    id: r[0], parent: r[1], depth: r[2], lane: r[3], step: r[4],
    tag: r[5], label: r[6], prompt: r[7], promptStep: r[8], el: null, edge: null, thumbs: 0,
  }));
  const panels = data.panels.map((r) => ({ node: r[0], step: r[1], image: r[2], el: null }));
  const steps = data.steps.map((r) => ({ ms: r[0], what: r[1], node: r[2], active: r[3], detail: r[4] }));
  // the canvas at each number of nodes shown: the widest lane and deepest row so far
  const extent = [[0, 0]];
  for (const n of nodes) {
    const [lanes, depths] = extent[extent.length - 1];
    extent.push([Math.max(lanes, n.lane + 1), Math.max(depths, n.depth + 1)]);
  }
  const total = steps.length;
  const lang = document.documentElement.lang || undefined;
  const clock = new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "medium" });

  let position = 0; // what is drawn
  let nodesShown = 0; // nodes[0 … nodesShown - 1] had appeared by then

  function fill(template, values) {
    return template.replace(/%\((\w+)\)s/g, (all, key) => (key in values ? values[key] : all));
  }
  function named(node, at) {
    return node.promptStep && at >= node.promptStep
      ? { tag: "you", label: node.prompt }
      : { tag: node.tag, label: node.label };
  }
  function toolWords(names) {
    return names.split(",").filter(Boolean).map((t) => words.tools[t] || t).join(", ");
  }
  function describe(i) {
    const s = steps[i];
    const at = i + 1;
    const template = words.what[s.what] || s.what;
    if (s.what === "you") return fill(template, { text: named(nodes[s.node], at).label });
    if (s.what === "rewind") return fill(template, { text: named(nodes[s.active], at).label });
    return fill(template, { tool: toolWords(s.detail) });
  }

  // Where each node sits, and each node's panels (their indexes, in order).
  const cells = new Map();
  const panelsOf = nodes.map(() => []);
  nodes.forEach((n, i) => cells.set(n.lane * 1e6 + n.depth, i));
  panels.forEach((p, k) => panelsOf[p.node].push(k));
  const children = nodes.map(() => []);
  nodes.forEach((n, i) => { if (n.parent !== null) children[n.parent].push(i); });

  // Only the cards in (and just around) the tree's view are in the page: a long session's
  // 1,000s of turns cost a draw only for the few dozen one can see.
  const attached = new Map(); // node index → its card, in the page now
  const edgeOf = new Map(); // child node index → its edge, in the page now

  function card(i) {
    const n = nodes[i];
    if (n.el) return n.el;
    const el = document.createElement("div");
    el.className = "tl-node";
    el.dataset.node = String(i);
    el.dataset.entryId = n.id;
    el.dataset.lane = String(n.lane);
    el.dataset.depth = String(n.depth);
    if (n.parent !== null) el.dataset.parentId = nodes[n.parent].id;
    el.style.left = PAD + n.lane * COL + "px";
    el.style.top = PAD + n.depth * ROW + "px";
    el.style.width = W + "px";
    el.style.height = H + "px";
    const head = document.createElement("div");
    head.className = "tl-head";
    const tag = document.createElement("span");
    tag.className = "tl-tag";
    const label = document.createElement("span");
    label.className = "tl-label";
    head.append(tag, label);
    const thumbs = document.createElement("div");
    thumbs.className = "tl-thumbs";
    el.append(head, thumbs);
    n.el = el;
    n.thumbs = 0;
    return el;
  }
  function edge(i) {
    const n = nodes[i], p = nodes[n.parent];
    if (n.edge) return n.edge;
    const x1 = PAD + p.lane * COL + W / 2, y1 = PAD + p.depth * ROW + H;
    const x2 = PAD + n.lane * COL + W / 2, y2 = PAD + n.depth * ROW;
    const bend = (y2 - y1) / 2;
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", `M${x1},${y1} C${x1},${y1 + bend} ${x2},${y2 - bend} ${x2},${y2}`);
    path.setAttribute("class", "tl-edge");
    n.edge = path;
    return path;
  }
  function thumb(k) {
    const p = panels[k];
    if (p.el) return p.el;
    const img = document.createElement("img");
    img.className = "tl-thumb";
    img.loading = "lazy";
    img.alt = "";
    img.dataset.imageId = p.image;
    img.src = root.dataset.panelUrl.replace("IMAGE_ID", encodeURIComponent(p.image));
    p.el = img;
    return img;
  }
  function dress(i) {
    // a card as it is at this position: its name, its panels so far, on the path or not
    const n = nodes[i], el = n.el;
    const { tag, label } = named(n, position);
    if (el.dataset.tag !== tag || n.drawn !== label) {
      el.querySelector(".tl-tag").textContent = words.tags[tag] || tag;
      el.querySelector(".tl-label").textContent = label;
      el.dataset.tag = tag;
      n.drawn = label;
    }
    const mine = panelsOf[i];
    let count = 0;
    while (count < mine.length && panels[mine[count]].step <= position) count++;
    if (count !== n.thumbs) {
      el.querySelector(".tl-thumbs").replaceChildren(...mine.slice(0, count).map(thumb));
      n.thumbs = count;
    }
    if (onPath.has(i)) el.dataset.active = "true";
    else delete el.dataset.active;
    if (i === here) el.dataset.here = "true";
    else delete el.dataset.here;
  }

  let onPath = new Set();
  let here = null;

  function render() {
    // the cells in view, a card's width and height beyond each side
    const left = Math.floor((tree.scrollLeft - PAD) / COL) - 1;
    const right = Math.ceil((tree.scrollLeft + tree.clientWidth) / COL) + 1;
    const top = Math.floor((tree.scrollTop - PAD) / ROW) - 1;
    const bottom = Math.ceil((tree.scrollTop + tree.clientHeight) / ROW) + 1;
    const [lanes, depths] = extent[nodesShown];
    const want = new Set();
    for (let lane = Math.max(0, left); lane <= Math.min(lanes - 1, right); lane++) {
      for (let depth = Math.max(0, top); depth <= Math.min(depths - 1, bottom); depth++) {
        const i = cells.get(lane * 1e6 + depth);
        if (i !== undefined && i < nodesShown) want.add(i);
      }
    }
    for (const [i, el] of attached) if (!want.has(i)) { el.remove(); attached.delete(i); }
    for (const i of want) {
      if (!attached.has(i)) { tree.appendChild(card(i)); attached.set(i, nodes[i].el); }
      dress(i);
    }
    // edges into the cards in view and out of them to the cards shown
    const wanted = new Set();
    for (const i of want) {
      if (nodes[i].parent !== null) wanted.add(i);
      for (const c of children[i]) if (c < nodesShown) wanted.add(c);
    }
    for (const [i, path] of edgeOf) if (!wanted.has(i)) { path.remove(); edgeOf.delete(i); }
    for (const i of wanted) {
      if (!edgeOf.has(i)) { edges.appendChild(edge(i)); edgeOf.set(i, nodes[i].edge); }
      nodes[i].edge.classList.toggle("active", onPath.has(i));
    }
  }

  function draw(target) {
    target = Math.max(1, Math.min(total, target));
    position = target;
    while (nodesShown < nodes.length && nodes[nodesShown].step <= target) nodesShown++;
    while (nodesShown > 0 && nodes[nodesShown - 1].step > target) nodesShown--;
    // the active path: where the session stood after this entry, and the way up to it
    onPath = new Set();
    here = steps[target - 1].active;
    for (let i = here; i !== null; i = nodes[i].parent) onPath.add(i);
    // the canvas as big as what is shown
    const [lanes, depths] = extent[nodesShown];
    edges.setAttribute("width", String(PAD * 2 + lanes * COL));
    edges.setAttribute("height", String(PAD * 2 + depths * ROW));
    keepInView(nodes[here]);
    render();
    root.dataset.position = String(target);
    if (Number(slider.value) !== target) slider.value = String(target);
    say(target);
    rememberPosition();
  }

  function say(target) {
    const i = target - 1;
    document.getElementById("timeline-step").textContent = fill(words.step, { n: target, total });
    const when = document.getElementById("timeline-time");
    when.dateTime = new Date(steps[i].ms).toISOString();
    when.textContent = clock.format(new Date(steps[i].ms));
    const what = document.getElementById("timeline-what");
    what.textContent = describe(i);
    what.dataset.what = steps[i].what;
    const recent = document.getElementById("timeline-recent");
    const items = [];
    for (let j = Math.max(0, i - RECENT + 1); j <= i; j++) {
      const li = document.createElement("li");
      li.dataset.step = String(j + 1);
      li.dataset.what = steps[j].what;
      if (j === i) li.className = "current";
      const time = document.createElement("time");
      time.textContent = new Date(steps[j].ms).toLocaleTimeString(lang);
      li.append(time, " ", describe(j));
      items.push(li);
    }
    recent.replaceChildren(...items);
  }

  // Scroll the tree (never the window: the slider stays under the pointer) to the card.
  function keepInView(n) {
    const left = PAD + n.lane * COL, top = PAD + n.depth * ROW;
    if (left < tree.scrollLeft) tree.scrollLeft = left - PAD;
    else if (left + W > tree.scrollLeft + tree.clientWidth) tree.scrollLeft = left + W - tree.clientWidth + PAD;
    if (top < tree.scrollTop) tree.scrollTop = top - PAD;
    else if (top + H > tree.scrollTop + tree.clientHeight) tree.scrollTop = top + H - tree.clientHeight + PAD;
  }

  // A scroll or a resized window brings other cells into view: draw them, once a frame.
  let scrolled = false;
  function viewMoved() {
    if (scrolled) return;
    scrolled = true;
    requestAnimationFrame(() => { scrolled = false; render(); });
  }
  tree.addEventListener("scroll", viewMoved);
  window.addEventListener("resize", viewMoved);

  // The address names the position (a link to it opens there), rewritten at most every 300 ms.
  let addressTimer = null;
  function rememberPosition() {
    if (addressTimer) return;
    addressTimer = setTimeout(() => {
      addressTimer = null;
      const url = new URL(window.location.href);
      url.searchParams.set("at", String(position));
      history.replaceState(null, "", url);
    }, 300);
  }

  // Dragging fires many inputs: draw once per frame, at the latest one.
  let wanted = null;
  function go(target) {
    if (wanted === null) requestAnimationFrame(() => { const t = wanted; wanted = null; draw(t); });
    wanted = target;
  }

  const play = root.querySelector('[data-action="timeline-play"]');
  let player = null;
  function stop() {
    if (player === null) return;
    clearInterval(player);
    player = null;
    play.setAttribute("aria-pressed", "false");
    play.textContent = "▶";
    play.setAttribute("aria-label", play.dataset.play);
    play.title = play.dataset.play;
  }
  function start() {
    if (position >= total) draw(1);
    const stride = Math.max(1, Math.ceil(total / 150)); // a whole replay lasts ≤ 30 s
    player = setInterval(() => {
      draw(position + stride);
      if (position >= total) stop();
    }, 200);
    play.setAttribute("aria-pressed", "true");
    play.textContent = "❚❚";
    play.setAttribute("aria-label", play.dataset.pause);
    play.title = play.dataset.pause;
  }

  slider.addEventListener("input", () => { stop(); go(Number(slider.value)); });
  play.addEventListener("click", () => (player === null ? start() : stop()));
  const moves = {
    "timeline-start": () => 1,
    "timeline-back": () => position - 1,
    "timeline-forward": () => position + 1,
    "timeline-end": () => total,
  };
  for (const [action, to] of Object.entries(moves)) {
    root.querySelector(`[data-action="${action}"]`).addEventListener("click", () => { stop(); draw(to()); });
  }
  // Arrows step anywhere on the page (the slider handles its own keys when focused).
  document.addEventListener("keydown", (event) => {
    const t = event.target;
    if (t === slider || t.closest("input, textarea, select, [contenteditable]")) return;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const by = event.shiftKey ? 10 : 1;
    const keys = {
      ArrowLeft: () => position - by,
      ArrowRight: () => position + by,
      Home: () => 1,
      End: () => total,
    };
    if (!(event.key in keys)) return;
    event.preventDefault();
    stop();
    draw(keys[event.key]());
  });

  draw(Number(root.dataset.position) || total);
})();
