"""Rows and notes of the ``latency`` section: the app's reruns (layer/head change, new
sentence) against their targets, and a new sentence's arrays and every view's figures."""

from __future__ import annotations

from bench.sections.format import _mp, ms, yes
from models.config import SHIPPED_KINDS

RERUN_ROWS = (  # (field, what the row measures, target field)
    ("warm", "Rerun after a layer/head change, warm cache (head seen before)", "target_ms"),
    ("cold", "Rerun after a layer/head change, cold cache (first look at the head)", "target_ms"),
    ("new_sentence", "New sentence to the view on screen (rerun)", "new_sentence_target_ms"),
)


def rerun(re: dict) -> list[tuple]:
    """Per model: the app's reruns (AppTest) against their targets, every view."""
    out = []
    for kind in SHIPPED_KINDS:
        views = re.get(kind)
        if not views:
            continue
        for field, what, target_key in RERUN_ROWS:
            medians = {view: v[field]["median_ms"] for view, v in views.items()}
            slow = max(medians, key=medians.get)
            first = next(iter(medians))
            target = re[target_key]
            out.append(
                (
                    f"{what}, {kind}, T = {re['T']}",
                    f"median <= {target:.0f} ms, every view",
                    f"{first} view {ms(medians[first])}; slowest: {slow} view "
                    f"{ms(medians[slow])} (medians of {views[slow][field]['n']})",
                    yes(max(medians.values()) <= target),
                )
            )
    return out


def latency(lat: dict, results: dict) -> list[tuple]:
    """The app's reruns against their targets, then one row per model and T: a new
    sentence through every view (reported: a rerun draws the view on screen only), and
    the slowest view's rerun."""
    out = rerun(lat["rerun"])
    for kind in SHIPPED_KINDS:
        for T, s in lat.get(kind, {}).items():
            total, arrays, views = s["total"], s["arrays"], s["views_ms"]
            measured = (
                f"total {_mp(total)} for {len(views)} reruns, one a view (medians; "
                f"analyze() alone {ms(arrays['median_ms'])})"
            )
            out.append((f"App latency (all views), {kind}, T = {T}", "reported", measured, ""))
            slow = max(views, key=views.get)
            out.append(
                (
                    f"App latency (the view on screen, slowest: {slow}), {kind}, T = {T}",
                    "reported",
                    f"{ms(views[slow])} (median rerun; the first view's rerun also "
                    f"analyses the sentence: {next(iter(views))} {ms(next(iter(views.values())))})",
                    "",
                )
            )
    return out


def latency_notes(lat: dict) -> list[str]:
    """How reruns and the every-view rows were timed."""
    out = [f"App reruns: {lat['rerun']['what']}."] if "rerun" in lat else []
    if "what" in lat:
        out.append(
            f"App latency (all views): {lat['what']}; per-view medians are in results.json "
            "(`latency.<model>.<T>.views_ms`)."
        )
    return out
