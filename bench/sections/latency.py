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
    """The app's reruns against their targets, then one row per model and T: arrays +
    every view's figures and JSON (reported: a rerun draws the view on screen only)."""
    out = rerun(lat["rerun"])
    for kind in SHIPPED_KINDS:
        for T, s in lat.get(kind, {}).items():
            total, arrays, views = s["total"], s["arrays"], s["views"]
            measured = (
                f"total {_mp(total)} = arrays {ms(arrays['median_ms'])} + "
                f"figures & JSON {ms(views['median_ms'])} (medians)"
            )
            out.append((f"App latency (all views), {kind}, T = {T}", "reported", measured, ""))
            if one := slowest_view(s):
                view, view_ms = one
                out.append(
                    (
                        f"App latency (the view on screen, slowest: {view}), {kind}, T = {T}",
                        "reported",
                        f"about {ms(arrays['median_ms'] + view_ms)} = arrays "
                        f"{ms(arrays['median_ms'])} + {view} figures {ms(view_ms)} "
                        "(sum of per-builder medians)",
                        "",
                    )
                )
    return out


def slowest_view(s: dict) -> tuple[str, float] | None:
    """(view, ms) of the view whose figures cost most, from ``builders_ms`` keyed
    ``"<view>: <builder>"``; a rerun of the app draws only the view on screen."""
    per_view: dict[str, float] = {}
    for key, value in s.get("builders_ms", {}).items():
        view = key.split(":", 1)[0]
        per_view[view] = per_view.get(view, 0.0) + value
    return max(per_view.items(), key=lambda kv: kv[1]) if per_view else None


def latency_notes(lat: dict) -> list[str]:
    """How reruns were timed, and which builder dominates the figure time."""
    out = [f"App reruns: {lat['rerun']['what']}."] if "rerun" in lat else []
    for kind, s in lat.get("slowest_builder", {}).items():
        T = str(s["T"])
        share = s["median_ms"] / lat[kind][T]["total"]["median_ms"]
        out.append(
            f"App latency, {kind}, T = {T}: the slowest item is `{s['builder']}` "
            f"({ms(s['median_ms'])}, {share:.0%} of the total); per-builder medians are "
            "in results.json (`latency.<model>.<T>.builders_ms`)."
        )
    return out
