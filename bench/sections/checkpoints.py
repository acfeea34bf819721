"""Rows and notes of the ``checkpoints`` section: real checkpoints (issue #12)."""

from __future__ import annotations

from bench.sections.format import ms, yes


def checkpoints(data: dict, results: dict) -> list[tuple]:
    """CLI conversion, every view at T = 256, and the GPT-2-small-sized model."""
    out = []
    if conv := data.get("conversion"):
        out.append(
            (
                f"CLI conversion of a nanoGPT checkpoint with its optimizer state "
                f"({conv['parameters'] / 1e6:.1f}M parameters, {conv['file_mb']:.0f} MB file), "
                "`python -m upload.convert`",
                "reported",
                f"{conv['seconds']:.1f} s (median); command peak {conv['cli_peak_mb']:.0f} MB, "
                f"reading worker {conv['worker_peak_mb']:.0f} MB (+{conv['worker_growth_mb']:.0f} MB "
                f"while reading); output {conv['output_mb']:.1f} MB",
                "",
            )
        )
    if views := data.get("views"):
        out.append(
            (
                f"Every view of that model at T = {views['T']} (uploaded into the app: a new "
                f"sentence typed, then each of its {len(views['views_ms'])} "
                "views picked; the app's reruns, server side)",
                f"median <= {views['target_ms'] / 1000:.0f} s",
                f"{ms(views['total_ms'])} (analysis {ms(views['arrays_ms'])}; median of {views['n']})",
                yes(views["total_ms"] <= views["target_ms"]),
            )
        )
    if gpt2 := data.get("gpt2"):
        conv = gpt2["conversion"]
        params = conv["parameters"]
        for row in gpt2["analyses"]:
            out.append(
                (
                    f"GPT-2-small-sized random model ({params / 1e6:.0f}M parameters), one "
                    f"analysis at T = {row['T']} (served: inspect graph, lean outputs)",
                    "reported",
                    f"{row['median_s'] * 1000:,.0f} ms; peak RSS {row['peak_rss_mb']:,.0f} MB "
                    f"({row['loaded_rss_mb']:,.0f} MB with the graph open), the analysis holds "
                    f"{row['analysis_mb']:,.0f} MB",
                    "",
                )
            )
    return out


def checkpoints_notes(data: dict) -> list[str]:
    """How the checkpoint rows were measured."""
    gpt2 = data.get("gpt2", {}).get("conversion", {})
    return [
        "Checkpoints: the nanoGPT checkpoint is `bench/conversion.py`'s shakespeare-char "
        "baby GPT (6 layers x 6 heads, n_embd 384, block 256, random weights, a real AdamW "
        "state); the command runs as a user runs it (a fresh interpreter, torch import, the "
        "isolated worker). Its converted graphs are uploaded into an AppTest session of "
        "the app (the model runs in its upload worker) and every view is rerun there. The GPT-2-small-sized model "
        "(`bench/gpt2_small.py`: random weights, GPT-2's layout and sizes, a 50,257-id "
        f"byte-level tokenizer) is converted by the folder converter ({gpt2.get('seconds', 0):.0f} s, "
        "reading worker peak "
        f"{gpt2.get('worker_peak_mb', 0):,.0f} MB) and analysed in a fresh process per T."
    ]
