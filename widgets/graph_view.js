// GraphView: shows an SVG drawn by Graphviz (the `svg` trait, computed in Python by
// tinygrad_lab.graph) and sends clicks back through the `selected` trait. Python answers
// with `details`; `highlighted` / `highlighted_edges` mark nodes and edges by their
// Graphviz <title>, `marked` (red) the first node where a learner's piece differs. The toolbar's toggles set the drawing traits (show_values, show_grads,
// cluster_modules, collapse_depth) and Python redraws. No engine logic here.
//
// Fit and follow: the drawing is scaled to fit the frame's width (never above 100%) when it is
// first drawn, and to fit its height too while it stays legible; the frame grows with the
// drawing up to a maximum height, then scrolls. The first highlighted node (the stepper's
// current node) is scrolled into view whenever it changes. The mouse wheel scrolls the page;
// Ctrl/Cmd + wheel, the - / + / fit buttons and double-click zoom. Drag pans.

const TOGGLES = [["show_values", "values"], ["show_grads", "grads"], ["cluster_modules", "modules"]];
const MIN_FIT = 0.6;   // fitting the whole height never shrinks text below 60%
const STEP = 1.25;     // one zoom step

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function titleOf(g) {
  const t = g.querySelector(":scope > title");
  return t ? t.textContent : null;
}

function toggles(model) {
  const bar = el("div", "tl-graph-toggles");
  for (const [trait, label] of TOGGLES) {
    const box = el("input");
    box.type = "checkbox";
    box.dataset.trait = trait;
    box.checked = model.get(trait);
    box.addEventListener("change", () => { model.set(trait, box.checked); model.save_changes(); });
    model.on(`change:${trait}`, () => { box.checked = model.get(trait); });
    const lab = el("label", "tl-graph-toggle");
    lab.append(box, document.createTextNode(" " + label));
    bar.appendChild(lab);
  }
  const depth = el("input");
  depth.type = "number";
  depth.min = "-1";
  depth.className = "tl-graph-depth";
  depth.value = model.get("collapse_depth");
  depth.title = "fold modules deeper than this into one box (-1: none)";
  depth.addEventListener("change", () => { model.set("collapse_depth", parseInt(depth.value, 10)); model.save_changes(); });
  model.on("change:collapse_depth", () => { depth.value = model.get("collapse_depth"); });
  const lab = el("label", "tl-graph-toggle");
  lab.append(document.createTextNode("collapse depth "), depth);
  bar.appendChild(lab);
  return bar;
}

function legend(model) {
  const box = el("div", "tl-graph-legend");
  const draw = () => {
    box.replaceChildren();
    for (const [kind, fill, border, text, color] of model.get("legend") || []) {
      const item = el("span", "tl-legend-item");
      item.dataset.kind = kind;
      if (fill) {
        const sw = el("span", "tl-legend-swatch");
        sw.style.background = fill;
        sw.style.borderColor = border;
        if (kind === "current") sw.style.borderWidth = "2px";
        item.appendChild(sw);
      }
      if (color) {
        const words = el("span");
        const word = el("b", "", text.split(":")[0]);
        word.style.color = color;
        words.append(word, document.createTextNode(":" + text.split(":").slice(1).join(":")));
        item.appendChild(words);
      } else {
        item.appendChild(document.createTextNode(text));
      }
      box.appendChild(item);
    }
  };
  model.on("change:legend", draw);
  draw();
  return box;
}

function render({ model, el: root }) {
  root.classList.add("tl-graph");
  const colors = model.get("colors") || {};
  for (const [name, value] of Object.entries(colors)) root.style.setProperty(`--tl-${name}`, value);

  const zoomOut = el("button", "tl-graph-zoom", "\u2212");
  const zoomIn = el("button", "tl-graph-zoom", "+");
  const fitButton = el("button", "tl-graph-zoom", "fit");
  zoomOut.title = "zoom out (or Ctrl + wheel)";
  zoomIn.title = "zoom in (or Ctrl + wheel)";
  fitButton.title = "fit the graph to the frame (or double-click)";
  const zoomBar = el("div", "tl-graph-zoombar");
  zoomBar.append(zoomOut, zoomIn, fitButton);
  const bar = el("div", "tl-graph-toolbar");
  bar.append(toggles(model), zoomBar, legend(model));

  const error = el("div", "tl-graph-error");
  const body = el("div", "tl-graph-body");
  const viewport = el("div", "tl-graph-viewport");
  const canvas = el("div", "tl-graph-canvas");
  const details = el("div", "tl-graph-details");
  viewport.appendChild(canvas);
  body.append(viewport, details);
  root.append(bar, error, body);

  let natural = null;          // the drawing's size at 100%, in CSS pixels
  let scale = 1;
  let userZoomed = false;      // after the learner zooms, redraws keep their zoom

  const maxHeight = () => parseFloat(getComputedStyle(viewport).maxHeight) || 640;

  function naturalSize(svg) {
    const vb = svg.viewBox && svg.viewBox.baseVal;
    if (vb && vb.width) return { w: vb.width * 96 / 72, h: vb.height * 96 / 72 }; // Graphviz: points
    const b = svg.getBBox();
    return { w: b.width, h: b.height };
  }

  // the width the frame may take: the widget's, less the details panel beside it
  const available = () => Math.max(120, body.clientWidth - details.offsetWidth - 10);

  function applyScale() {
    const svg = canvas.querySelector("svg");
    if (!svg || !natural) return;
    svg.setAttribute("width", `${natural.w * scale}px`);
    svg.setAttribute("height", `${natural.h * scale}px`);
    // the frame hugs the drawing, up to the width available and the maximum height; beyond, it scrolls
    const scrollbar = natural.h * scale > maxHeight() ? 16 : 0;
    viewport.style.width = `${Math.min(natural.w * scale + 2 + scrollbar, available())}px`;
    viewport.style.height = `${Math.min(natural.h * scale + 2, maxHeight())}px`;
    root.dataset.scale = scale.toFixed(3);
  }

  function fit() {
    if (!natural) return;
    let s = Math.min(1, (available() - 4) / natural.w);
    const tall = maxHeight() / natural.h;
    if (natural.h * s > maxHeight() && tall >= MIN_FIT) s = Math.min(s, tall);
    scale = Math.max(s, 0.05);
    applyScale();
  }

  function zoom(factor, px, py) {
    if (!natural) return;
    const r = viewport.getBoundingClientRect();
    const x = px === undefined ? viewport.clientWidth / 2 : px - r.left;
    const y = py === undefined ? viewport.clientHeight / 2 : py - r.top;
    const cx = (viewport.scrollLeft + x) / scale, cy = (viewport.scrollTop + y) / scale;
    scale = Math.min(4, Math.max(0.05, scale * factor));
    userZoomed = true;
    applyScale();
    viewport.scrollLeft = cx * scale - x;
    viewport.scrollTop = cy * scale - y;
  }

  function follow() {
    // keep the first highlighted node (the stepper's current one), else the marked one, inside the frame
    const target = (model.get("highlighted") || [])[0] || (model.get("marked") || [])[0];
    if (!target) return;
    const g = [...canvas.querySelectorAll("g.node")].find((n) => titleOf(n) === target);
    if (!g) return;
    const v = viewport.getBoundingClientRect(), b = g.getBoundingClientRect();
    const inside = b.left >= v.left && b.right <= v.left + viewport.clientWidth
      && b.top >= v.top && b.bottom <= v.top + viewport.clientHeight;
    if (inside) return;
    viewport.scrollTop += (b.top + b.height / 2) - (v.top + viewport.clientHeight / 2);
    viewport.scrollLeft += (b.left + b.width / 2) - (v.left + viewport.clientWidth / 2);
  }

  function drawSvg() {
    canvas.innerHTML = model.get("svg") || "";
    const svg = canvas.querySelector("svg");
    natural = svg ? naturalSize(svg) : null;
    if (svg) svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
    if (userZoomed) applyScale(); else fit();
    markHighlights();
    markSelected();
    follow();
  }

  function markHighlights() {
    const nodes = new Set(model.get("highlighted") || []);
    const edges = new Set(model.get("highlighted_edges") || []);
    const marked = new Set(model.get("marked") || []);
    canvas.querySelectorAll("g.node").forEach((g) => {
      g.classList.toggle("tl-hl", nodes.has(titleOf(g)));
      g.classList.toggle("tl-diff", marked.has(titleOf(g)));
    });
    canvas.querySelectorAll("g.edge").forEach((g) => g.classList.toggle("tl-hl", edges.has(titleOf(g))));
  }

  function markSelected() {
    const sel = model.get("selected");
    canvas.querySelectorAll("g.node").forEach((g) => g.classList.toggle("tl-selected", titleOf(g) === sel));
  }

  function drawDetails() {
    const d = model.get("details") || {};
    details.replaceChildren();
    const keys = Object.keys(d);
    if (!keys.length) {
      details.appendChild(el("div", "tl-graph-hint", "Click a node to see its details."));
      return;
    }
    const table = el("table");
    for (const k of keys) {
      const row = el("tr");
      row.dataset.key = k;
      row.append(el("th", "", k), el("td", "", String(d[k])));
      table.appendChild(row);
    }
    details.appendChild(table);
  }

  function drawError() {
    const msg = model.get("error") || "";
    error.textContent = msg;
    error.style.display = msg ? "block" : "none";
  }

  canvas.addEventListener("click", (ev) => {
    const g = ev.target.closest("g.node");
    if (!g || moved) return;
    model.set("selected", titleOf(g));
    model.save_changes();
  });
  // the wheel scrolls the page; with Ctrl (or Cmd) it zooms, as map widgets do
  viewport.addEventListener("wheel", (ev) => {
    if (!(ev.ctrlKey || ev.metaKey)) return;
    ev.preventDefault();
    zoom(ev.deltaY < 0 ? STEP : 1 / STEP, ev.clientX, ev.clientY);
  }, { passive: false });
  let drag = null, moved = false;
  viewport.addEventListener("mousedown", (ev) => {
    if (ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, left: viewport.scrollLeft, top: viewport.scrollTop };
    moved = false;
  });
  const onMove = (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) moved = true;
    viewport.scrollLeft = drag.left - dx;
    viewport.scrollTop = drag.top - dy;
  };
  const onUp = () => { drag = null; setTimeout(() => { moved = false; }, 0); };
  window.addEventListener("mousemove", onMove);
  window.addEventListener("mouseup", onUp);
  viewport.addEventListener("dblclick", () => { userZoomed = false; fit(); });
  zoomIn.addEventListener("click", () => zoom(STEP));
  zoomOut.addEventListener("click", () => zoom(1 / STEP));
  fitButton.addEventListener("click", () => { userZoomed = false; fit(); follow(); });
  const resize = new ResizeObserver(() => { if (userZoomed) applyScale(); else fit(); });
  resize.observe(body);

  model.on("change:svg", drawSvg);
  model.on("change:highlighted", () => { markHighlights(); follow(); });
  model.on("change:highlighted_edges", markHighlights);
  model.on("change:marked", () => { markHighlights(); follow(); });
  model.on("change:selected", markSelected);
  model.on("change:details", drawDetails);
  model.on("change:error", drawError);
  drawSvg();
  drawDetails();
  drawError();
  return () => {
    resize.disconnect();
    window.removeEventListener("mousemove", onMove);
    window.removeEventListener("mouseup", onUp);
  };
}

export default { render };
