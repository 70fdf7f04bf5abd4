// LiveLoss: a progress bar and the loss curve Python draws (the `image` trait, a PNG drawn by
// matplotlib as training runs; `step` / `total` move the bar).
function render({ model, el }) {
  el.classList.add("tl-loss");
  const bar = document.createElement("div");
  bar.className = "tl-loss-bar";
  const progress = document.createElement("progress");
  const label = document.createElement("span");
  label.className = "tl-loss-label";
  bar.append(progress, label);
  const img = document.createElement("img");
  img.className = "tl-loss-curve";
  img.alt = "loss curve";
  el.append(bar, img);

  function draw() {
    const step = model.get("step"), total = model.get("total");
    if (total > 0) { progress.max = total; progress.value = Math.min(step, total); } else progress.removeAttribute("value");
    label.textContent = `${model.get("title")}: step ${step}` + (total > 0 ? ` of ${total}` : "");
    const data = model.get("image");
    if (data) img.src = `data:image/png;base64,${data}`;
  }
  for (const name of ["image", "step", "total", "title"]) model.on(`change:${name}`, draw);
  draw();
}

export default { render };
