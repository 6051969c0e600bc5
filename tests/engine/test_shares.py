"""Direct logit attribution and the information-flow routes (model.analysis.shares, routes) on random engines of
every layout the families use: post-LN and pre-LN encoder-decoders, decoders alone with Gemma's sandwich norms,
grouped keys and values, and GPT-NeoX's parallel residual. The shares add up to the model's own logit; a
knocked-out head has none; a head's writes are its share at the piece explained; and each layer's route shares
are the norms of an exact decomposition of its output, rebuilt here from the recorded pass with every norm's
divisor frozen (written out in this file, not read from model.analysis.stream)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from model import InputError, Interventions
from model.analysis import forced
from model.analysis.routes import MOST_POSITIONS, build, layer_flow, routes
from model.analysis.shares import BIAS, EMBEDDINGS, logit_shares, shares_at
from model.analysis.stream import FrozenNorm, head_write_norms
from model.engine import stages
from model.engine.config import ModelConfig
from model.engine.hooks import recording
from model.engine.transformer import Transformer, layers_of

BASE = dict(vocab_size=40, d_model=16, n_heads=4, d_ff=24, n_decoder_layers=2, dropout=0.0, max_len=64)
LAYOUTS = {
    "post-LN encoder-decoder": dict(n_encoder_layers=2, norm_first=False, logits_bias=True),
    "pre-LN encoder-decoder, rescaled": dict(n_encoder_layers=2, norm_first=True, norm="rms", rescale_output=True),
    "decoder, sandwich norms, grouped": dict(
        n_encoder_layers=0, norm_first=True, norm="rms_plus_one", sandwich_norm=True, n_kv_heads=2
    ),
    "decoder, parallel residual": dict(n_encoder_layers=0, norm_first=True, parallel_residual=True),
    "post-LN decoder, embedding norm": dict(n_encoder_layers=0, norm_first=False, embed_norm=True),
}
SRC, TGT = [5, 9, 3, 12, 7, 2], [1, 8, 4, 11, 6, 13, 10]


def _engine(layout: str) -> SimpleNamespace:
    """A random model of the layout, every parameter nudged (norm gains and shifts too), as the analyses read a
    bundle: its model and config."""
    cfg = ModelConfig(**BASE, **LAYOUTS[layout])
    torch.manual_seed(3)
    model = Transformer(cfg).eval()
    with torch.no_grad():
        for param in model.parameters():
            param.add_(0.3 * torch.randn_like(param))
    return SimpleNamespace(model=model, config=cfg)


def _recorded(engine: SimpleNamespace, iv: Interventions = Interventions()) -> dict[str, torch.Tensor]:
    src = torch.tensor([SRC]) if engine.config.n_encoder_layers else None
    with torch.inference_mode(), recording() as recorder:
        engine.model(src, torch.tensor([TGT]), iv)
    return recorder.tensors


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_shares_add_up_to_the_models_logit(layout):
    engine = _engine(layout)
    tensors = _recorded(engine)
    logits = tensors[stages.LOGITS][0]
    for row in range(len(TGT)):
        piece = int(logits[row].argmax()) if row % 2 else (row * 7) % BASE["vocab_size"]
        found = shares_at(engine, tensors, row, piece)
        assert found.logit == pytest.approx(float(logits[row, piece]))
        assert found.shares.sum() == pytest.approx(found.logit, rel=1e-5, abs=1e-5)
        heads = [label for label in found.shares.index if isinstance(label, tuple) and label[1] != "ffn"]
        kinds = 2 if engine.config.cross_attention else 1
        assert len(heads) == BASE["n_decoder_layers"] * kinds * BASE["n_heads"]
        assert {EMBEDDINGS, BIAS} <= set(found.shares.index)


@pytest.mark.parametrize("layout", ["post-LN encoder-decoder", "decoder, sandwich norms, grouped"])
def test_a_knocked_out_head_has_no_share(layout):
    engine = _engine(layout)
    off = ("decoder", "self", 1, 2)
    iv = Interventions(ablate=frozenset({off}))
    tensors = _recorded(engine, iv)
    found = shares_at(engine, tensors, 3, 5)
    assert found.shares[off] == 0.0
    assert found.shares.sum() == pytest.approx(float(tensors[stages.LOGITS][0, 3, 5]), rel=1e-5, abs=1e-5)
    whole = shares_at(engine, _recorded(engine), 3, 5)
    assert whole.shares[off] != 0.0 and whole.logit != pytest.approx(found.logit)


@pytest.mark.parametrize("layout", ["post-LN encoder-decoder", "decoder, sandwich norms, grouped"])
def test_what_a_head_writes_at_the_piece_explained_is_its_share(layout):
    engine = _engine(layout)
    engine.tokenizer = SimpleNamespace(pieces=lambda ids: [f"p{i}" for i in ids])
    tensors = _recorded(engine)
    found = shares_at(engine, tensors, 2, 7)
    for head in range(BASE["n_heads"]):
        label = ("decoder", "self", 0, head)
        half = BASE["vocab_size"] // 2
        writes = found.writes(engine, label, top=half)
        raised, lowered = list(writes["change"][:half]), list(writes["change"][half:])
        assert raised == sorted(raised, reverse=True) and lowered == sorted(lowered)  # strongest first, each
        assert min(raised) >= max(lowered) and len(set(writes["id"])) == BASE["vocab_size"]
        change = float(writes.set_index("id").loc[7, "change"])
        assert change == pytest.approx(found.shares[label], rel=1e-4, abs=1e-5)


def _frozen(norm: torch.nn.Module, seen: torch.Tensor):
    """A norm as a linear map with the divisor it found in `seen` (d), and its shift."""
    weight = norm.weight.detach().double()
    eps = norm.eps if norm.eps is not None else torch.finfo(torch.float32).eps
    seen = seen.double()
    if isinstance(norm, torch.nn.LayerNorm):
        divisor = torch.sqrt(seen.var(unbiased=False) + eps)
        return (lambda v: (v - v.mean(-1, keepdim=True)) / divisor * weight), norm.bias.detach().double()
    gain = 1.0 + weight if type(norm).__name__ == "OffsetRMSNorm" else weight
    divisor = torch.sqrt(seen.pow(2).mean() + eps)
    return (lambda v: v / divisor * gain), torch.zeros_like(weight)


def _layer_parts(engine: SimpleNamespace, tensors: dict, layer: int, i: int) -> tuple[dict, torch.Tensor]:
    """Layer `layer`'s output at position i as parts: {name: (parts, d)} carried to the output, and what no part
    owns; written for the two orders a layer has (post-LN, pre-LN with or without sandwich norms)."""
    cfg, module = engine.config, engine.model.decoder.layers[layer]

    def at(name: str) -> torch.Tensor:
        return tensors[name][0].double()

    def heads(kind: str) -> tuple[torch.Tensor, torch.Tensor]:
        block = getattr(module, f"{kind}_attn")
        w_o = block.w_o.weight.detach().double().T.reshape(cfg.n_heads, -1, cfg.d_model)
        values = at(stages.attention("decoder", kind, layer, "v"))
        pattern = at(stages.attention("decoder", kind, layer, "pattern"))[:, i]
        weighted = pattern[..., None] * torch.einsum("hsk,hkd->hsd", values, w_o)  # (h, keys, d)
        bias = block.w_o.bias.detach().double() if block.w_o.bias is not None else torch.zeros(cfg.d_model)
        return weighted.reshape(-1, cfg.d_model), bias[None]

    before = stages.embedding("norm" if cfg.embed_norm else "sum", "target") if layer == 0 else None
    x = at(before or stages.layer_output("decoder", layer - 1, cfg.norm_first))[i]
    parts, rest = {"residual": x[None]}, torch.zeros(1, cfg.d_model, dtype=torch.float64)
    kinds = ["self", "cross"] if cfg.cross_attention else ["self"]
    for kind in [*kinds, "ffn"]:
        written, bias = heads(kind) if kind != "ffn" else (at(stages.ffn("decoder", layer, "out"))[i][None], rest * 0)
        if cfg.sandwich_norm and kind != "cross":
            seen = at(stages.attention("decoder", "self", layer, "out"))[i] if kind == "self" else written[0]
            post, _ = _frozen(getattr(module, f"post_norm_{kind}"), seen)
            written, bias = post(written), post(bias)
        parts[kind], rest = written, rest + bias
        if not cfg.norm_first:
            seen = at(stages.sublayer("decoder", layer, f"resid_{kind}"))[i]
            norm, shift = _frozen(getattr(module, f"norm_{kind}"), seen)
            parts = {name: norm(vectors) for name, vectors in parts.items()}
            rest = norm(rest) + shift
    return parts, rest[0]


@pytest.mark.parametrize("layout", ["post-LN encoder-decoder", "decoder, sandwich norms, grouped"])
def test_route_shares_are_the_norms_of_each_layers_output_as_a_sum(layout):
    engine = _engine(layout)
    tensors = _recorded(engine)
    for layer in range(BASE["n_decoder_layers"]):
        flow = layer_flow(engine, tensors, layer, Interventions())
        output = tensors[stages.layer_output("decoder", layer, engine.config.norm_first)][0].double()
        for i in range(len(TGT)):
            parts, rest = _layer_parts(engine, tensors, layer, i)
            whole = sum(vectors.sum(dim=0) for vectors in parts.values()) + rest
            torch.testing.assert_close(whole, output[i], rtol=1e-6, atol=1e-6)  # nothing left out
            norms = {name: vectors.norm(dim=-1) for name, vectors in parts.items()}
            total = sum(n.sum() for n in norms.values()) + rest.norm()
            assert float(flow.residual[i]) == pytest.approx(float(norms["residual"][0] / total), rel=1e-6)
            assert float(flow.ffn[i]) == pytest.approx(float(norms["ffn"][0] / total), rel=1e-6)
            self_shares = torch.from_numpy(flow.attention["self"][:, i].reshape(-1))
            torch.testing.assert_close(self_shares, norms["self"] / total, rtol=1e-5, atol=1e-8)


def _reached_from_the_top(found) -> bool:
    """Every edge ends where the routes arrive: at the predicting position on the last layer, or where an edge of
    the layer above starts."""
    starts = {(found.layers, found.target)} | {
        (edge.layer, edge.source) for edge in found.edges if edge.kind in ("self", "residual")
    }
    return all((edge.layer + 1, edge.target) in starts for edge in found.edges)


def test_the_routes_are_bounded_keep_the_sink_and_start_at_the_predicted_piece():
    engine = _engine("decoder, sandwich norms, grouped")
    long = [(7 * i) % 37 + 2 for i in range(40)]
    with torch.inference_mode(), recording() as recorder:
        engine.model(None, torch.tensor([long]), Interventions())
    flows = [layer_flow(engine, recorder.tensors, layer, Interventions()) for layer in range(2)]
    everything = build(flows, 39, threshold=1e-6)
    assert everything.hidden > 0 and len(everything.positions) <= MOST_POSITIONS
    assert {0, 39} <= set(everything.positions) and everything.target == 39
    drawn = set(everything.positions)
    assert all(edge.source in drawn and edge.target in drawn for edge in everything.edges)
    assert _reached_from_the_top(everything)
    strong = build(flows, 39, threshold=0.05)
    assert all(edge.weight >= 0.05 for edge in strong.edges) and _reached_from_the_top(strong)
    assert len(strong.edges) < len(everything.edges)
    for edge in strong.edges:
        if edge.kind == "self":  # the heads named add up to the edge (when no more than EDGE_HEADS have a share)
            assert edge.heads == tuple(sorted(edge.heads, key=lambda h: -h[1]))
            assert sum(share for _, share in edge.heads) == pytest.approx(edge.weight, rel=1e-6) or len(edge.heads) == 5


def test_the_routes_of_a_translation(tiny_bundle):
    sentence = "The cat sleeps."
    out = list(tiny_bundle.translate(sentence, trace=False).output_ids)
    found = routes(tiny_bundle, sentence, out, 1, threshold=0.02)
    assert found.target == 1 and found.layers == tiny_bundle.config.n_decoder_layers
    cross = [edge for edge in found.edges if edge.kind == "cross"]
    assert cross and all(edge.source in found.sources for edge in cross)
    source_length = len(forced.inputs(tiny_bundle, sentence, out)[0][0])
    assert all(0 <= source < source_length for source in found.sources)
    off = Interventions(ablate=frozenset(("decoder", "cross", layer, head) for layer in range(2) for head in range(4)))
    assert not any(edge.kind == "cross" for edge in routes(tiny_bundle, sentence, out, 1, off, threshold=0.02).edges)
    for bad in (0.0, 1.5):
        with pytest.raises(InputError):
            routes(tiny_bundle, sentence, out, 1, threshold=bad)
    with pytest.raises(InputError):
        logit_shares(tiny_bundle, sentence, out, len(out))


def test_a_heads_write_is_as_long_through_its_factor_as_written_out_in_double_precision():
    engine = _engine("decoder, sandwich norms, grouped")
    block = layers_of(engine.model.decoder)[0].self_attn
    heads, width = block.n_heads, BASE["d_model"]
    context = torch.randn(heads, 7, width // heads)
    centred = FrozenNorm(torch.rand(width, dtype=torch.float64) + 0.5, None, True, torch.ones(7, dtype=torch.float64))
    scaled = FrozenNorm(torch.rand(width, dtype=torch.float64) + 0.5, None, False, torch.ones(7, dtype=torch.float64))

    def written_out(norms: tuple[FrozenNorm, ...]) -> torch.Tensor:
        weight = block.w_o.weight.detach().double()  # (d_model, heads * d_head)
        writes = torch.einsum("hpk,dhk->hpd", context.double(), weight.reshape(width, heads, -1))
        for norm in norms:
            writes = writes - writes.mean(dim=-1, keepdim=True) if norm.centred else writes
            writes = writes * norm.gain
        return writes.norm(dim=-1)

    for norms in ((), (centred,), (centred, scaled)):
        torch.testing.assert_close(head_write_norms(context, block, norms), written_out(norms), rtol=1e-12, atol=0)
    with torch.no_grad():
        block.w_o.weight.mul_(2.0)  # a weight changed in place is factored again
    torch.testing.assert_close(head_write_norms(context, block, ()), written_out(()), rtol=1e-12, atol=0)
