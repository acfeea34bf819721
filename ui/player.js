// ▶ play in the browser, frame by frame (#44 item 6), for ui/chart.js (the two files are
// one module, ui/chart.py). plotly.js's own animate redrew the whole figure at every
// frame: the heatmap's image was gone for ~80 ms a step and the row's outline moved a
// frame before its title. A frame here is one Plotly.update of its traces and layout
// together; the figure's ▶ play / ❚❚ pause buttons (viz.play.controls, "animate") are
// drawn as buttons that only say they were clicked ("skip"), and play these frames.

// The frame's trace attributes, one list per attribute (a trace without it: undefined,
// which Plotly.restyle leaves as it is), and its layout, in one update.
function applyFrame(gd, P, frame) {
  const traces = frame.traces || frame.data.map((_, i) => i);
  const names = new Set(frame.data.flatMap((trace) => Object.keys(trace)));
  names.delete("type");
  const restyle = {};
  for (const name of names) restyle[name] = frame.data.map((trace) => trace[name]);
  return P.update(gd, restyle, frame.layout || {}, traces);
}

function framesOf(gd) {
  return (gd._transitionData || {})._frames || [];
}

// Show the frame named `name` (a clicked query's row, ui/chart.js); play goes on from it.
function showFrame(gd, P, name) {
  const frames = framesOf(gd);
  const at = frames.findIndex((f) => f.name === String(name));
  if (at < 0) return null;
  gd.__frameAt = at;
  return applyFrame(gd, P, frames[at]);
}

// The figure's own buttons, kept, but only reporting their click (plotly_buttonclicked).
function ownButtons(layout) {
  if (!Array.isArray(layout.updatemenus)) return layout;
  const menus = layout.updatemenus.map((menu) => ({
    ...menu,
    buttons: (menu.buttons || []).map((b) => (b.method === "animate" ? { ...b, method: "skip" } : b)),
  }));
  return { ...layout, updatemenus: menus };
}

function stopPlaying(gd) {
  gd.__playing = null;
}

// ▶ play: each frame after the one shown (from the first once the last was shown), one
// every `ms`; ❚❚ pause (an animate of [null]) stops it.
function onButton(gd, P, event) {
  const args = (event.button || {}).args || [];
  if (!framesOf(gd).length || event.button.method !== "skip") return;
  stopPlaying(gd);
  if (Array.isArray(args[0])) return; // ❚❚ pause
  const ms = ((args[1] || {}).frame || {}).duration || 700;
  const token = {};
  gd.__playing = token;
  let at = (gd.__frameAt ?? -1) + 1;
  if (at >= framesOf(gd).length) at = 0;
  const step = async () => {
    const frames = framesOf(gd);
    if (gd.__playing !== token || at >= frames.length) return;
    gd.__frameAt = at;
    await applyFrame(gd, P, frames[at]);
    at += 1;
    setTimeout(step, ms);
  };
  step();
}
