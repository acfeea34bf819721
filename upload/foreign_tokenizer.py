"""The tokenizer uploaded beside a foreign ONNX graph (worker side): one ``tokenizer.json``
(``upload/tokenizer_spec.py``) or one nanoGPT ``meta.pkl`` (``upload/formats/nanogpt.py``)."""

from __future__ import annotations

from upload.errors import UploadError
from upload.formats.nanogpt import load_meta_pkl
from upload.tokenizer_spec import spec_from_json


def read_tokenizer(files: dict[str, bytes], formats: dict[str, str]) -> tuple[str, dict]:
    """(file name, tokenizer spec) of the one ``tokenizer.json`` or nanoGPT ``meta.pkl``.

    Raises:
        UploadError: none or several, or one ``upload/tokenizer_spec.py`` refuses.
    """
    names = [n for n, f in formats.items() if f in ("json", "pickle")]
    if len(names) != 1:
        raise UploadError("upload one tokenizer.json (or nanoGPT meta.pkl) with the .onnx graph")
    name = names[0]
    if formats[name] == "pickle":
        return name, {"kind": "char", "stoi": dict(load_meta_pkl(files[name], name)["stoi"])}
    try:
        text = files[name].decode("utf-8")
    except UnicodeDecodeError:
        raise UploadError(f"{name}: the tokenizer is not UTF-8 text") from None
    return name, spec_from_json(text, name)
