"""BPE tokenizers, each pipeline built by our code from plain data (a spec's settings).

Two families, as the published ``tokenizer.json`` files of the models this app converts
have them (``upload/bpe_spec.py`` reads those files):

* byte-level BPE (Radford et al. 2019, section 2.2): every byte of a text is a symbol, so
  nothing is unknown. The words are cut by one of three regexes, each a constant here
  (``pre``): GPT-2's (built into the ``tokenizers`` library; GPT-2, GPT-Neo, GPT-NeoX),
  Qwen2's (:data:`QWEN2_PATTERN`, one digit a word) or Llama-3's (:data:`LLAMA3_PATTERN`,
  up to three digits a word). Qwen2 and GPT-NeoX first normalize to NFC (``nfc``);
  Llama-3 takes a whole word that is a vocabulary entry as it is (``ignore_merges``).
* SentencePiece-style BPE (Kudo & Richardson 2018), as Llama 1/2, Mistral and TinyLlama
  ship it: spaces become "▁" (U+2581) and the text starts with one, the whole text is one
  word, and a character the vocabulary lacks becomes its UTF-8 bytes ``<0x00>`` ..
  ``<0xFF>`` (``byte_fallback``) or the unknown token. Two forms (``pipeline``): the
  "legacy" normalizer (Prepend "▁", then Replace " " -> "▁": every piece between added
  tokens starts with "▁") and the "metaspace" pre-tokenizer (prepend_scheme "first": only
  the text's first piece does); and two decoders (``decoder``): "fallback" (Replace,
  ByteFallback, Fuse, Strip one leading space) or "metaspace" (byte tokens stay as written).

Added tokens (``special``; ``normalized``: those matched after the normalizer) are matched
in a text as literal strings; ``bos`` / ``eos`` are what the post-processor puts around a
text when the library is asked to add special tokens (``models.tokenizer.encode`` does not).
"""

from __future__ import annotations

import re

from tokenizers import (
    AddedToken,
    Regex,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
)

SPACE = "\u2581"  # "▁": SentencePiece's mark of a space
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)  # transformers' models/qwen2/tokenization_qwen2.py PRETOKENIZE_REGEX
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)  # transformers' convert_slow_tokenizer.py (TikTokenConverter), Llama-3's tokenizer.json
PATTERNS = {"qwen2": QWEN2_PATTERN, "llama3": LLAMA3_PATTERN}  # "gpt2": the library's own
PRE_TOKENIZERS = ("gpt2", *PATTERNS)
PIPELINES = ("legacy", "metaspace")  # SentencePiece: normalizer or pre-tokenizer
DECODERS = ("fallback", "metaspace")  # SentencePiece: Replace+ByteFallback+Fuse+Strip, Metaspace
_BYTE_TOKEN = re.compile(r"<0x([0-9A-F]{2})>")


def _model(vocab: dict[str, int], merges, **settings) -> models.BPE:
    """The library's BPE model; ValueError (not a Rust panic) when it refuses the data."""
    try:
        return models.BPE(vocab, [tuple(m) for m in merges], **settings)
    except BaseException as exc:  # noqa: BLE001 - the Rust side may panic (a BaseException)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise ValueError(f"not a valid BPE vocabulary: {str(exc)[:200]}") from None


def _added(tokenizer: Tokenizer, special, normalized) -> None:
    """``special`` matched before the normalizer, ``normalized`` after it; all literal."""
    tokenizer.add_special_tokens(list(special))
    tokenizer.add_tokens([AddedToken(t, normalized=True) for t in normalized])


def _template(vocab: dict[str, int], bos: str | None, eos: str | None):
    """``bos $A eos`` (each optional) as Llama's tokenizer writes it; None when neither."""
    if bos is None and eos is None:
        return None
    marks = [t for t in (bos, eos) if t is not None]
    single = " ".join([*([f"{bos}:0"] if bos else []), "$A:0", *([f"{eos}:0"] if eos else [])])
    pair = single + " " + " ".join([*([f"{bos}:1"] if bos else []), "$B:1"])
    pair += f" {eos}:1" if eos else ""
    return processors.TemplateProcessing(
        single=single, pair=pair, special_tokens=[(t, vocab[t]) for t in dict.fromkeys(marks)]
    )


def bpe_tokenizer(
    vocab: dict[str, int],
    merges: list[tuple[str, str]],
    add_prefix_space: bool = False,
    special: list[str] = (),
    *,
    pre: str = "gpt2",
    nfc: bool = False,
    ignore_merges: bool = False,
    normalized: list[str] = (),
    bos: str | None = None,
    eos: str | None = None,
) -> Tokenizer:
    """Byte-level BPE over ``vocab`` (byte-level token -> id) and ``merges`` (pairs in
    priority order), words cut by ``pre``'s regex (one of :data:`PRE_TOKENIZERS`, ours:
    never a user's), NFC first when ``nfc``, byte-level decoding.

    Raises:
        ValueError: if a merge names a token the vocabulary lacks (the library refuses it).
    """
    tokenizer = Tokenizer(_model(vocab, merges, fuse_unk=False, ignore_merges=ignore_merges))
    if nfc:
        tokenizer.normalizer = normalizers.NFC()
    if pre == "gpt2":
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(
            add_prefix_space=add_prefix_space, use_regex=True
        )
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(PATTERNS[pre]), behavior="isolated", invert=False),
                pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space, use_regex=False),
            ]
        )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = _template(vocab, bos, eos)
    _added(tokenizer, special, normalized)
    return tokenizer


def sentencepiece_tokenizer(
    vocab: dict[str, int],
    merges: list[tuple[str, str]],
    *,
    unk: str | None = None,
    byte_fallback: bool = True,
    fuse_unk: bool = True,
    ignore_merges: bool = False,
    pipeline: str = "legacy",
    decoder: str = "fallback",
    special: list[str] = (),
    normalized: list[str] = (),
    bos: str | None = None,
    eos: str | None = None,
) -> Tokenizer:
    """SentencePiece-style BPE (Llama 1/2, Mistral, TinyLlama) over ``vocab`` and
    ``merges``, in the ``pipeline`` and ``decoder`` forms of :data:`PIPELINES` and
    :data:`DECODERS` (module docstring), exactly as transformers' ``LlamaConverter``
    writes them.

    Raises:
        ValueError: if a merge names a token the vocabulary lacks (the library refuses it).
    """
    tokenizer = Tokenizer(
        _model(
            vocab,
            merges,
            unk_token=unk,
            fuse_unk=fuse_unk,
            byte_fallback=byte_fallback,
            ignore_merges=ignore_merges,
        )
    )
    if pipeline == "legacy":
        tokenizer.normalizer = normalizers.Sequence(
            [normalizers.Prepend(SPACE), normalizers.Replace(" ", SPACE)]
        )
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(SPACE, "first", split=False)
    if decoder == "fallback":
        tokenizer.decoder = decoders.Sequence(
            [
                decoders.Replace(SPACE, " "),
                decoders.ByteFallback(),
                decoders.Fuse(),
                decoders.Strip(" ", 1, 0),
            ]
        )
    else:
        tokenizer.decoder = decoders.Metaspace(SPACE, "first", split=False)
    tokenizer.post_processor = _template(vocab, bos, eos)
    _added(tokenizer, special, normalized)
    return tokenizer


def sentencepiece_text(token: str) -> str:
    """A SentencePiece token as the text it stands for: "▁" as a space (``▁the`` -> `` the``),
    a byte token as its byte (``<0x0A>`` -> a newline; a byte that is not a whole UTF-8
    character as ``\\xNN``, as :func:`models.tokenizer.byte_level_text` shows one)."""
    if byte := _BYTE_TOKEN.fullmatch(token):
        return bytes([int(byte[1], 16)]).decode("utf-8", errors="backslashreplace")
    return token.replace(SPACE, " ")


def build_bpe(kind: str, vocab: dict[str, int], merges, settings: dict) -> Tokenizer:
    """The BPE tokenizer of a spec's ``kind`` ("bpe" or "sentencepiece"), its vocabulary,
    merges and other fields (``settings``; missing ones take the builders' defaults, so a
    spec written before a field existed builds as it did).

    Raises:
        ValueError: if the library refuses the vocabulary or merges.
    """
    known = BPE_SETTINGS if kind == "bpe" else SENTENCEPIECE_SETTINGS
    chosen = {k: settings[k] for k in known if k in settings}
    if kind == "bpe":
        return bpe_tokenizer(vocab, merges, **chosen)
    return sentencepiece_tokenizer(vocab, merges, **chosen)


BPE_SETTINGS = (
    "add_prefix_space",
    "special",
    "pre",
    "nfc",
    "ignore_merges",
    "normalized",
    "bos",
    "eos",
)
SENTENCEPIECE_SETTINGS = (
    "unk",
    "byte_fallback",
    "fuse_unk",
    "ignore_merges",
    "pipeline",
    "decoder",
    "special",
    "normalized",
    "bos",
    "eos",
)
