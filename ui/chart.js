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
    P.relayout(gd, { height: height || 450 });
  };
  return {
    name: "Fullscreen",
    title: "Fullscreen",
    icon: { width: 24, height: 24, path: EXPAND },
    click: () => (document.fullscreenElement ? document.exitFullscreen() : host.requestFullscreen()),
  };
}

// A click on a point whose customdata is a query: that query's ▶ frame (its row's bars,
// viz.attention.attention_with_row) drawn at once, before the rerun draws the same.
function showFrame(gd, P, query) {
  const frames = (gd._transitionData || {})._frames || [];
  const frame = frames.find((f) => f.name === String(query));
  if (!frame) return;
  const restyle = {}; // the frame's trace attributes, one trace per list
  for (const [name, value] of Object.entries(frame.data[0])) {
    if (name !== "type") restyle[name] = [value];
  }
  P.update(gd, restyle, frame.layout || {}, frame.traces);
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
    window.Plotly.react(gd, {
      data: data.map((trace, i) => ({ ...trace, ...change.data[i] })),
      layout: { ...layout, ...change.layout, autosize: true },
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
      if (now && gd._fullLayout && window.Plotly && now !== gd._fullLayout.width) {
        window.Plotly.relayout(gd, { width: now });
      }
    });
    gd.__resize.observe(parentElement);
  }
  const cleanup = () => {
    if (gd.__resize) gd.__resize.disconnect();
    gd.__resize = null;
  };
  if (gd.__text === text) return cleanup;
  gd.__text = text;
  const { figure, config, chunk, clicks, instant } = JSON.parse(text);
  gd.__clicks = clicks;
  gd.__instant = instant;
  gd.style.minHeight = `${figure.layout.height || 450}px`; // its place kept while plotly.js loads
  const failed = (error) => {
    gd.textContent = `This chart could not be drawn: plotly.js did not load (${error}). Reload the page.`;
  };
  plotlyFrom(chunk).catch(failed).then((P) => P && later(() => {
    if (gd.__text !== text) return; // a newer figure arrived meanwhile
    const layout = { ...figure.layout, autosize: true };
    gd.__height = figure.layout.height;
    // the same config object while its JSON is the same: a new one makes Plotly.react
    // draw the figure from scratch (a head click at T = 12: 300 ms to the paint, not 220)
    const configJSON = JSON.stringify(config);
    if (gd.__configJSON !== configJSON) {
      gd.__configJSON = configJSON;
      gd.__config = { ...config, modeBarButtonsToAdd: [fullscreenButton(parentElement, gd, P)] };
    }
    gd.__figure = figure;
    const drawn = P.react(gd, { data: figure.data, layout, frames: figure.frames || [], config: gd.__config });
    if (!gd.__listening) {
      gd.__listening = true;
      gd.on("plotly_click", (event) => {
        const point = (event.points || []).find((p) => Number.isInteger(p.customdata));
        if (!gd.__clicks || !point) return;
        gd.__trigger("click", { customdata: point.customdata });
        if (gd.__instant) showFrame(gd, window.Plotly, point.customdata);
      });
    }
    return drawn;
  }));
  return cleanup;
}
