"""Small ``tokenizer.json`` files of the Llama-era families, built in the test (nothing is
downloaded): each trained with the tokenizers library on a little text and written with
its family's pipeline exactly as the published files (and transformers'
``convert_slow_tokenizer.py``) have it.

* :func:`sentencepiece_bpe_json`: Llama 1/2, Mistral, TinyLlama: SentencePiece-style BPE,
  ids 0-2 ``<unk> <s> </s>``, 3-258 the byte tokens ``<0x00>`` .. ``<0xFF>``, then pieces;
  the legacy normalizer or the Metaspace pre-tokenizer; BOS by the post-processor.
* :func:`qwen2_json`: Qwen2's byte-level BPE (NFC, its split regex), its special tokens
  only in ``added_tokens``, after the vocabulary.
* :func:`llama3_json`: Llama-3's byte-level BPE (its split regex, ``ignore_merges``),
  ``<|begin_of_text|>`` added by the post-processor.
* :func:`gpt_neox_json`: GPT-NeoX's (Pythia's) byte-level BPE: GPT-2's pipeline after NFC,
  runs of spaces as added tokens.

Each returns the JSON string; ``vocab_size`` is the number of ids (the config's
``vocab_size`` that fits it) and each tokenizer has exactly that many, ids ``0..n-1``
(at least 320 for :func:`sentencepiece_bpe_json`, 270 for the others; fewer raise
ValueError).
"""

from __future__ import annotations

import json

from tokenizers import (
    AddedToken,
    Regex,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

from models.bpe import LLAMA3_PATTERN, QWEN2_PATTERN, SPACE

TEXT = [
    "First Citizen:\nBefore we proceed any further, hear me speak.\n",
    "All:\nSpeak, speak. I'll go; they're here, we'd said it's 2024 and 12345 people.\n",
    "the cat sat on the mat. the dog sat on the log. The café was nice.\n",
    "THE END. Don't stop: 3.14159 is pi, 42 is the answer.\n",
] * 20
SP_SPECIAL = ["<unk>", "<s>", "</s>"]
BYTES = [f"<0x{b:02X}>" for b in range(256)]


def _trained(pre, vocab_size: int, alphabet=(), normalizer=None) -> tuple[dict, list]:
    """(vocab, merges) of a BPE trained on :data:`TEXT` with pre-tokenizer ``pre``, filled
    up to ``vocab_size`` entries with ``<unused N>`` (no merge makes them) when the text
    runs out of merges."""
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, initial_alphabet=list(alphabet), show_progress=False
    )
    tok.train_from_iterator(TEXT, trainer)
    model = json.loads(tok.to_str())["model"]
    vocab = model["vocab"]
    if len(vocab) > vocab_size:
        raise ValueError(
            f"vocab_size too small: {vocab_size} trained entries, alphabet {len(vocab)}"
        )
    for i in range(vocab_size - len(vocab)):
        vocab[f"<unused {i}>"] = len(vocab)
    return vocab, [tuple(m) for m in model["merges"]]


def sentencepiece_bpe_json(
    legacy: bool = True, vocab_size: int = 400, decoder: str = "fallback", eos: bool = False
) -> str:
    """Llama's ``tokenizer.json`` in its ``legacy`` form (normalizer Prepend "▁" + Replace
    " " -> "▁", no pre-tokenizer) or the newer one (Metaspace pre-tokenizer, prepend_scheme
    "first", split false), with ``decoder`` "fallback" (Replace, ByteFallback, Fuse, Strip:
    Llama's) or "metaspace", ``vocab_size`` ids, BOS (and EOS when ``eos``) added by the
    post-processor. Characters outside :data:`TEXT` (emoji, CJK, "ï") are byte tokens."""
    pieces, merges = _trained(
        pre_tokenizers.Metaspace(SPACE, "always", split=True),
        vocab_size - len(SP_SPECIAL) - len(BYTES),
    )
    order = sorted(pieces, key=pieces.get)
    vocab = {t: i for i, t in enumerate(dict.fromkeys([*SP_SPECIAL, *BYTES, *order]))}
    tok = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    if legacy:
        tok.normalizer = normalizers.Sequence(
            [normalizers.Prepend(SPACE), normalizers.Replace(" ", SPACE)]
        )
    else:
        tok.pre_tokenizer = pre_tokenizers.Metaspace(SPACE, "first", split=False)
    if decoder == "fallback":
        tok.decoder = decoders.Sequence(
            [
                decoders.Replace(SPACE, " "),
                decoders.ByteFallback(),
                decoders.Fuse(),
                decoders.Strip(" ", 1, 0),
            ]
        )
    else:
        tok.decoder = decoders.Metaspace(SPACE, "first", split=False)
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in SP_SPECIAL])
    single, pair = "<s>:0 $A:0", "<s>:0 $A:0 <s>:1 $B:1"
    if eos:
        single, pair = "<s>:0 $A:0 </s>:0", "<s>:0 $A:0 </s>:0 <s>:1 $B:1 </s>:1"
    tok.post_processor = processors.TemplateProcessing(
        single=single, pair=pair, special_tokens=[("<s>", 1), ("</s>", 2)]
    )
    return tok.to_str()


def _byte_level(
    pattern: str | None,
    vocab_size: int,
    added: list[str],
    *,
    nfc: bool,
    ignore_merges: bool = False,
    extra_words: tuple[str, ...] = (),
) -> Tokenizer:
    """A byte-level BPE of ``vocab_size - len(added)`` model entries (GPT-2's regex when
    ``pattern`` is None, else a Split by ``pattern`` before a ByteLevel without regex),
    ``extra_words`` appended as whole-word entries no merge makes, then ``added`` tokens."""
    if pattern is None:
        pre = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    else:
        pre = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    normalizer = normalizers.NFC() if nfc else None
    size = vocab_size - len(added) - len(extra_words)
    vocab, merges = _trained(pre, size, pre_tokenizers.ByteLevel.alphabet(), normalizer)
    for word in extra_words:
        vocab.setdefault(word, len(vocab))
    tok = Tokenizer(models.BPE(vocab, merges, fuse_unk=False, ignore_merges=ignore_merges))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    return tok


def _without_added_in_vocab(tok: Tokenizer) -> str:
    """The JSON with the added tokens only in ``added_tokens``, as Qwen2's and Llama-3's
    files have them (not in the model's vocabulary)."""
    data = json.loads(tok.to_str())
    for entry in data["added_tokens"]:
        data["model"]["vocab"].pop(entry["content"], None)
    return json.dumps(data, ensure_ascii=False)


def qwen2_json(vocab_size: int = 400) -> str:
    """Qwen2's ``tokenizer.json``: NFC, Split by Qwen2's regex then ByteLevel, ByteLevel
    post-processor and decoder, ``<|endoftext|> <|im_start|> <|im_end|>`` the last ids."""
    added = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tok = _byte_level(QWEN2_PATTERN, vocab_size, added, nfc=True)
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in added])
    return _without_added_in_vocab(tok)


def llama3_json(vocab_size: int = 400) -> str:
    """Llama-3's ``tokenizer.json``: Split by Llama-3's regex then ByteLevel, no normalizer,
    ``ignore_merges`` (" zebra" is a whole-word entry no merge makes), and
    ``<|begin_of_text|>`` put before a text by the post-processor (a Sequence of ByteLevel
    and TemplateProcessing), four special tokens the last ids."""
    added = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|eot_id|>"]
    tok = _byte_level(
        LLAMA3_PATTERN, vocab_size, added, nfc=False, ignore_merges=True, extra_words=("Ġzebra",)
    )
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in added])
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.Sequence(
        [
            processors.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True),
            processors.TemplateProcessing(
                single="<|begin_of_text|>:0 $A:0",
                pair="<|begin_of_text|>:0 $A:0 <|begin_of_text|>:1 $B:1",
                special_tokens=[("<|begin_of_text|>", bos)],
            ),
        ]
    )
    return _without_added_in_vocab(tok)


def gpt_neox_json(vocab_size: int = 400) -> str:
    """GPT-NeoX's ``tokenizer.json``: NFC, GPT-2's ByteLevel pre-tokenizer, post-processor
    and decoder, ``<|endoftext|>`` and ``<|padding|>`` special, then runs of 2-4 spaces as
    added tokens matched after the normalizer (as its multi-space tokens are)."""
    spaces = ["    ", "   ", "  "]
    added = ["<|endoftext|>", "<|padding|>", *spaces]
    tok = _byte_level(None, vocab_size, added, nfc=True)
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    tok.add_special_tokens(added[:2])
    tok.add_tokens([AddedToken(t, normalized=True, special=False) for t in spaces])
    return tok.to_str()
