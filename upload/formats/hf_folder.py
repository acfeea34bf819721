"""A local Hugging Face folder of any converted family -> our config, tokenizer spec and
weights (worker side): GPT-2 (``hf_gpt2.py``), GPT-Neo (``hf_gpt_neo.py``), and Llama,
Mistral, Qwen2 and GPT-NeoX (``hf_llama.py``), picked by ``config.json``'s ``model_type``. Any other type is refused
with the ONNX route (``upload/hf_advice.py``)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from models.config import ModelConfig
from upload.errors import UploadError
from upload.folder_layout import CONFIG, TOKENIZER, folder_files
from upload.formats import hf_gpt2, hf_gpt_neo, hf_llama
from upload.formats.local_weights import read_safetensors, read_torch_zip
from upload.limits import Limits
from upload.token_rows import check_rows
from upload.tokenizer_spec import spec_from_json

# The spec kinds each family's tokenizer.json may give (upload/tokenizer_spec.py)
GPT2_TOKENIZERS = ("bpe",)


def read_folder(folder: Path, limits: Limits) -> tuple[ModelConfig, dict, dict]:
    """A converted family's folder -> (our config, tokenizer spec, float32 weights by our
    parameter names; a tied ``lm_head.weight`` left out), every part checked.

    Raises:
        UploadError: one line naming the file: a missing file (which, and what a folder
            needs), another model type, a refused config, tokenizer or weights file,
            token rows that do not match the tokenizer (both numbers), or weights that do
            not fit the config.
    """
    files = folder_files(folder)
    label = f"{folder.name}/"
    data = hf_gpt2._json(files[CONFIG], label + CONFIG)
    model_type = data.get("model_type", "gpt2")
    families = (*hf_llama.FAMILIES, "gpt_neo")
    if model_type in hf_llama.FAMILIES:
        cfg = hf_llama.family_config(data, label + CONFIG, limits)
    elif model_type == "gpt_neo":
        cfg = hf_gpt_neo.gpt_neo_config(data, label + CONFIG, limits)
    else:
        cfg = hf_gpt2.gpt2_config(data, label + CONFIG, limits)
    tok_name = label + TOKENIZER
    spec = spec_from_json(hf_gpt2._text(files[TOKENIZER], tok_name), tok_name)
    if model_type not in families and spec["kind"] not in GPT2_TOKENIZERS:
        raise UploadError(f"{tok_name}: not GPT-2's byte-level BPE tokenizer")
    if spec["kind"] in ("wordpiece", "char"):
        raise UploadError(f"{tok_name}: a {spec['kind']} tokenizer, not a {model_type} one")
    vocab = spec.get("vocab") if isinstance(spec.get("vocab"), dict) else {}
    ids = [i for i in vocab.values() if type(i) is int]
    check_rows(len(vocab), max(ids, default=-1), cfg.vocab_size, f"{tok_name} + {label + CONFIG}")
    weights_file = next(n for n in files if n not in (CONFIG, TOKENIZER))
    name = label + weights_file
    if weights_file.endswith(".safetensors"):
        skip = {"gpt2": hf_gpt2.BUFFER, "gpt_neo": hf_gpt_neo.BUFFER}.get(
            model_type, hf_llama.BUFFER
        )
        state = read_safetensors(files[weights_file], name, limits, skip=skip)
    else:
        state = read_torch_zip(files[weights_file], name, limits)
    if model_type == "gpt_neo":
        state, names = hf_gpt_neo.our_state(state, cfg, name), hf_gpt_neo.their_names
    elif model_type in hf_llama.FAMILIES:
        state = hf_llama.our_state(state, cfg, model_type, name)
        names = partial(hf_llama.their_names, model_type=model_type)
    else:
        state = {k: v for k, v in state.items() if not hf_gpt2.BUFFER.search(k)}
        state, names = hf_gpt2.our_state(state, cfg, name), hf_gpt2.gpt2_names
    hf_gpt2.check_weights(cfg, state, name, names)
    return cfg, spec, state
