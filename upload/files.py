"""What the server checks of uploaded files itself, reading no content: how many, their
sizes and extensions, which one is the model, and safe names to write them under."""

from __future__ import annotations

import re
from pathlib import PurePath

from upload.errors import UploadError
from upload.hf_advice import config_and_tokenizer
from upload.limits import MAX_FILES, MAX_UPLOAD_BYTES
from upload.sizes import check_size, shrink_advice

# The suffixes the uploader takes (upload.intake.EXTENSIONS, worker side, maps each to the
# format it must then sniff as).
EXTENSIONS = (".safetensors", ".pt", ".pth", ".ckpt", ".pkl", ".json", ".onnx")
VOCABULARY_SUFFIXES = (".pkl", ".json")  # a nanoGPT checkpoint's meta.pkl or tokenizer.json


def check_files(files: dict[str, bytes]) -> None:
    """What the server checks itself: a count, sizes and extensions (no content is read).

    Raises:
        UploadError: no files, too many, empty or too large, an unsupported extension,
            or only a vocabulary (the uploader refuses a ckpt.pt over the limit before
            this code sees it, so the message says which command shrinks one).
    """
    if not files:
        raise UploadError("no files were uploaded")
    if len(files) > MAX_FILES:
        raise UploadError(f"too many files ({len(files)}); upload at most {MAX_FILES}")
    for name, data in files.items():
        check_size(name, data)
        if PurePath(name).suffix.lower() not in EXTENSIONS:
            raise UploadError(
                f"{name}: unsupported file type; upload a .safetensors file, a nanoGPT "
                "ckpt.pt with its meta.pkl or tokenizer.json, .onnx graphs, or an .onnx "
                "language model with its tokenizer.json"
            )
    if all(PurePath(n).suffix.lower() in VOCABULARY_SUFFIXES for n in files):
        raise UploadError(vocabulary_only(list(files)))


def vocabulary_only(names: list[str]) -> str:
    """The refusal of a vocabulary uploaded without its checkpoint: most often the
    uploader refused the ckpt.pt beside it as too large, so it says how to shrink one."""
    hugging_face = config_and_tokenizer(names)
    if hugging_face is not None:
        return hugging_face
    return (
        f"{' and '.join(names)}: only a vocabulary; upload it together with its ckpt.pt. "
        f"The uploader refuses files over {MAX_UPLOAD_BYTES // 1_000_000} MB, and a nanoGPT "
        "ckpt.pt holds its optimizer state too: shrink it on your computer with "
        + shrink_advice("ckpt.pt", names[0])
    )


def main_file(files: dict) -> str:
    """The name of the model file among ``files`` (not the meta.pkl or tokenizer.json)."""
    model_files = (n for n in files if not n.lower().endswith(VOCABULARY_SUFFIXES))
    return next(model_files, next(iter(files)))


def safe_filename(name: str, suffix: str) -> str:
    """A file name made of ``[A-Za-z0-9_.-]`` from a user's ``name``, plus ``suffix``."""
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", PurePath(name).stem)[:80] or "upload"
    return stem.lstrip(".") + suffix
