// The timeline: the whole session tree as it was after the first N entries of its journal.
//
// The page ships the timeline once (journal.timeline's rows). Nodes and panels come in the
// order they appeared, so the tree at position N is a prefix of each list: moving from one
// position to another shows or hides only what lies between them, and repaints the active
// path (its length, not the session's size). Every text from the journal goes in with
// textContent, never as HTML.
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
    tag: r[5], label: r[6], prompt: r[7], promptStep: r[8], el: null, edge: null,
  }));
  const panels = data.panels.map((r) => ({ node: r[0], step: r[1], image: r[2], el: null }));
  const steps = data.steps.map((r) => ({ ms: r[0], what: r[1], node: r[2], active: r[3], detail: r[4] }));
  // nodes named by a prompt after they appeared (state edits led up to it): few
  const renamed = nodes.flatMap((n, i) => (n.promptStep ? [i] : []));
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
  let nodesShown = 0, panelsShown = 0;
  let path = []; // the active path drawn

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

  function nodeElement(i) {
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
    tree.appendChild(el);
    if (n.parent !== null) {
      const p = nodes[n.parent];
      const x1 = PAD + p.lane * COL + W / 2, y1 = PAD + p.depth * ROW + H;
      const x2 = PAD + n.lane * COL + W / 2, y2 = PAD + n.depth * ROW;
      const edge = document.createElementNS(SVG, "path");
      const bend = (y2 - y1) / 2;
      edge.setAttribute("d", `M${x1},${y1} C${x1},${y1 + bend} ${x2},${y2 - bend} ${x2},${y2}`);
      edge.setAttribute("class", "tl-edge");
      edges.appendChild(edge);
      n.edge = edge;
    }
    return el;
  }
  function nameNode(i, at) {
    const { tag, label } = named(nodes[i], at);
    const el = nodes[i].el;
    if (el.dataset.tag === tag && nodes[i].drawn === label) return; // unchanged: no relayout
    el.querySelector(".tl-tag").textContent = words.tags[tag] || tag;
    el.querySelector(".tl-label").textContent = label;
    el.dataset.tag = tag;
    nodes[i].drawn = label;
  }
  function panelElement(p) {
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

  function draw(target) {
    target = Math.max(1, Math.min(total, target));
    // nodes and panels: show or hide the ones that appeared between the two positions
    while (nodesShown < nodes.length && nodes[nodesShown].step <= target) {
      const el = nodeElement(nodesShown);
      el.hidden = false;
      if (nodes[nodesShown].edge) nodes[nodesShown].edge.removeAttribute("visibility");
      nameNode(nodesShown, target);
      nodesShown += 1;
    }
    while (nodesShown > 0 && nodes[nodesShown - 1].step > target) {
      nodesShown -= 1;
      nodes[nodesShown].el.hidden = true;
      if (nodes[nodesShown].edge) nodes[nodesShown].edge.setAttribute("visibility", "hidden");
    }
    while (panelsShown < panels.length && panels[panelsShown].step <= target) {
      const p = panels[panelsShown];
      nodes[p.node].el.querySelector(".tl-thumbs").appendChild(panelElement(p));
      panelsShown += 1;
    }
    while (panelsShown > 0 && panels[panelsShown - 1].step > target) {
      panelsShown -= 1;
      panels[panelsShown].el.remove();
    }
    for (const i of renamed) if (i < nodesShown) nameNode(i, target);
    // the active path: where the session stood after this entry, and the way up to it
    for (const i of path) {
      delete nodes[i].el.dataset.active;
      delete nodes[i].el.dataset.here;
      if (nodes[i].edge) nodes[i].edge.classList.remove("active");
    }
    path = [];
    for (let i = steps[target - 1].active; i !== null; i = nodes[i].parent) path.push(i);
    for (const i of path) {
      nodes[i].el.dataset.active = "true";
      if (nodes[i].edge) nodes[i].edge.classList.add("active");
    }
    const here = nodes[path[0]].el;
    here.dataset.here = "true";
    // the canvas as big as what is shown
    const [lanes, depths] = extent[nodesShown];
    const width = PAD * 2 + lanes * COL, height = PAD * 2 + depths * ROW;
    edges.setAttribute("width", String(width));
    edges.setAttribute("height", String(height));
    position = target;
    root.dataset.position = String(target);
    if (Number(slider.value) !== target) slider.value = String(target);
    say(target);
    keepInView(here);
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
  function keepInView(el) {
    const left = el.offsetLeft, top = el.offsetTop;
    if (left < tree.scrollLeft) tree.scrollLeft = left - PAD;
    else if (left + W > tree.scrollLeft + tree.clientWidth) tree.scrollLeft = left + W - tree.clientWidth + PAD;
    if (top < tree.scrollTop) tree.scrollTop = top - PAD;
    else if (top + H > tree.scrollTop + tree.clientHeight) tree.scrollTop = top + H - tree.clientHeight + PAD;
  }

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
