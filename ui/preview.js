// A first paint without plotly.js (#44 item 7). plotly.js is loaded on a page's first
// chart and takes about a second to evaluate on a 2-core machine: the Predictions view,
// opened from a link in presenter mode, was a 500 px blank for that second after its
// run had ended. A figure made of one bar trace (the next-token bars) is drawn at once
// as plain HTML bars: its title, each bar's label, length and text, in the figure's own
// colour and fonts. Plotly.react replaces it (ui/chart.js removes it first).
const TYPED = {
  f8: Float64Array, f4: Float32Array, i4: Int32Array, i2: Int16Array, i1: Int8Array,
  u4: Uint32Array, u2: Uint16Array, u1: Uint8Array,
};

// A trace's array: a plain list, or a plotly.js typed array ({dtype, bdata}, viz/spec.py).
function values(v) {
  if (Array.isArray(v)) return v;
  if (!v || typeof v.bdata !== "string" || !TYPED[v.dtype]) return [];
  const bytes = Uint8Array.from(atob(v.bdata), (c) => c.charCodeAt(0));
  return Array.from(new TYPED[v.dtype](bytes.buffer));
}

// plotly's HTML-like text (escaped user text, <b>, <br>) as the plain text it shows.
function plainText(html) {
  return new DOMParser().parseFromString(String(html ?? ""), "text/html").body.textContent;
}

function element(tag, style, text) {
  const el = document.createElement(tag);
  Object.assign(el.style, style);
  if (text !== undefined) el.textContent = text;
  return el;
}

// One bar's cells of the grid: its label, then its track (the bar and its text after it).
function barCells(label, fraction, text, color, font) {
  const track = element("div", { display: "flex", alignItems: "center", height: "100%", gap: "4px" });
  track.append(
    element("span", { width: `${Math.max(0, Math.min(1, fraction)) * 100}%`, height: "80%", background: color }),
    element("span", { whiteSpace: "nowrap" }, text),
  );
  return [element("span", { textAlign: "right", whiteSpace: "nowrap" }, label), track];
}

// Draws ``figure`` into ``gd`` as HTML when it is one horizontal bar trace; else nothing.
function previewFigure(gd, figure) {
  const data = figure.data || [];
  const trace = data[0];
  if (data.length !== 1 || trace.type !== "bar" || trace.orientation !== "h") return;
  const layout = figure.layout || {};
  const lengths = values(trace.x).map(Number);
  const labels = values(trace.y).map(plainText);
  const texts = values(trace.text).map(plainText);
  const top = Math.max(...((layout.xaxis || {}).range || [0, Math.max(...lengths, 1e-12)]));
  const order = labels.map((_, i) => i);
  if ((layout.yaxis || {}).autorange !== "reversed") order.reverse(); // plotly: first at the bottom
  const font = ((layout.font || {}).size) || 16;
  const color = typeof (trace.marker || {}).color === "string" ? trace.marker.color : "#4c78a8";
  const box = element("div", {
    height: `${layout.height || 450}px`, display: "flex", flexDirection: "column",
    fontSize: `${font}px`, fontFamily: (layout.font || {}).family || "sans-serif",
    color: (layout.font || {}).color || "#111", padding: "8px 12px 48px", boxSizing: "border-box",
  });
  box.className = "attnviz-preview";
  box.setAttribute("aria-hidden", "true"); // plotly's chart, with its text alternative, follows
  const title = (layout.title || {}).text;
  if (title) {
    const size = ((layout.title || {}).font || {}).size || font * 1.2;
    box.append(element("div", { fontSize: `${size}px`, textAlign: "center", margin: "12px 0" }, plainText(title)));
  }
  const grid = element("div", {
    display: "grid", gridTemplateColumns: "max-content 1fr", gridAutoRows: "1fr",
    alignItems: "center", columnGap: "4px", flex: "1", minHeight: "0", paddingLeft: "10%",
  });
  for (const i of order) grid.append(...barCells(labels[i], lengths[i] / top, texts[i] ?? "", color, font));
  box.append(grid);
  gd.append(box);
}

function removePreview(gd) {
  for (const box of gd.querySelectorAll(":scope > .attnviz-preview")) box.remove();
}
