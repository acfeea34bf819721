// Square cells for ui/chart.js (loaded before it, in one module: ui/chart.py). fitSquare
// sizes a figure to its square heatmap and fits it again when its top moves.
// Square cells (#44 item 1): a heatmap whose y axis is tied to its x axis (scaleanchor,
// viz.spec.square_cells) is drawn as large as its column's width and the screen allow.
// The figure's height is set so that the heatmap's rows are as tall as its columns are
// wide, and no taller than the room from the chart's top to the bottom of the screen
// (a full screen for a chart that starts low, see roomPx); when the room is short the figure is
// made narrower too, so that the colour bar stays beside the heatmap. A row is never
// shorter than its label (every token labelled), unless the width allows no more.
const LEAST_ROW = 0.8; // a row's least height, in units of its tick label's font size
const FOOT_PX = 12; // left free under a figure that fits the screen
// A layout whose axes are copies: plotly.js writes into them (a constrained domain), and
// the figure's own must stay as the server sent them.
function fresh(layout) {
  const out = { ...layout };
  for (const key of Object.keys(out)) if (/^[xy]axis[0-9]*$/.test(key)) out[key] = { ...out[key] };
  return out;
}
function span(domain) {
  return domain ? domain[1] - domain[0] : 1;
}
function mainOf(gd) {
  return gd.closest('[data-testid="stMain"]') || document.scrollingElement;
}
function topPx(gd) {
  const main = mainOf(gd); // the chart's top in the scrolled page, px
  return gd.getBoundingClientRect().top - main.getBoundingClientRect().top + main.scrollTop;
}
function roomPx(gd, host) {
  const strip = parseFloat(getComputedStyle(host).paddingTop) || 0; // the toolbar's (ui/chart.py)
  if (document.fullscreenElement === host) return window.innerHeight - strip;
  const main = mainOf(gd);
  const screen = main.clientHeight || window.innerHeight;
  const top = topPx(gd);
  const below = screen - top - FOOT_PX;
  // presenting, the figure fits under what is above it; else it may take a screen of its
  // own (scrolled to) when less than three quarters of one is left under its top
  // (the server says whether its session presents, with the figure: not the URL read at
  // fit time)
  return below >= screen * (gd.__present ? 1 / 3 : 3 / 4) ? below : screen - 2 * FOOT_PX;
}
function squareSize(gd, host) {
  const fl = gd._fullLayout;
  const heat = (gd._fullData || []).find((t) => t.type === "heatmap" && t.visible !== false);
  if (!fl || !heat) return null;
  const xa = fl[`xaxis${heat.xaxis.slice(1)}`], ya = fl[`yaxis${heat.yaxis.slice(1)}`];
  if (!xa || !ya || !ya.scaleanchor) return null;
  const nx = Math.abs(xa.range[1] - xa.range[0]), ny = Math.abs(ya.range[1] - ya.range[0]);
  const given = gd.__figure.layout; // plotly.js writes the constrained domains into gd.layout
  const fx = span((given[xa._name] || {}).domain), fy = span((given[ya._name] || {}).domain);
  const across = fl.width - fl._size.w, down = fl.height - fl._size.h; // margins, px
  const full = document.fullscreenElement === host ? window.innerWidth : host.clientWidth;
  const labelled = ya.showticklabels && (ya.tickvals || []).length >= ny;
  const least = labelled ? LEAST_ROW * ya.tickfont.size : 1;
  const byWidth = ((full - across) * fx) / nx;
  const byRoom = ((roomPx(gd, host) - down) * fy) / ny;
  const cell = Math.min(byWidth, Math.max(least, byRoom));
  const width = cell < byWidth ? Math.ceil(across + (cell * nx) / fx) : full;
  return { width: Math.min(full, width), height: Math.round(down + (cell * ny) / fy) };
}
// An x axis's title under its tick labels: plotly.js measured upright (-90°) token
// labels of a square heatmap's axis some 40 px short and put "key" on their ends; the
// title's standoff grows by what it overlaps (a standoff below that shortfall does not
// move it: up to three tries).
async function titlesClear(gd, P) {
  for (let tries = 0; tries < 3 && (await titlesMoved(gd, P)); tries++);
}
function titlesMoved(gd, P) {
  const fl = gd._fullLayout;
  const change = {};
  for (const name of Object.keys(fl).filter((k) => /^xaxis[0-9]*$/.test(k))) {
    const ax = fl[name];
    const title = gd.querySelector(`.g-${ax._id}title text`);
    const ticks = [...gd.querySelectorAll(`.${ax._id}tick text`)].map((t) => t.getBoundingClientRect().bottom);
    if (!title || !ticks.length || ax.side === "top") continue;
    const over = Math.max(...ticks) - title.getBoundingClientRect().top;
    if (over > -2) change[`${name}.title.standoff`] = Math.ceil((ax.title.standoff || 0) + over + 8);
  }
  return Object.keys(change).length ? P.relayout(gd, change).then(() => true) : false;
}

// A figure fitted to the room under its top is fitted again when its top moves: text
// above it that is drawn later (a caption, the presenter's 20 px fonts, a web font) had
// pushed a fitted figure 10-30 px past a 1280x720 projector's fold. One check per 50 ms at
// most, after any change to the main column's elements, its size, or the fonts (a timer,
// not an animation frame: a page in a background tab gets no frames).
function refitMoved() {
  window.__attnvizCheck = 0;
  for (const gd of document.querySelectorAll(".attnviz-chart")) {
    if (!gd.__fit || gd.__fitTop === undefined || !gd._fullLayout || !window.Plotly) continue;
    if (Math.abs(topPx(gd) - gd.__fitTop) > 1) fitSquare(gd, window.Plotly, gd.parentElement);
  }
}
function checkTops() {
  if (!window.__attnvizCheck) window.__attnvizCheck = setTimeout(refitMoved, 50);
}
function watchTops() {
  const main = document.querySelector('[data-testid="stMain"]');
  if (!main || window.__attnvizTopsOn === main) return;
  if (window.__attnvizTops) window.__attnvizTops.forEach((o) => o.disconnect());
  window.__attnvizTopsOn = main;
  const mutations = new MutationObserver(checkTops);
  mutations.observe(main, { childList: true, subtree: true, characterData: true });
  const sizes = new ResizeObserver(checkTops);
  sizes.observe(main.firstElementChild || main);
  window.__attnvizTops = [mutations, sizes];
  if (document.fonts && !window.__attnvizFonts) {
    window.__attnvizFonts = true;
    document.fonts.addEventListener("loadingdone", checkTops);
  }
}
// Size the figure to its square heatmap; then its titles clear of their labels, and the
// size again (the margins may have moved).
async function fitSquare(gd, P, host) {
  if (!(await fitOnce(gd, P, host))) return;
  watchTops();
  await titlesClear(gd, P);
  await fitOnce(gd, P, host);
}
async function fitOnce(gd, P, host) {
  const size = squareSize(gd, host);
  if (!size) return false;
  gd.__fit = size;
  gd.__fitTop = topPx(gd); // where it was fitted: refitMoved fits it again when this moves
  gd.style.minHeight = `${size.height}px`;
  const fl = gd._fullLayout;
  if (Math.abs(size.width - fl.width) < 1 && Math.abs(size.height - fl.height) < 1) return true;
  const narrow = size.width < host.clientWidth; // centred in its column
  gd.style.margin = narrow ? "0 auto" : "";
  gd.style.width = narrow ? `${size.width}px` : "";
  await P.relayout(gd, size);
  return true;
}
