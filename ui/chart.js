// One plotly chart, drawn once per change (ui/chart.py). Streamlit 1.67's st.plotly_chart
// gives a chart a new id whenever its figure changes, so each change unmounted the chart
// and drew the new figure two or three times; this component keeps its element and calls
// Plotly.react once. plotly.js is Streamlit's own (its PlotlyChart chunk sets
// window.Plotly), loaded from the same server on first use.
const loading = {};
function plotlyFrom(chunk) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  const app = document.querySelector('script[type="module"][src*="/static/js/"]');
  const url = new URL(chunk, app ? app.src : document.baseURI).href;
  loading[url] ||= import(url).then(() => window.Plotly || Promise.reject(new Error(`${chunk} set no window.Plotly`)));
  return loading[url];
}

// Each chart draws in a task of its own, in the order the page gave them: the first at
// once (the view's main chart, on top), each next one after the browser painted.
const queue = [];
let drawing = false;
function later(draw) {
  queue.push(draw);
  if (!drawing) next();
}
function next() {
  const draw = queue.shift();
  if (!draw) {
    drawing = false;
    return;
  }
  drawing = true;
  Promise.resolve()
    .then(draw)
    .catch((error) => console.error(error))
    .finally(() => requestAnimationFrame(() => setTimeout(next, 0)));
}

const EXPAND = "M3 3h7v2H5v5H3zm11 0h7v7h-2V5h-5zM3 14h2v5h5v2H3zm16 0h2v7h-7v-2h5z";

// The chart alone on the screen, as tall as the screen (Streamlit's chart had this button).
function fullscreenButton(host, gd, P) {
  host.onfullscreenchange = () => {
    const height = document.fullscreenElement === host ? window.innerHeight : gd.__height;
    const done = P.relayout(gd, { height: height || 450, width: host.clientWidth });
    done.then(() => fitSquare(gd, P, host));
  };
  return {
    name: "Fullscreen",
    title: "Fullscreen",
    icon: { width: 24, height: 24, path: EXPAND },
    click: () => (document.fullscreenElement ? document.exitFullscreen() : host.requestFullscreen()),
  };
}

// SVG beside the camera's PNG (#48 item 3): the figure as drawn (its fitted size), as a
// vector file for a paper. plotly.js draws a heatmap's cells as one image inside the SVG;
// text, axes, bars and lines are vectors. Offline: plotly.js writes the file itself.
const DOWNLOAD = "M5 20h14v-2H5v2zm7-3 6-6h-4V3h-4v8H6l6 6z";
function svgButton(gd, P, config) {
  const options = config.toImageButtonOptions || {};
  return {
    name: "downloadSvg",
    title: "Download plot as an SVG (vector)",
    icon: { width: 24, height: 24, path: DOWNLOAD },
    click: () => {
      const fl = gd._fullLayout || {};
      const size = { width: fl.width, height: fl.height };
      P.downloadImage(gd, { format: "svg", filename: options.filename || "newplot", ...size });
    },
  };
}

// The keyboard picks the query too (#44 item 13): a chart that takes clicks is focusable,
// and ArrowUp / ArrowDown (Home / End) move its outlined row, as a click on that row.
const QUERY_KEYS = { ArrowUp: -1, ArrowDown: 1, Home: -Infinity, End: Infinity };
function keyQuery(gd, event) {
  const step = QUERY_KEYS[event.key];
  const heat = (gd._fullData || []).find((t) => t.type === "heatmap");
  const outline = ((gd.layout && gd.layout.shapes) || [])[0];
  if (step === undefined || !gd.__clicks || !heat || !outline) return;
  event.preventDefault();
  const now = Math.round(outline.y0 + 0.5);
  const next = Math.min(heat.y.length - 1, Math.max(0, now + step));
  if (next === now) return;
  gd.__trigger("click", { customdata: next });
  if (gd.__instant) showFrame(gd, window.Plotly, next);
}

// A head picked in the sidebar's Head control (Streamlit's selectbox keyed "head": an
// option of its open list): a figure that carries that head (viz.attention.with_heads)
// is drawn at once, before the rerun sends the same head's figure with its hover text
// and ▶ frames. A pick by keyboard, or a figure without heads, waits for the rerun.
function pickedHead(event) {
  const option = event.target.closest && event.target.closest('[role="option"]');
  const picker = document.querySelector('.st-key-head [role="combobox"][aria-expanded="true"]');
  if (!option || !picker || !window.Plotly) return;
  for (const gd of document.querySelectorAll(".attnviz-chart")) {
    const change = gd.__figure && (gd.__figure.heads || {})[option.textContent.trim()];
    if (!change) continue;
    const { data, layout } = gd.__figure;
    stopPlaying(gd);
    window.Plotly.react(gd, {
      data: data.map((trace, i) => ({ ...trace, ...change.data[i] })),
      layout: ownButtons(fresh({ ...layout, ...change.layout, autosize: true, ...gd.__fit })),
      frames: [], // that head's frames come with the rerun
      config: gd.__config,
    });
  }
}
if (!window.__attnvizPickedHead) {
  window.__attnvizPickedHead = true; // once per page, however often this module is loaded
  document.addEventListener("pointerup", pickedHead, true);
}

export default function ({ data, parentElement, setTriggerValue }) {
  const text = typeof data === "string" ? data : new TextDecoder().decode(data);
  let gd = parentElement.querySelector(".attnviz-chart");
  if (!gd) {
    gd = document.createElement("div");
    gd.className = "attnviz-chart";
    parentElement.appendChild(gd);
    parentElement.classList.add("attnviz-host");
  }
  gd.__trigger = setTriggerValue;
  if (!gd.__resize) {
    // A new width only (a sidebar folded, a scrollbar came): Plots.resize would drop the
    // figure's own height too, so the width alone is set.
    gd.__resize = new ResizeObserver(() => {
      const now = parentElement.clientWidth || 0;
      if (!now || !gd._fullLayout || !window.Plotly || now === gd.__hostWidth) return;
      gd.__hostWidth = now;
      if (gd.__fit) fitSquare(gd, window.Plotly, parentElement);
      else if (now !== gd._fullLayout.width) window.Plotly.relayout(gd, { width: now });
    });
    gd.__resize.observe(parentElement);
  }
  const cleanup = () => {
    if (gd.__resize) gd.__resize.disconnect();
    gd.__resize = null;
  };
  if (gd.__text === text) return cleanup;
  gd.__text = text;
  const { figure, config, chunk, clicks, instant, present } = JSON.parse(text);
  gd.__present = present;
  gd.__clicks = clicks;
  gd.__instant = instant;
  if (clicks) {
    // a grid of heads (viz/lab.py, layout.meta.pick "heads") is clicked, not walked with keys
    const heads = ((figure.layout || {}).meta || {}).pick === "heads";
    gd.tabIndex = 0;
    gd.setAttribute("role", "group"); // a label needs a role (axe: aria-prohibited-attr)
    gd.setAttribute("aria-label", heads ? "Grid of heads: click a cell to pick that head"
      : "Heatmap: arrow keys up and down move the query");
    gd.onkeydown = heads ? null : (event) => keyQuery(gd, event);
  }
  gd.style.minHeight = `${figure.layout.height || 450}px`; // its place kept while plotly.js loads
  if (!window.Plotly) {
    removePreview(gd); // a newer figure while plotly.js still loads
    previewFigure(gd, figure); // bars at once, plotly.js's drawing later (ui/preview.js)
  }
  // the toolbar's strip (ui/chart.py), on the host: the chart's own box starts at the figure
  parentElement.classList.toggle("attnviz-strip", figure.data.length > 0);
  const failed = (error) => {
    gd.textContent = `This chart could not be drawn: plotly.js did not load (${error}). Reload the page.`;
  };
  plotlyFrom(chunk).catch(failed).then((P) => P && later(() => {
    if (gd.__text !== text) return; // a newer figure arrived meanwhile
    // a figure of square cells starts at the size the last one was fitted to
    const layout = ownButtons(fresh({ ...figure.layout, autosize: true, ...gd.__fit }));
    stopPlaying(gd); // a new figure: its frames play from the start
    gd.__frameAt = undefined;
    gd.__height = figure.layout.height;
    // the same config object while its JSON is the same: a new one makes Plotly.react
    // draw the figure from scratch (a head click at T = 12: 300 ms to the paint, not 220)
    const configJSON = JSON.stringify(config);
    if (gd.__configJSON !== configJSON) {
      gd.__configJSON = configJSON;
      const buttons = [svgButton(gd, P, config), fullscreenButton(parentElement, gd, P)];
      gd.__config = { ...config, modeBarButtonsToAdd: buttons };
    }
    gd.__figure = figure;
    removePreview(gd);
    const drawn = P.react(gd, { data: figure.data, layout, frames: figure.frames || [], config: gd.__config });
    if (!gd.__listening) {
      gd.__listening = true;
      gd.on("plotly_buttonclicked", (event) => onButton(gd, window.Plotly, event));
      gd.on("plotly_click", (event) => {
        const point = (event.points || []).find((p) => Number.isInteger(p.customdata));
        if (!gd.__clicks || !point) return;
        gd.__trigger("click", { customdata: point.customdata });
        if (gd.__instant) showFrame(gd, window.Plotly, point.customdata);
      });
    }
    gd.__hostWidth = parentElement.clientWidth;
    return drawn.then(() => fitSquare(gd, P, parentElement));
  }));
  return cleanup;
}
