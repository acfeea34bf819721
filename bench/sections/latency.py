"""Rows and notes of the ``latency`` section: a new sentence to every view computed."""

from __future__ import annotations

from bench.sections.format import _mp, ms, yes


def latency(lat: dict, results: dict) -> list[tuple]:
    """One row per model and T: total (arrays + every view's figures and JSON) vs target."""
    out, target = [], lat["target_ms"]
    for kind in ("softmax", "linear"):
        for T, s in lat.get(kind, {}).items():
            name = f"App latency (all views), {kind}, T = {T}"
            if "total" not in s:  # older runs timed the arrays only
                measured = f"{_mp(s)}; figures not timed in this run"
                name = f"App latency (arrays only), {kind}, T = {T}"
                out.append((name, f"median <= {target:.0f} ms", measured, "n/a"))
                continue
            total, arrays, views = s["total"], s["arrays"], s["views"]
            measured = (
                f"total {_mp(total)} = arrays {ms(arrays['median_ms'])} + "
                f"figures & JSON {ms(views['median_ms'])} (medians)"
            )
            met = total["median_ms"] <= target
            out.append((name, f"median <= {target:.0f} ms", measured, yes(met)))
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
    """Which builder dominates the figure time."""
    out = []
    for kind, s in lat.get("slowest_builder", {}).items():
        T = str(s["T"])
        share = s["median_ms"] / lat[kind][T]["total"]["median_ms"]
        out.append(
            f"App latency, {kind}, T = {T}: the slowest item is `{s['builder']}` "
            f"({ms(s['median_ms'])}, {share:.0%} of the total); per-builder medians are "
            "in results.json (`latency.<model>.<T>.builders_ms`)."
        )
    return out
