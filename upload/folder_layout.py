"""What a Hugging Face folder holds, by file name: read by the server (its
served models, ``ui/served.py``), the command line (``upload/folders.py``) and the upload
worker (``upload/formats/hf_gpt2.py``) alike. Only names are looked at here."""

from __future__ import annotations

from pathlib import Path

from upload.errors import UploadError

CONFIG = "config.json"
TOKENIZER = "tokenizer.json"
WEIGHTS = ("model.safetensors", "pytorch_model.bin")  # the first one found is read
SOURCE = "Hugging Face folder"
NEEDS = (
    f"a Hugging Face folder needs {CONFIG}, {WEIGHTS[0]} or {WEIGHTS[1]}, and {TOKENIZER} "
    "(model.save_pretrained(DIR) and tokenizer.save_pretrained(DIR) write them)"
)


def folder_files(folder: Path) -> dict[str, Path]:
    """The files of a Hugging Face folder that are read: ``config.json``,
    ``tokenizer.json`` and one weights file (``model.safetensors`` first), by name.

    Raises:
        UploadError: one line: not a folder, or which files are missing and what a
            folder needs ("gpt2/: missing tokenizer.json; a Hugging Face folder needs
            ..."); sharded weights are named as such.
    """
    if not folder.is_dir():
        raise UploadError(f"{folder.name or folder}: not a folder; {NEEDS}")
    weights = next((n for n in WEIGHTS if (folder / n).is_file()), None)
    missing = [n for n in (CONFIG, TOKENIZER) if not (folder / n).is_file()]
    if weights is None:
        sharded = any((folder / f"{n}.index.json").is_file() for n in WEIGHTS)
        missing.insert(1, f"{WEIGHTS[0]} (sharded weights are not read)" if sharded else
                       f"{WEIGHTS[0]} or {WEIGHTS[1]}")  # fmt: skip
    if missing:
        raise UploadError(f"{folder.name}/: missing {' and '.join(missing)}; {NEEDS}")
    return {n: folder / n for n in (CONFIG, TOKENIZER, weights)}
