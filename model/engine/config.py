"""The model's shape: one frozen dataclass, saved with every checkpoint."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu")
# "sinusoidal": the paper's table, sin and cos interleaved; "sinusoidal_halves": Marian's, the same
# frequencies with every sin in the first half of the dimensions and every cos in the second;
# "relative": nothing added to the embeddings, a learned bias per head on every attention score of
# the self-attention blocks, by bucketed distance from query to key (T5); "rotary": nothing added to
# the embeddings, every query and key turned by an angle that grows with its position (Llama, Qwen,
# Gemma, GPT-NeoX), in the rotate-half layout
POSITIONALS = ("sinusoidal", "sinusoidal_halves", "learned", "relative", "rotary")
# LayerNorm; RMSNorm, which neither centres nor adds a bias (T5, Llama, Qwen); or Gemma's RMSNorm, whose
# weight starts at 0 and scales by (1 + w), computed in float32
NORMS = ("layer", "rms", "rms_plus_one")


@dataclass(frozen=True)
class ModelConfig:
    """Sizes and switches of a Transformer, checked at construction: an encoder and a decoder whose
    layers read it (cross-attention), an encoder alone (n_decoder_layers 0, BERT) or a decoder alone
    (n_encoder_layers 0: its layers have no cross-attention, as in GPT-2)."""

    vocab_size: int = 1000  # shared SentencePiece vocabulary of source and target
    d_model: int = 256  # width of every residual-stream vector
    n_heads: int = 4  # attention heads per block
    d_head: int = 0  # width of one head's queries, keys and values; 0: d_model // n_heads
    d_ff: int = 1024  # hidden width of the position-wise feed-forward network
    n_encoder_layers: int = 3  # 0 for a decoder-only model
    n_decoder_layers: int = 3  # 0 for an encoder-only model (BERT)
    dropout: float = 0.1  # on sublayer outputs, attention weights and the FFN hidden layer
    max_len: int = 128  # longest sequence, in pieces, that either side accepts
    norm_first: bool = False  # False: Post-LN as in the paper; True: Pre-LN (+ a final LayerNorm)
    activation: str = "relu"  # FFN non-linearity: "relu" (paper) or "gelu"
    tie_embeddings: bool = True  # source and target embeddings and the output projection share one matrix
    positional: str = "sinusoidal"  # one of POSITIONALS
    scale_embeddings: bool = True  # multiply token embeddings by sqrt(d_model) (the paper, Marian; not BERT)
    embed_norm: bool = False  # LayerNorm over the embedding sum (BERT)
    token_types: int = 0  # token-type (segment) embeddings added to the sum (BERT: 2); 0 = none
    layer_norm_eps: float = 1e-5  # BERT uses 1e-12
    logits_bias: bool = False  # a fixed bias added to the output logits (Marian's final_logits_bias)
    pad_id: int = 0  # the padding piece: its embedding row, and where padding starts
    norm: str = "layer"  # one of NORMS
    linear_bias: bool = True  # projections and feed-forward layers add a bias (T5's add none)
    gated_ffn: bool = False  # FFN(x) = (act(x W1) * x W3) W2 (T5 v1.1 and flan-t5's gated GELU)
    scale_scores: bool = True  # divide QK^T by sqrt(d_k); T5 does not (it folds it into its initialisation)
    # with tie_embeddings, the output projection is the embedding matrix (False: one of its own, flan-t5)
    tie_output: bool = True
    # multiply the decoder's output by d_model^-0.5 before the output projection (T5 with a tied one)
    rescale_output: bool = False
    relative_buckets: int = 32  # positional "relative": buckets of query-to-key distance
    relative_max_distance: int = 128  # distances from here on share the last bucket
    # key and value heads, each shared by n_heads / n_kv_heads query heads (grouped-query attention; 1:
    # multi-query); 0: n_heads. Patterns, knock-outs and roles stay per query head
    n_kv_heads: int = 0
    rotary_fraction: float = 1.0  # positional "rotary": the share of each head's dims turned (GPT-NeoX: 0.25)
    rotary_base: float = 10000.0  # positional "rotary": the base θ of the angles' frequencies
    rotary_base_local: float = 0.0  # the base of the layers with a sliding window (Gemma 3); 0: rotary_base
    # per decoder layer, how many positions back a query sees (a sliding window, Gemma 3); 0: every
    # position; empty: every layer sees every position
    windows: tuple[int, ...] = ()
    qk_norm: bool = False  # an RMS norm over each head's queries and keys before the rotation (Qwen3, Gemma 3)
    qkv_bias: bool = False  # the query, key and value projections add a bias even without linear_bias (Qwen2)
    # a norm on each sublayer's output too, before the residual sum: four norms per layer (Gemma 3)
    sandwich_norm: bool = False
    # scores divided by sqrt(this) instead of sqrt(d_k) (Gemma 3's query_pre_attn_scalar); 0: d_k
    score_scale_width: float = 0.0
    # x + attn(norm_self(x)) + ffn(norm_ffn(x)): the feed-forward reads the layer's input, not the
    # attention's sum (GPT-NeoX's use_parallel_residual; pre-norm only)
    parallel_residual: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.windows, list):  # read from JSON, which has no tuples
            object.__setattr__(self, "windows", tuple(self.windows))
        problems = self._count_problems()
        problems += self._shape_problems() if not problems else []
        problems += self._window_problems()
        problems += self._setting_problems()
        problems += self._switch_problems()
        if problems:
            raise ValueError("Invalid model config: " + "; ".join(problems))

    def _count_problems(self) -> list[str]:
        """The sizes that are not whole numbers: those that must be positive and those that may be 0."""
        problems = []
        for name in (
            "vocab_size",
            "d_model",
            "n_heads",
            "d_ff",
            "max_len",
            "relative_buckets",
            "relative_max_distance",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                problems.append(f"{name} must be a positive integer, got {value!r}")
        for name in ("n_encoder_layers", "n_decoder_layers", "token_types", "pad_id", "d_head", "n_kv_heads"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                problems.append(f"{name} must be a non-negative integer, got {value!r}")
        return problems

    def _shape_problems(self) -> list[str]:
        """The first way the sizes do not fit one another, then the rotary settings' problems (read once
        every size is a whole number)."""
        if not (self.n_encoder_layers or self.n_decoder_layers):
            return ["a model needs encoder layers, decoder layers or both"]
        if self.pad_id >= self.vocab_size:
            return [f"pad_id ({self.pad_id}) must be below vocab_size ({self.vocab_size})"]
        if not self.d_head and self.d_model % self.n_heads:
            return [f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})"]
        if self.positional.startswith("sinusoidal") and self.d_model % 2:
            return [f"sinusoidal positions need an even d_model, got {self.d_model}"]
        if self.n_kv_heads and self.n_heads % self.n_kv_heads:
            return [f"n_heads ({self.n_heads}) must be a multiple of n_kv_heads ({self.n_kv_heads})"]
        return self._rotary_problems()

    def _window_problems(self) -> list[str]:
        """What is wrong with the sliding windows: not counts, or not one per layer of a decoder alone."""
        windows = self.windows
        if not isinstance(windows, tuple) or not all(isinstance(w, int) and w >= 0 for w in windows):
            return [f"windows must be non-negative integers, one per decoder layer, got {windows!r}"]
        if windows and (len(windows) != self.n_decoder_layers or self.n_encoder_layers):
            return [f"windows are one per layer of a decoder alone: {len(windows)} for {self.n_decoder_layers}"]
        return []

    def _setting_problems(self) -> list[str]:
        """The residual layout, the numbers and the named choices that are out of range."""
        problems = []
        if self.parallel_residual and not self.norm_first:
            problems.append("parallel_residual needs norm_first (the norms come before the sublayers)")
        if self.parallel_residual and self.cross_attention:
            problems.append("parallel_residual is for a decoder alone or an encoder alone, not cross-attention")
        if not (isinstance(self.score_scale_width, (int, float)) and self.score_scale_width >= 0):
            problems.append(f"score_scale_width must be a non-negative number, got {self.score_scale_width!r}")
        if not (isinstance(self.dropout, (int, float)) and 0.0 <= self.dropout < 1.0):
            problems.append(f"dropout must be in [0, 1), got {self.dropout!r}")
        if self.activation not in ACTIVATIONS:
            problems.append(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        if self.positional not in POSITIONALS:
            problems.append(f"positional must be one of {POSITIONALS}, got {self.positional!r}")
        if self.norm not in NORMS:
            problems.append(f"norm must be one of {NORMS}, got {self.norm!r}")
        if not (isinstance(self.layer_norm_eps, float) and 0.0 < self.layer_norm_eps < 1.0):
            problems.append(f"layer_norm_eps must be a small positive number, got {self.layer_norm_eps!r}")
        return problems

    def _switch_problems(self) -> list[str]:
        """The switches that are not true or false."""
        switches = (
            "norm_first",
            "tie_embeddings",
            "scale_embeddings",
            "embed_norm",
            "logits_bias",
            "linear_bias",
            "gated_ffn",
            "scale_scores",
            "tie_output",
            "rescale_output",
            "qk_norm",
            "qkv_bias",
            "sandwich_norm",
            "parallel_residual",
        )
        return [
            f"{name} must be true or false, got {getattr(self, name)!r}"
            for name in switches
            if not isinstance(getattr(self, name), bool)
        ]

    def _rotary_problems(self) -> list[str]:
        """What is wrong with the rotary settings (nothing when the positions are not rotary)."""
        if self.positional != "rotary":
            return []
        problems = []
        fraction, bases = self.rotary_fraction, (self.rotary_base, self.rotary_base_local)
        if not (isinstance(fraction, (int, float)) and 0.0 < fraction <= 1.0):
            problems.append(f"rotary_fraction must be in (0, 1], got {fraction!r}")
        elif int(self.d_k * fraction) % 2 or int(self.d_k * fraction) < 2:
            problems.append(f"rotary_fraction {fraction} of a head of {self.d_k} must turn an even number of dims")
        if not all(isinstance(b, (int, float)) and b >= 0 for b in bases) or self.rotary_base <= 1:
            problems.append(f"rotary_base must be above 1 (and rotary_base_local 0 or above 1), got {bases}")
        elif 0 < self.rotary_base_local <= 1:
            problems.append(f"rotary_base_local must be 0 or above 1, got {self.rotary_base_local}")
        return problems

    @property
    def kv_heads(self) -> int:
        """Key and value heads per attention block (n_heads unless grouped)."""
        return self.n_kv_heads or self.n_heads

    @property
    def rotary_dims(self) -> int:
        """How many of each head's dims the rotation turns (0 without rotary positions)."""
        return int(self.d_k * self.rotary_fraction) if self.positional == "rotary" else 0

    def window(self, layer: int) -> int:
        """How many positions back decoder layer `layer` sees; 0: all of them."""
        return self.windows[layer] if self.windows else 0

    def rotary_base_of(self, layer: int) -> float:
        """The base θ of decoder layer `layer`'s rotation: the local one for a windowed layer."""
        return self.rotary_base_local if self.window(layer) and self.rotary_base_local else self.rotary_base

    @property
    def cross_attention(self) -> bool:
        """True when the decoder's layers read an encoder's output."""
        return bool(self.n_encoder_layers and self.n_decoder_layers)

    @property
    def kind(self) -> str:
        """ "encoder-decoder", "encoder" (no decoder) or "decoder" (no encoder): for display."""
        return "encoder-decoder" if self.cross_attention else ("encoder" if self.n_encoder_layers else "decoder")

    @property
    def d_k(self) -> int:
        """Width of one head's queries, keys and values."""
        return self.d_head or self.d_model // self.n_heads

    @property
    def d_attention(self) -> int:
        """Width of the heads side by side: the concat that the output projection reads."""
        return self.n_heads * self.d_k

    @property
    def output_tied(self) -> bool:
        """True when the output projection is the (target) embedding matrix."""
        return self.tie_embeddings and self.tie_output

    def to_dict(self) -> dict:
        """Plain JSON-ready dict (lists, as JSON reads them back); ModelConfig(**d) rebuilds it."""
        return {**asdict(self), "windows": list(self.windows)}

    @classmethod
    def from_dict(cls, data: dict) -> ModelConfig:
        """Rebuild from JSON, refusing unknown keys with their names."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"Invalid model config: unknown keys {unknown}")
        return cls(**data)
