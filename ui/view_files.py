"""A view's figures as files that leave the app: the whole view as one HTML file that
draws offline, and a Vega-Lite chart as SVG or PNG.

The HTML holds plotly.js itself (the ``plotly.min.js`` bundled with the plotly package,
about 4.8 MB, plotly.js 4.1 beside Streamlit's 4.2: both read the figures' typed arrays)
and, when the view drew Vega-Lite charts, Vega, Vega-Lite and vega-embed (the bundle of
``vl-convert-python``, about 0.9 MB): no ``<script src>``, nothing fetched, so the file
draws in a browser with no network, hover and all. Each plotly figure is the JSON the
page drew (``ui.figures.collecting``), byte for byte, with the app's toolbar (PNG at 2x
and SVG) and its ▶ play (``ui/player.js``, the same frames); a Vega-Lite chart gets
vega-embed's own menu (save as SVG or PNG). Nothing here runs on a rerun: the files are
made when a download button is clicked (``ui.downloads``).
"""

from __future__ import annotations

import functools
import html
from collections.abc import Sequence
from pathlib import Path

import orjson
import pyarrow as pa

from ui.figures import SAFE, Drawn, plot_config

PLAYER_JS = Path(__file__).with_name("player.js")
VEGA_ACTIONS = {"export": True, "source": False, "compiled": False, "editor": False}

# the app's SVG button (ui/chart.js) and a click that shows a query's ▶ frame
_SCRIPT = """
const DOWNLOAD = "M5 20h14v-2H5v2zm7-3 6-6h-4V3h-4v8H6l6 6z";
function svgButton(gd, config) {
  const options = config.toImageButtonOptions || {};
  return {
    name: "downloadSvg",
    title: "Download plot as an SVG (vector)",
    icon: { width: 24, height: 24, path: DOWNLOAD },
    click: () => Plotly.downloadImage(gd, { format: "svg", filename: options.filename || "newplot",
      width: gd._fullLayout.width, height: gd._fullLayout.height }),
  };
}
FIGURES.forEach((item, i) => {
  const div = document.getElementById(`figure-${i}`);
  if (item.vega) {
    vegaEmbed(div, item.vega, { actions: VEGA_ACTIONS }).catch(console.error);
    return;
  }
  const { data, layout, frames } = item.figure;
  const config = { ...item.config, responsive: true, modeBarButtonsToAdd: [svgButton(div, item.config)] };
  Plotly.newPlot(div, { data, layout: ownButtons({ ...layout, autosize: true }), frames: frames || [], config })
    .then((gd) => {
      gd.on("plotly_buttonclicked", (event) => onButton(gd, Plotly, event));
      gd.on("plotly_click", (event) => {
        const point = (event.points || []).find((p) => Number.isInteger(p.customdata));
        if (point) showFrame(gd, Plotly, point.customdata);
      });
    });
});
"""
_STYLE = (
    "body { font-family: system-ui, sans-serif; color: #111; margin: 24px auto;"
    " max-width: 1400px; padding: 0 16px; }"
    " .figure { margin: 16px 0 32px; max-width: 1000px; }"
    " p { margin: 4px 0; }"
)


@functools.cache
def plotly_js() -> str:
    """plotly.js as the plotly package bundles it (read once per process)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


@functools.cache
def vega_js() -> str:
    """Vega, Vega-Lite and vega-embed in one script that sets ``window.vegaEmbed``
    (``vl_convert.javascript_bundle``, made once per process: about 2 s)."""
    import vl_convert

    return vl_convert.javascript_bundle()


def vega_values(spec: dict) -> dict:
    """A Vega-Lite spec with Arrow datasets (``viz.spec.vega_lite``) with each dataset as
    a list of records instead, as Vega-Lite itself reads ``datasets``."""
    datasets = {
        name: pa.ipc.open_stream(data).read_all().to_pylist() if isinstance(data, bytes) else data
        for name, data in spec.get("datasets", {}).items()
    }
    return {**spec, "datasets": datasets}


def vega_image(spec: dict, fmt: str) -> bytes:
    """A Vega-Lite spec (Arrow datasets) drawn as ``"svg"`` (UTF-8) or ``"png"`` (2x),
    by ``vl-convert`` on the server, offline.

    Raises:
        ValueError: for another format.
    """
    import vl_convert

    values = vega_values(spec)
    if fmt == "svg":
        return vl_convert.vegalite_to_svg(values).encode()
    if fmt == "png":
        return vl_convert.vegalite_to_png(values, scale=2)
    raise ValueError(f"a Vega-Lite chart is drawn as svg or png, not {fmt!r}")


def _safe(raw: bytes) -> bytes:
    """JSON made safe inside ``<script>`` as ``ui.figures.encode`` makes it."""
    for unsafe, safe in SAFE:
        raw = raw.replace(unsafe, safe)
    return raw


def _item(drawn: Drawn) -> bytes:
    if drawn.plotly is not None:
        config = orjson.dumps(plot_config(drawn.key))
        return b'{"figure":' + drawn.plotly.json + b',"config":' + config + b"}"
    return b'{"vega":' + _safe(orjson.dumps(vega_values(drawn.vega))) + b"}"


def view_html(drawn: Sequence[Drawn], title: str, lines: Sequence[str] = ()) -> bytes:
    """One HTML file (UTF-8) that draws ``drawn`` (a view's figures, in page order) with
    no network: plotly.js (and Vega when a Vega-Lite chart is among them) inlined.

    Args:
        drawn: the figures (``ui.figures.collecting``).
        title: the page's heading and ``<title>`` (escaped here).
        lines: what the figures are of (model, sentence, layer, head): one paragraph each.
    """
    vega = any(d.vega is not None for d in drawn)
    head = "".join(f"<p>{html.escape(line)}</p>" for line in lines)
    divs = "".join(f'<div class="figure" id="figure-{i}"></div>' for i in range(len(drawn)))
    figures = b"[" + b",".join(_item(d) for d in drawn) + b"]"
    parts = [
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style>"
        f'<script type="text/javascript">{plotly_js()}</script>',
        f'<script type="text/javascript">{vega_js()}</script>' if vega else "",
        f"</head><body><h1>{html.escape(title)}</h1>{head}{divs}",
        '<script type="text/javascript">\nconst FIGURES = ',
    ]
    tail = (
        f";\nconst VEGA_ACTIONS = {orjson.dumps(VEGA_ACTIONS).decode()};\n"
        f"{PLAYER_JS.read_text()}\n{_SCRIPT}</script></body></html>\n"
    )
    return "".join(parts).encode() + figures + tail.encode()
