// LiveLoss: a loss curve drawn from the `values` trait (Python appends as training runs).
const W = 420, H = 180, PAD = 36;

function render({ model, el }) {
  el.classList.add("tl-loss");
  const NS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("width", W);
  svg.setAttribute("height", H);
  const line = document.createElementNS(NS, "polyline");
  line.setAttribute("class", "tl-loss-line");
  const label = document.createElement("div");
  label.className = "tl-loss-label";
  svg.appendChild(line);
  el.append(svg, label);

  function draw() {
    const v = model.get("values") || [];
    const title = model.get("title");
    if (!v.length) { line.setAttribute("points", ""); label.textContent = `${title}: no values yet`; return; }
    const lo = Math.min(...v), hi = Math.max(...v), span = hi - lo || 1;
    const n = Math.max(v.length - 1, 1);
    const pts = v.map((y, i) => `${(PAD + (i / n) * (W - 2 * PAD)).toFixed(1)},${(H - PAD - ((y - lo) / span) * (H - 2 * PAD)).toFixed(1)}`);
    line.setAttribute("points", pts.join(" "));
    label.textContent = `${title}: ${v.length} steps · last ${v[v.length - 1].toPrecision(4)} · min ${lo.toPrecision(4)}`;
  }
  model.on("change:values", draw);
  model.on("change:title", draw);
  draw();
}

export default { render };
