"""A GGUF file's tokenizer (`tokenizer.ggml.*`) as a tokenizer.json and tokenizer_config.json, for the
`tokenizers` library: byte-level BPE with the file's merges (`gpt2`: SmolLM2, Qwen, Pythia), or
SentencePiece-style BPE with byte fallback whose merges follow from the vocabulary (`llama`: Gemma,
Llama 2). Control tokens become special tokens, user-defined ones added tokens, as llama.cpp reads them."""

from __future__ import annotations

from collections.abc import Callable

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from i18n import later

from .reader import GGUFFile, Refuse

CONTROL, USER_DEFINED = 3, 4  # tokenizer.ggml.token_type values (llama.cpp's numbering)
SPACE = "\u2581"  # SentencePiece's mark for a space
# How each `tokenizer.ggml.pre` split text before its merges were learned (the defaults: GPT-2's split)
_WORDS = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+"
_REST = r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_LLAMA3_SPLIT = _WORDS + r"|\p{N}{1,3}" + _REST  # numbers in threes
_QWEN2_SPLIT = _WORDS + r"|\p{N}" + _REST  # each digit apart
SPLITS = {"llama3": _LLAMA3_SPLIT, "llama-bpe": _LLAMA3_SPLIT, "smaug-bpe": _LLAMA3_SPLIT, "qwen2": _QWEN2_SPLIT}


def _list(gguf: GGUFFile, key: str, refuse: Refuse, required: bool = True) -> list:
    value = gguf.field(key)
    if value is None and not required:
        return []
    if not isinstance(value, list) or not value:
        raise refuse(later("its tokenizer has no {key}", key=key))
    return value


def _special_id(gguf: GGUFFile, key: str, size: int) -> int | None:
    value = gguf.field(f"tokenizer.ggml.{key}")
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < size else None


def _merges(gguf: GGUFFile, refuse: Refuse) -> list[tuple[str, str]]:
    pairs = []
    for merge in _list(gguf, "tokenizer.ggml.merges", refuse):
        left, space, right = str(merge).partition(" ")
        if not space:
            raise refuse(later("its tokenizer's merge {merge} is not two tokens", merge=repr(merge)))
        pairs.append((left, right))
    return pairs


def _byte_level(gguf: GGUFFile, tokens: list[str], refuse: Refuse) -> Tokenizer:
    merges = _merges(gguf, refuse)
    vocab = {token: i for i, token in enumerate(tokens)}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
    pre = gguf.field("tokenizer.ggml.pre", "default")
    if pre == "smollm":  # SmolLM's own: each digit apart, then GPT-2's split
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
        )
    elif isinstance(pre, str) and pre in SPLITS:
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(SPLITS[pre]), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def _sentencepiece(gguf: GGUFFile, tokens: list[str], refuse: Refuse, arch: str) -> Tokenizer:
    vocab = {token: i for i, token in enumerate(tokens)}
    merges: list[tuple[str, str]]
    if gguf.field("tokenizer.ggml.merges") is not None:
        merges = _merges(gguf, refuse)
    else:
        scores = _list(gguf, "tokenizer.ggml.scores", refuse, required=False)
        # a merge's rank: its result's score, best first; Gemma's scores do not follow its merges, its order does
        by_order = arch.startswith("gemma") or not scores
        rank: Callable[[int], float] = (lambda i: i) if by_order else (lambda i: -scores[i])
        merges = _implied_merges(tokens, vocab, rank)
    unk = _special_id(gguf, "unknown_token_id", len(tokens))
    bpe = models.BPE(
        vocab=vocab,
        merges=merges,
        unk_token=tokens[unk] if unk is not None else None,
        fuse_unk=True,
        byte_fallback=True,
    )
    tokenizer = Tokenizer(bpe)
    replace = normalizers.Replace(" ", SPACE)
    if gguf.field("tokenizer.ggml.add_space_prefix", not arch.startswith("gemma")):
        tokenizer.normalizer = normalizers.Sequence([normalizers.Prepend(SPACE), replace])
    else:
        tokenizer.normalizer = replace
    tokenizer.decoder = decoders.Sequence([decoders.Replace(SPACE, " "), decoders.ByteFallback(), decoders.Fuse()])
    return tokenizer


def _implied_merges(tokens: list[str], vocab: dict[str, int], rank: Callable[[int], float]) -> list[tuple[str, str]]:
    """Every split of a token into two tokens of the vocabulary, ordered by the token's rank."""
    found = []
    for index, token in enumerate(tokens):
        if len(token) < 2:
            continue
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in vocab and right in vocab:
                found.append((rank(index), vocab[left], vocab[right], left, right))
    found.sort()
    return [(left, right) for *_, left, right in found]


def build(gguf: GGUFFile, arch: str) -> tuple[Tokenizer, dict, dict[str, int]]:
    """The tokenizer, its tokenizer_config.json (special tokens, BOS, the chat template) and the ids of
    its bos, eos, unk and pad tokens (those the file names)."""
    refuse = gguf.refuse
    kind = gguf.field("tokenizer.ggml.model")
    tokens = [str(t) for t in _list(gguf, "tokenizer.ggml.tokens", refuse)]
    if kind == "gpt2":
        tokenizer = _byte_level(gguf, tokens, refuse)
    elif kind == "llama":
        # Gemma writes its all-space tokens with real spaces; the text they match is written with ▁ here
        tokens = [SPACE * len(t) if t and not t.strip(" ") else t for t in tokens]
        tokenizer = _sentencepiece(gguf, tokens, refuse, arch)
    else:
        raise refuse(later("its tokenizer type {kind} is not supported (supported: gpt2, llama)", kind=repr(kind)))
    types = _list(gguf, "tokenizer.ggml.token_type", refuse, required=False)
    tokenizer.add_special_tokens(
        [AddedToken(t, special=True, normalized=False) for t, k in zip(tokens, types, strict=False) if k == CONTROL]
    )
    tokenizer.add_tokens(  # a token of ▁s is matched in the text once its spaces are written as ▁
        [
            AddedToken(t, special=False, normalized=SPACE in t)
            for t, k in zip(tokens, types, strict=False)
            if k == USER_DEFINED
        ]
    )
    names = {"bos": "bos_token_id", "eos": "eos_token_id", "unk": "unknown_token_id", "pad": "padding_token_id"}
    ids = {name: _special_id(gguf, key, len(tokens)) for name, key in names.items()}
    add_bos = bool(gguf.field("tokenizer.ggml.add_bos_token", kind == "llama"))
    if add_bos and ids["bos"] is not None:
        bos = tokens[ids["bos"]]
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, ids["bos"])]
        )
    elif kind == "gpt2":
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    config: dict = {f"{name}_token": tokens[i] for name, i in ids.items() if i is not None}
    config["add_bos_token"] = add_bos
    template = gguf.field("tokenizer.chat_template")
    if isinstance(template, str) and template.strip():
        config["chat_template"] = template
    return tokenizer, config, {name: i for name, i in ids.items() if i is not None}
