"""What to say when a user brings Hugging Face files the uploader does not take as they
are: what the file is, and the one command that works (#44 item 22).

A GPT-2, GPT-Neo, Llama, Mistral, Qwen2 or GPT-NeoX folder converts with ``python -m upload.convert
FOLDER --out converted/``; any other causal language model (OPT, Falcon, ...) goes through
ONNX: exported with ``torch.onnx.export`` (README, "Exports known to work"), then
checked and uploaded with its ``tokenizer.json``. Pure text; nothing here reads a file.
"""

from __future__ import annotations

FOLDER_COMMAND = "python -m upload.convert {folder} --out converted/"
ONNX_ROUTE = (
    "export it to ONNX (torch.onnx.export of the model returning its logits: README, "
    '"Exports known to work"), then check it as the uploader will and upload model.onnx '
    "with its tokenizer.json: python -m upload.convert model.onnx --tokenizer {tokenizer}"
)
# The model_types upload.convert reads (upload/formats/hf_folder.py), as said to users
CONVERTED = "gpt2, gpt_neo, llama, mistral, qwen2 and gpt_neox"
# Tensor names that mark a Hugging Face checkpoint: the converted families', and others'
GPT2_PREFIXES = ("transformer.h.", "h.", "transformer.wte.", "wte.", "model.layers.",
                 "model.embed_tokens.", "gpt_neox.layers.")  # fmt: skip
HF_PREFIXES = ("model.decoder.layers.", "transformer.word_embeddings.", "model.decoder.")


def not_gpt2_folder(name: str, model_type: str, architectures: str, folder: str) -> str:
    """The refusal of a Hugging Face folder of a type upload.convert does not read, naming ONNX's route."""
    return (
        f"{name}: a Hugging Face {architectures} model (model_type {model_type!r}); "
        f"upload.convert converts {CONVERTED} folders. For this one, "
        + ONNX_ROUTE.format(tokenizer=f"{folder}/tokenizer.json")
    )


def config_and_tokenizer(names: list[str]) -> str | None:
    """The refusal of a Hugging Face folder's ``config.json`` and ``tokenizer.json``
    uploaded without its weights (by their names), or None for other vocabularies."""
    if "config.json" not in [n.lower() for n in names]:
        return None
    return (
        f"{' and '.join(names)}: a Hugging Face model's config and tokenizer, without its "
        "weights. Convert the whole folder (config.json, model.safetensors, tokenizer.json) "
        "on your computer: "
        + FOLDER_COMMAND.format(folder="path/to/folder")
        + f" (it converts {CONVERTED} folders and names the route for any other)"
    )


def hf_checkpoint(name: str, tensor_names: list[str]) -> str | None:
    """The refusal of a Hugging Face ``model.safetensors`` on its own (weights without our
    config and tokenizer metadata), judged by its tensor names; None if not one."""
    sample = next((t for t in tensor_names if t.startswith(GPT2_PREFIXES + HF_PREFIXES)), None)
    if sample is None:
        return None
    what = f"{name}: the weights of a Hugging Face model (tensors such as {sample!r}), "
    what += "without the config and tokenizer this app needs in its metadata. "
    if sample.startswith(GPT2_PREFIXES):
        return (
            what
            + "Convert its folder, with config.json and tokenizer.json beside it: "
            + (FOLDER_COMMAND.format(folder="path/to/folder"))
        )
    return what + f"It is not {CONVERTED}: " + ONNX_ROUTE.format(tokenizer="tokenizer.json")
