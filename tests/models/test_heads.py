"""Pre-training losses and task heads against hand computations."""

import math

import pytest
import torch

from mathgraph.models.heads import (
    BiEncoderScorer,
    DtcHead,
    MlmHead,
    PairClassificationHead,
    TgclHead,
    info_nce,
    mlm_loss,
    sample_negative_relations,
)


def test_dtc_is_the_transe_margin_loss():
    head = DtcHead(relation_dim=2, node_dim=2, margin=1.0)
    with torch.no_grad():
        head.project.weight.copy_(torch.eye(2))
    heads = torch.tensor([[0.0, 0.0], [1.0, 1.0]])
    tails = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    table = torch.tensor([[1.0, 0.0], [0.0, 3.0], [0.0, 0.5]])
    loss = head(heads, torch.tensor([0, 2]), tails, table, negatives=torch.tensor([1, 1]))
    # Triplet 1: d(h+r, t) = 0, d(h+r', t) = |(-1, 3)| = sqrt(10) -> max(1 + 0 - sqrt 10, 0) = 0.
    # Triplet 2: d(h+r, t) = 0.5, d(h+r', t) = 3 -> max(1 + 0.5 - 3, 0) = 0; with margin 3: 0.5.
    assert loss.item() == 0.0
    head.margin = 3.0
    expected = (max(3 + 0 - math.sqrt(10), 0) + max(3 + 0.5 - 3, 0)) / 2
    assert head(heads, torch.tensor([0, 2]), tails, table, negatives=torch.tensor([1, 1])).item() == pytest.approx(
        expected
    )


def test_negative_relations_are_uniform_and_never_the_true_one():
    relations = torch.zeros(6000, dtype=torch.long)
    negatives = sample_negative_relations(relations, 4, torch.Generator().manual_seed(0))
    assert not (negatives == relations).any()
    counts = torch.bincount(negatives, minlength=4)
    assert counts[0] == 0 and all(1800 < c < 2200 for c in counts[1:].tolist())
    with pytest.raises(ValueError, match="at least two relations"):
        sample_negative_relations(relations, 1)


def test_info_nce_matches_a_hand_computation():
    queries = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    keys = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    tau = 0.5
    cos = [[1.0, 1 / math.sqrt(2)], [0.0, 1 / math.sqrt(2)]]
    expected = -sum(math.log(math.exp(cos[i][i] / tau) / sum(math.exp(c / tau) for c in cos[i])) for i in range(2)) / 2
    assert info_nce(queries, keys, tau).item() == pytest.approx(expected, rel=1e-6)


def test_tgcl_falls_when_text_and_graph_agree():
    torch.manual_seed(0)
    head = TgclHead(text_dim=4, node_dim=6, projection_dim=4)
    cls, nodes = torch.randn(8, 4), torch.randn(8, 6)
    optimizer = torch.optim.Adam(head.parameters(), lr=0.05)
    first = head(cls, nodes).item()
    for _ in range(100):
        optimizer.zero_grad()
        loss = head(cls, nodes)
        loss.backward()
        optimizer.step()
    assert loss.item() < first / 4
    assert head.temperature == 0.07


def test_mlm_head_and_loss_only_count_masked_positions():
    embedding = torch.nn.Embedding(10, 4)
    head = MlmHead(4, 10, tie_to=embedding)
    assert head.decoder.weight is embedding.weight
    logits = head(torch.randn(2, 3, 4))
    assert logits.shape == (2, 3, 10)
    labels = torch.tensor([[-100, 3, -100], [-100, -100, 7]])
    expected = (
        torch.nn.functional.cross_entropy(logits[0, 1:2], labels[0, 1:2])
        + torch.nn.functional.cross_entropy(logits[1, 2:3], labels[1, 2:3])
    ) / 2
    assert mlm_loss(logits, labels).item() == pytest.approx(expected.item(), rel=1e-6)


def test_pair_head_sees_order_and_similarity_features():
    head = PairClassificationHead(in_dim=3, num_classes=2, dropout=0.0)
    assert head.head.classifier.in_features == 12
    u, v = torch.randn(5, 3), torch.randn(5, 3)
    assert head(u, v).shape == (5, 2)
    assert not torch.allclose(head(u, v), head(v, u))


def test_listwise_ranking_loss_by_hand():
    scorer = BiEncoderScorer(in_dim=2, projection_dim=2, temperature=1.0)
    scores = torch.tensor([[0.5, 0.1, -0.2]])
    exps = [math.exp(s) for s in (0.5, 0.1, -0.2)]
    log_p = [math.log(e / sum(exps)) for e in exps]
    # graded relevance [2, 0, 1]: gains 2^rel - 1 = 3, 0, 1 -> target distribution 3/4, 0, 1/4 (ListNet)
    graded = torch.tensor([[2, 0, 1]])
    assert scorer.loss(scores, graded).item() == pytest.approx(-(0.75 * log_p[0] + 0.25 * log_p[2]), rel=1e-6)
    # booleans read as relevance 0/1: equal target mass on the relevant candidates
    relevant = torch.tensor([[True, False, True]])
    assert scorer.loss(scores, relevant).item() == pytest.approx(-(log_p[0] + log_p[2]) / 2, rel=1e-6)
    # A padded candidate is in neither the softmax nor the target, even with a grade.
    masked = scorer.loss(scores, graded, candidate_mask=torch.tensor([[True, True, False]])).item()
    assert masked == pytest.approx(-math.log(exps[0] / (exps[0] + exps[1])), rel=1e-6)
    # The mean over lists; a list whose only graded candidate is padding has no target.
    two = scorer.loss(torch.cat([scores, scores]), torch.tensor([[2, 0, 1], [0, 2, 0]]))
    assert two.item() == pytest.approx((-(0.75 * log_p[0] + 0.25 * log_p[2]) - log_p[1]) / 2, rel=1e-6)
    with pytest.raises(ValueError, match="at least one relevant"):
        scorer.loss(scores, torch.zeros(1, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="at least one relevant"):
        scorer.loss(scores, torch.tensor([[0, 0, 2]]), candidate_mask=torch.tensor([[True, True, False]]))
    # finite gradients with padding (no -inf * 0)
    leaf = scores.clone().requires_grad_(True)
    scorer.loss(leaf, graded, candidate_mask=torch.tensor([[True, True, False]])).backward()
    assert torch.isfinite(leaf.grad).all() and leaf.grad[0, 2] == 0
    assert scorer(torch.randn(2, 2), torch.randn(2, 4, 2)).shape == (2, 4)


def test_mlm_head_on_a_partly_frozen_embedding_decodes_as_the_tied_one_and_trains_only_new_rows():
    from torch import nn

    from mathgraph.models.cgc_lora import PartlyTrainableEmbedding
    from mathgraph.models.heads import MlmHead

    torch.manual_seed(0)
    embedding = nn.Embedding(10, 4)
    tied = MlmHead(4, 10, tie_to=embedding)
    parts = PartlyTrainableEmbedding(embedding, num_frozen=7)
    head = MlmHead(4, 10, tie_to=parts)
    head.dense.load_state_dict(tied.dense.state_dict())
    head.norm.load_state_dict(tied.norm.state_dict())
    head.bias.data.copy_(tied.decoder.bias.data)
    hidden = torch.randn(3, 4)
    assert torch.allclose(head(hidden), tied(hidden), atol=1e-6)
    head(hidden).sum().backward()
    assert parts.frozen.grad is None and parts.new.grad is not None
