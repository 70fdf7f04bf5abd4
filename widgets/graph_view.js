// GraphView: shows an SVG drawn by Graphviz (the `svg` trait, computed in Python by
// tinygrad_lab.graph) and sends clicks back through the `selected` trait. Python answers
// with `details`; `highlighted` / `highlighted_edges` mark nodes and edges by their
// Graphviz <title>. The toolbar's toggles set the drawing traits (show_values, show_grads,
// cluster_modules, collapse_depth) and Python redraws. Wheel zooms, drag pans, double-click
// resets. No engine logic here.

const TOGGLES = [["show_values", "values"], ["show_grads", "grads"], ["cluster_modules", "modules"]];

function toolbar(model) {
  const bar = el("div", "tl-graph-toolbar");
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

function render({ model, el: root }) {
  root.classList.add("tl-graph");
  const error = el("div", "tl-graph-error");
  const body = el("div", "tl-graph-body");
  const viewport = el("div", "tl-graph-viewport");
  const canvas = el("div", "tl-graph-canvas");
  const details = el("div", "tl-graph-details");
  viewport.appendChild(canvas);
  body.append(viewport, details);
  root.append(toolbar(model), error, body);

  let view = { scale: 1, x: 0, y: 0 };
  const applyView = () => {
    canvas.style.transform = `translate(${view.x}px, ${view.y}px) scale(${view.scale})`;
  };

  function drawSvg() {
    canvas.innerHTML = model.get("svg") || "";
    const svg = canvas.querySelector("svg");
    if (svg) svg.removeAttribute("height"), svg.setAttribute("width", "100%");
    markHighlights();
    markSelected();
  }

  function markHighlights() {
    const nodes = new Set(model.get("highlighted") || []);
    const edges = new Set(model.get("highlighted_edges") || []);
    canvas.querySelectorAll("g.node").forEach((g) => g.classList.toggle("tl-hl", nodes.has(titleOf(g))));
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
    if (!g) return;
    model.set("selected", titleOf(g));
    model.save_changes();
  });
  viewport.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const factor = ev.deltaY < 0 ? 1.15 : 1 / 1.15;
    const r = viewport.getBoundingClientRect();
    const px = ev.clientX - r.left, py = ev.clientY - r.top;
    view.x = px - (px - view.x) * factor;
    view.y = py - (py - view.y) * factor;
    view.scale *= factor;
    applyView();
  }, { passive: false });
  let drag = null;
  viewport.addEventListener("mousedown", (ev) => { drag = { x: ev.clientX - view.x, y: ev.clientY - view.y, moved: false }; });
  window.addEventListener("mousemove", (ev) => {
    if (!drag) return;
    view.x = ev.clientX - drag.x;
    view.y = ev.clientY - drag.y;
    applyView();
  });
  window.addEventListener("mouseup", () => { drag = null; });
  viewport.addEventListener("dblclick", () => { view = { scale: 1, x: 0, y: 0 }; applyView(); });

  model.on("change:svg", drawSvg);
  model.on("change:highlighted", markHighlights);
  model.on("change:highlighted_edges", markHighlights);
  model.on("change:selected", markSelected);
  model.on("change:details", drawDetails);
  model.on("change:error", drawError);
  drawSvg();
  drawDetails();
  drawError();
}

export default { render };
