"""The export worker's request: checked weights in, our exporter's graphs out (as bytes).

Runs in a fresh worker (``upload/worker.py``, op ``export``) that never saw a user's file.
"""

from __future__ import annotations

import numpy as np


def export(header: dict, weights: dict[str, np.ndarray]) -> tuple[dict, dict[str, np.ndarray]]:
    """Checked weights, config and tokenizer spec -> our exporter's graphs (as uint8 arrays):
    inspect, fast and step, or with ``header["graphs"] == "lab"`` the lab graph alone.

    Runs in a fresh worker that never saw a user's file: its input is what the server
    checked (``upload/load.py``). The model is built strictly (names, shapes, finite).

    Raises:
        UploadError / ValueError: weights that do not fit the config.
    """
    import torch

    from export.graphs import export_lab, export_model
    from models.checkpoint import build_model
    from models.config import ModelConfig
    from upload.spec_checks import check_spec
    from upload.tempdirs import workdir
    from upload.tokenizer_spec import build

    name = str(header.get("name", "the checkpoint"))
    cfg = ModelConfig.from_dict(header["config"])
    tokenizer = build(check_spec(header["tokenizer"], cfg.vocab_size, name))
    model = build_model(cfg, {k: torch.from_numpy(v) for k, v in weights.items()}, name)
    with workdir() as folder:
        if header.get("graphs") == "lab":  # asked for when a lab view first opens
            paths = [export_lab(model, folder, tokenizer, prefix="upload")]
        else:  # the graphs every view needs; the lab graph waits for a lab view
            paths = export_model(model, folder, tokenizer, prefix="upload", lab=False)
        graphs = {p.name.split(".")[1]: np.fromfile(p, np.uint8) for p in paths}
    return {"parameters": model.num_parameters()}, graphs
