"""The sequence-shortening modules of issue 27 (src/mtcue/models/plugin/shortening/shorteners.py): pooling,
Latent Grouping and Latent Selecting, against hand-made tensors and independent computations."""
import math

import pytest
import torch
import torch.nn.functional as F
from entmax import sparsemax

from mtcue.models.plugin.shortening.shorteners import (
    CONTEXT_GRADIENT,
    SHORTENERS,
    build_shortener,
    detach_beyond,
    shorten_context,
)

DIM, HEADS = 8, 2


def right_mask(lengths, total):
    return torch.arange(total)[None, :] >= torch.tensor(lengths)[:, None]


def states(total, bsz, dim=DIM, seed=0):
    return torch.randn(total, bsz, dim, generator=torch.Generator().manual_seed(seed))


def with_garbage(h, mask, value=1e4):
    """Padded states set to a large value: any leak into the result shows."""
    return h.masked_fill(mask.t()[..., None], value)


def reference_sparsemax(z):
    """Martins & Astudillo (2016), Algorithm 1, on a 1-d list: sort, find the support size, threshold."""
    zs = sorted(z, reverse=True)
    support = max(k for k in range(1, len(zs) + 1) if 1 + k * zs[k - 1] > sum(zs[:k]))
    tau = (sum(zs[:support]) - 1) / support
    return [max(v - tau, 0.0) for v in z]


def test_registry_and_factory():
    assert set(SHORTENERS) == {"pool_mean", "pool_max", "pool_linear", "grouping", "selecting"}
    assert set(CONTEXT_GRADIENT) == set(SHORTENERS)
    for name, cls in SHORTENERS.items():
        assert type(build_shortener(name, DIM, HEADS, 0.0, 3, hidden=4)) is cls
    with pytest.raises(ValueError, match="unknown shortener 'pool_min'"):
        build_shortener("pool_min", DIM, HEADS, 0.0, 2)


def test_entmax_sparsemax_hand_value():
    # z = (1, 0.5, -1): support {1, 0.5}, tau = (1.5 - 1) / 2 = 0.25 -> (0.75, 0.25, 0).
    assert sparsemax(torch.tensor([1.0, 0.5, -1.0]), dim=-1).tolist() == [0.75, 0.25, 0.0]
    assert reference_sparsemax([1.0, 0.5, -1.0]) == [0.75, 0.25, 0.0]


def test_grouping_rows_sum_to_one_and_are_sparse():
    torch.manual_seed(0)
    module = build_shortener("grouping", DIM, HEADS, 0.0, 5, hidden=16)
    with torch.no_grad():
        module.categorise_net[-1].weight.mul_(20)  # spread logits, as a trained network's
    mask = right_mask([6, 4, 1], 6)
    h = with_garbage(states(6, 3), mask)
    c = module.categorise(h, mask)
    real = ~mask.t()
    assert torch.allclose(c[real].sum(-1), torch.ones(int(real.sum())), atol=1e-5)
    assert (c[~real] == 0).all()
    assert (c[real] == 0).float().mean() > 0.3  # exact zeros: sparse, unlike softmax
    logits = module.categorise_net(h)
    for t, b in real.nonzero().tolist():
        assert c[t, b].tolist() == pytest.approx(reference_sparsemax(logits[t, b].tolist()), abs=1e-5)


def test_selecting_normalised_over_real_tokens_only():
    torch.manual_seed(1)
    module = build_shortener("selecting", DIM, HEADS, 0.0, 4, hidden=16)
    mask = right_mask([5, 2, 3], 5)
    h = states(5, 3)
    # Padded states equal to the most selected token's, scaled: unmasked, they would win every group.
    h = torch.where(mask.t()[..., None], 50 * h[:1], h)
    c = module.categorise(h, mask)
    assert torch.allclose(c.sum(0), torch.ones(3, 4), atol=1e-5)  # each group's column over tokens
    assert (c.masked_select(mask.t()[..., None]) == 0).all()
    logits = module.categorise_net(h)
    for b, length in enumerate([5, 2, 3]):
        for k in range(4):
            expected = reference_sparsemax(logits[:length, b, k].tolist())
            assert c[:length, b, k].tolist() == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("window, lengths, expected", [
    # T = 5, K = 2: windows (0,1) (2,3) (4,-); a window is padding only when all of it is.
    (2, [5, 3, 1, 4, 2], [[0, 0, 0], [0, 0, 1], [0, 1, 1], [0, 0, 1], [0, 1, 1]]),
    # T = 7, K = 3: windows (0-2) (3-5) (6,-,-).
    (3, [7, 4, 3, 1], [[0, 0, 0], [0, 0, 1], [0, 1, 1], [0, 1, 1]]),
])
@pytest.mark.parametrize("name", ["pool_mean", "pool_max", "pool_linear"])
def test_pooled_position_is_padding_only_when_its_whole_window_is(name, window, lengths, expected):
    total = max(lengths)
    mask = right_mask(lengths, total)
    module = build_shortener(name, DIM, HEADS, 0.0, window)
    g, g_mask = module(states(total, len(lengths)), mask)
    assert g_mask.int().tolist() == expected
    assert g.shape == (math.ceil(total / window), len(lengths), DIM)
    assert torch.isfinite(g).all()


def test_mean_and_max_pooling_values_by_hand():
    # One channel: sentence a = (1, 4, -3), b = (-2, -5), padding garbage 100; K = 2.
    h = torch.tensor([[1.0, -2.0], [4.0, -5.0], [-3.0, 100.0]])[..., None]
    mask = torch.tensor([[False, False, False], [False, False, True]])
    mean, mean_mask = build_shortener("pool_mean", 1, 1, 0.0, 2).shorten(h, mask)
    big, _ = build_shortener("pool_max", 1, 1, 0.0, 2).shorten(h, mask)
    assert mean_mask.tolist() == [[False, False], [False, True]]
    # a: (1+4)/2, -3 alone (mean over its real tokens, not (-3+0)/2); b: (-2-5)/2, then padding (0).
    assert mean[..., 0].tolist() == [[2.5, -3.5], [-3.0, 0.0]]
    # a: max(1,4), -3 (not the zero that fills the window); b: max(-2,-5) = -2, not 100 or 0.
    assert big[..., 0].tolist() == [[4.0, -2.0], [-3.0, 0.0]]


def test_linear_pooling_is_a_linear_map_of_the_concatenated_window():
    torch.manual_seed(2)
    module = build_shortener("pool_linear", DIM, HEADS, 0.0, 2)
    mask = right_mask([3], 3)
    h = states(3, 1)
    g, _ = module.shorten(h, mask)
    w, bias = module.linear.weight, module.linear.bias
    assert torch.allclose(g[0, 0], w @ torch.cat([h[0, 0], h[1, 0]]) + bias, atol=1e-5)
    assert torch.allclose(g[1, 0], w @ torch.cat([h[2, 0], torch.zeros(DIM)]) + bias, atol=1e-5)


@pytest.mark.parametrize("name", sorted(SHORTENERS))
def test_left_padding_gives_the_same_result_as_right_padding(name):
    torch.manual_seed(3)
    module = build_shortener(name, DIM, HEADS, 0.0, 2, hidden=16).eval()
    lengths, total = [5, 3, 2], 5
    h = states(total, 3)
    right = right_mask(lengths, total)
    left = right.flip(1)
    h_left = torch.stack([h[:, b].roll(total - n, 0) for b, n in enumerate(lengths)], dim=1)
    g_right, m_right = module(with_garbage(h, right), right)
    g_left, m_left = module(with_garbage(h_left, left), left)
    assert torch.equal(m_right, m_left)
    real = ~m_right.t()
    assert torch.allclose(g_right[real], g_left[real], atol=1e-5)


def test_grouping_sums_categorised_states_and_ignores_padding_rows():
    torch.manual_seed(4)
    module = build_shortener("grouping", DIM, HEADS, 0.0, 3, hidden=16)
    mask = right_mask([4, 2], 6)
    h = with_garbage(states(6, 2), mask)
    g, g_mask = module.shorten(h, mask)
    c = module.categorise(h, mask)
    assert not g_mask.any()
    for b, length in enumerate([4, 2]):
        for k in range(3):
            expected = sum(c[i, b, k] * h[i, b] for i in range(length))
            assert torch.allclose(g[k, b], expected, atol=1e-4)
    # The same sentences without their padding rows: the same groups.
    g_short, _ = module.shorten(h[:2, 1:], mask[1:, :2])
    assert torch.allclose(g[:, 1:], g_short, atol=1e-5)


@pytest.mark.parametrize("name", sorted(SHORTENERS))
def test_output_is_layer_norm_of_residual_attention_back_to_h_plus_positions(name):
    """G = LN(G̃ + Attn(G̃, H, H)) + P, checked against torch's own multi-head attention."""
    torch.manual_seed(5)
    module = build_shortener(name, DIM, HEADS, 0.0, 3, hidden=16).eval()
    lengths, total = [7, 4, 5], 7
    mask = right_mask(lengths, total)
    h = with_garbage(states(total, 3), mask)
    g, g_mask = module(h, mask)
    g_tilde, _ = module.shorten(h, mask)
    ref = torch.nn.MultiheadAttention(DIM, HEADS)
    a = module.attn
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight]))
        ref.in_proj_bias.copy_(torch.cat([a.q_proj.bias, a.k_proj.bias, a.v_proj.bias]))
        ref.out_proj.weight.copy_(a.out_proj.weight)
        ref.out_proj.bias.copy_(a.out_proj.bias)
    attn, _ = ref(g_tilde, h.masked_fill(mask.t()[..., None], 0.0), h, key_padding_mask=mask)
    expected = F.layer_norm(g_tilde + attn, (DIM,))
    table = module.embed_positions.weight
    for b in range(3):
        real = int((~g_mask[b]).sum())
        expected[:real, b] += table[1:real + 1]
    real = ~g_mask.t()
    assert torch.allclose(g[real], expected[real], atol=1e-4)
    # The padded states are masked: other garbage there changes nothing.
    g_again, _ = module(with_garbage(h, mask, value=-7.0), mask)
    assert torch.allclose(g, g_again, atol=1e-5)


@pytest.mark.parametrize("name", sorted(SHORTENERS))
def test_gradient_flows_into_every_parameter_and_the_real_states(name):
    torch.manual_seed(6)
    module = build_shortener(name, DIM, HEADS, 0.1, 2, hidden=16)
    mask = right_mask([5, 3], 5)
    h = states(5, 2).requires_grad_()
    g, g_mask = module(h, mask)
    (g * torch.randn_like(g)).masked_fill(g_mask.t()[..., None], 0.0).sum().backward()
    for pname, p in module.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, pname
    assert (h.grad[~mask.t()].abs().sum(-1) > 0).all()
    assert (h.grad[mask.t()] == 0).all()


def test_all_padding_sentence_is_all_padding_and_finite():
    for name in SHORTENERS:
        module = build_shortener(name, DIM, HEADS, 0.0, 2, hidden=4)
        g, g_mask = module(states(3, 2), right_mask([3, 0], 3))
        assert g_mask[1].all() and not g_mask[0].any(), name
        assert torch.isfinite(g).all(), name


def test_detach_beyond():
    xs = [torch.ones(1, requires_grad=True) * i for i in range(3)]
    assert [x.requires_grad for x in detach_beyond(xs, 1)] == [True, False, False]
    assert [x.requires_grad for x in detach_beyond(xs, 0)] == [False, False, False]
    assert [x.requires_grad for x in detach_beyond(xs, None)] == [True, True, True]


@pytest.mark.parametrize("name", ["pool_mean", "grouping", "selecting"])
def test_gradient_stops_beyond_the_nearest_context_sentences(name):
    """Three context sentences (nearest first) from a shared 'encoder': the encoder and the shortener
    get gradient exactly from the sentences the model's plan lets through."""
    encoder_nearest, shortening_nearest = CONTEXT_GRADIENT[name]
    torch.manual_seed(7)
    module = build_shortener(name, DIM, HEADS, 0.0, 2, hidden=16)
    encoder = torch.nn.Linear(DIM, DIM)
    inputs = [states(4, 2, seed=s) for s in range(3)]
    masks = [right_mask([4, 3], 4)] * 3
    weights = [torch.randn(2, 2, DIM, generator=torch.Generator().manual_seed(10 + i)) for i in range(3)]

    def grads(sentences, plan):
        module.zero_grad(), encoder.zero_grad()
        outs = shorten_context(module, [encoder(inputs[i]) for i in sentences], [masks[i] for i in sentences], *plan)
        sum((g[:2] * weights[i]).sum() for i, (g, _) in zip(sentences, outs) if g.requires_grad).backward()
        return ([p.grad.clone() for p in module.parameters()],
                encoder.weight.grad.clone() if encoder.weight.grad is not None else torch.zeros_like(encoder.weight))

    short_all, enc_all = grads([0, 1, 2], (encoder_nearest, shortening_nearest))
    # Independently: only the sentences within each reach, with no blocking at all.
    reach = 3 if shortening_nearest is None else shortening_nearest
    short_ref, _ = grads(list(range(reach)), (3, None))
    enc_reach = min(encoder_nearest, reach)
    enc_ref = grads(list(range(enc_reach)), (3, None))[1] if enc_reach else torch.zeros_like(enc_all)
    for got, want in zip(short_all, short_ref):
        assert torch.allclose(got, want, atol=1e-6)
    assert torch.allclose(enc_all, enc_ref, atol=1e-6)
    assert (enc_all.abs().sum() > 0) == (encoder_nearest > 0)


def test_parameter_counts_at_paper_scale_against_table_5():
    """d = 512, 8 heads. Attention back to H: 4 projections of 512x512 + 512 = 1,050,624; its layer
    norm 1,024. Learned positions (fairseq: one padding row more): pooling sizes them by the max source
    positions, (1024 + 1) x 512 = 524,800; the latent ones by K, (K + 1) x 512. Linear pooling:
    (2 x 512) x 512 + 512 = 524,800. Categorising FFN: 512 x 512 + 512 = 262,656, then 512 K + K."""
    attn_ln = 4 * (512 * 512 + 512) + 2 * 512
    assert attn_ln == 1_051_648
    expected = {
        ("pool_mean", 2): attn_ln + 1025 * 512,
        ("pool_max", 2): attn_ln + 1025 * 512,
        ("pool_linear", 2): attn_ln + 1025 * 512 + 1024 * 512 + 512,
        ("grouping", 9): attn_ln + 262_656 + 512 * 9 + 9 + 10 * 512,
        ("selecting", 10): attn_ln + 262_656 + 512 * 10 + 10 + 11 * 512,
        ("grouping", 11): attn_ln + 262_656 + 512 * 11 + 11 + 12 * 512,
    }
    assert expected[("pool_mean", 2)] == 1_576_448
    assert expected[("pool_linear", 2)] == 2_101_248
    assert expected[("grouping", 9)] == 1_324_041
    assert expected[("selecting", 10)] == 1_325_066
    counts = {}
    for (name, k), n in expected.items():
        counts[name, k] = sum(p.numel() for p in build_shortener(name, 512, 8, 0.1, k).parameters())
        assert counts[name, k] == n, (name, k)
    # Table 5 (M, each rounded to 0.01): Caching Tokens 71.25, max/avg pooling 72.83, linear 73.35,
    # grouping and selecting 72.58. A difference of two rounded figures is within 0.01 of the true one.
    table5 = {"pool_mean": 72.83, "pool_max": 72.83, "pool_linear": 73.35, "grouping": 72.58, "selecting": 72.58}
    for (name, k), n in counts.items():
        if k != 11:
            assert abs(n / 1e6 - (table5[name] - 71.25)) <= 0.01 + 1e-9, name
    # One Caching Tokens count X fits every row: X + module count rounds to the row's figure.
    rows = [(table5[name], n) for (name, k), n in counts.items() if k != 11]
    low = max([71.245e6] + [(t - 0.005) * 1e6 - n for t, n in rows])
    high = min([71.255e6] + [(t + 0.005) * 1e6 - n for t, n in rows])
    assert (round(low), round(high)) == (71_250_959, 71_253_752)  # grouping's floor, linear's ceiling
    # Differences between shortening models do not involve Caching Tokens at all.
    assert abs((counts["pool_linear", 2] - counts["pool_mean", 2]) / 1e6 - (73.35 - 72.83)) <= 0.01
    assert abs((counts["pool_mean", 2] - counts["grouping", 9]) / 1e6 - (72.83 - 72.58)) <= 0.01
    # Without the learned positions pooling adds 1.05M, not Table 5's 1.58M: the table counts them.
    bare = sum(p.numel() for p in build_shortener("pool_mean", 512, 8, 0.1, 2, positions=False).parameters())
    assert bare == attn_ln and abs(bare / 1e6 - (72.83 - 71.25)) > 0.5
