"""Heads and losses on top of a ``ComusModel``: pre-training (MLM, DTC, TGCL) and the task heads.

* MLM (COMUS Eq. 9): a BERT-style prediction head over the token states.
* DTC (Eq. 10): TransE margin loss ``max(gamma + d(n_h + r, n_t) - d(n_h + r', n_t), 0)``
  with a randomly sampled negative relation ``r'``, Euclidean ``d``.
* TGCL (Eq. 11): in-batch InfoNCE between the ``[CLS]`` vector and the mean node vector
  of the same problem, temperature ``tau = 0.07``.
* Task heads: a classifier over one problem vector (KPC), a classifier over a
  pair of problem vectors (QRC, QAM), and a bi-encoder scorer for ranking (SQR).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from mathgraph.models.cgc_lora import PartlyTrainableEmbedding


class MlmHead(nn.Module):
    """``dense -> GELU -> LayerNorm -> decoder`` as BERT's; ``hidden: [..., d] -> logits [..., vocab]``.

    all-MiniLM-L6-v2 ships without an MLM head, so this one starts random; the
    decoder can share its weight with the input word embeddings (``tie_to``). A
    ``PartlyTrainableEmbedding`` (pre-trained rows frozen, added LaTeX rows training)
    is decoded part by part, so the frozen rows stay frozen in the decoder too.
    """

    def __init__(self, hidden: int, vocab_size: int, tie_to: nn.Module | None = None, eps: float = 1e-12):
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden, eps=eps)
        self.parts = tie_to if isinstance(tie_to, PartlyTrainableEmbedding) else None
        if self.parts is not None:
            self.bias = nn.Parameter(torch.zeros(vocab_size))
            return
        self.decoder = nn.Linear(hidden, vocab_size)
        if tie_to is not None:
            self.decoder.weight = tie_to.weight

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        hidden = self.norm(F.gelu(self.dense(hidden)))
        if self.parts is None:
            return self.decoder(hidden)
        return torch.cat([F.linear(hidden, self.parts.frozen), F.linear(hidden, self.parts.new)], dim=-1) + self.bias


def mlm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over the masked positions (``labels == -100`` elsewhere), Eq. 9."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), labels.reshape(-1), ignore_index=-100)


class DtcHead(nn.Module):
    """Dependency triplet completion (TransE, Eq. 10).

    Relation embeddings (``relation_dim``) are mapped into the node space
    (``node_dim``) so that ``n_h + r`` is defined; the negative relation of each
    triplet is drawn uniformly from the other relations.
    """

    def __init__(self, relation_dim: int, node_dim: int, margin: float = 1.0):
        super().__init__()
        self.project = nn.Linear(relation_dim, node_dim, bias=False)
        self.margin = margin

    def forward(
        self,
        heads: torch.Tensor,
        relations: torch.Tensor,
        tails: torch.Tensor,
        relation_table: torch.Tensor,
        negatives: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
        weights: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Mean margin loss over triplets.

        ``heads, tails: [S, node_dim]`` node states; ``relations: [S]`` relation ids;
        ``relation_table: [num_relations, relation_dim]``; ``negatives: [S]`` negative
        relation ids (sampled when ``None``, never equal to the true one); ``weights: [S]``
        1 for real triplets, 0 for padding (default all 1; no triplet at all gives 0).
        """
        if negatives is None:
            negatives = sample_negative_relations(relations, relation_table.shape[0], generator)
        table = self.project(relation_table)
        positive = torch.linalg.vector_norm(heads + table[relations] - tails, dim=-1)
        negative = torch.linalg.vector_norm(heads + table[negatives] - tails, dim=-1)
        losses = F.relu(self.margin + positive - negative)
        weights = torch.ones_like(losses) if weights is None else weights.to(losses.dtype)
        return (losses * weights).sum() / weights.sum().clamp(min=1)


def sample_negative_relations(
    relations: torch.Tensor, num_relations: int, generator: torch.Generator | None = None
) -> torch.Tensor:
    """A uniformly random relation id different from each of ``relations``."""
    if num_relations < 2:
        raise ValueError("DTC needs at least two relations to sample a negative one")
    offset = torch.randint(1, num_relations, relations.shape, generator=generator, device="cpu").to(relations.device)
    return (relations + offset) % num_relations


class TgclHead(nn.Module):
    """Text-graph contrastive learning (Eq. 11): projections of ``[CLS]`` and mean node into one space."""

    def __init__(self, text_dim: int, node_dim: int, projection_dim: int = 256, temperature: float = 0.07):
        super().__init__()
        self.text_projection = nn.Linear(text_dim, projection_dim)
        self.graph_projection = nn.Linear(node_dim, projection_dim)
        self.temperature = temperature

    def forward(self, cls: torch.Tensor, mean_node: torch.Tensor) -> torch.Tensor:
        """InfoNCE of each problem's text against the graphs of the batch: ``cls: [B, d_text]``, ``mean_node: [B, d_node]``."""
        return info_nce(self.text_projection(cls), self.graph_projection(mean_node), self.temperature)


def info_nce(queries: torch.Tensor, keys: torch.Tensor, temperature: float) -> torch.Tensor:
    """``-mean_i log softmax_j(cos(q_i, k_j) / tau)[i]``: row ``i``'s positive is key ``i``."""
    logits = F.normalize(queries.float(), dim=-1) @ F.normalize(keys.float(), dim=-1).T / temperature
    return F.cross_entropy(logits, torch.arange(len(queries), device=queries.device))


ALIGNMENT_HIDDEN = 64  # width of the projected alignment features a head reads beside the neural vector


class AlignmentProjection(nn.Module):
    """Named alignment features of a pair (``parsers.compare``: counts, shares, flags) -> ``[..., 64]``.

    Counts span 0 to hundreds, shares 0 to 1: ``sign(x) log(1 + |x|)`` brings them to one scale
    before ``linear -> GELU``.
    """

    def __init__(self, num_features: int, hidden: int = ALIGNMENT_HIDDEN):
        super().__init__()
        self.linear = nn.Linear(num_features, hidden)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        scaled = torch.sign(features) * torch.log1p(features.abs())
        return F.gelu(self.linear(scaled.to(self.linear.weight.dtype)))


class ClassificationHead(nn.Module):
    """``dropout -> linear``: one problem vector ``[B, d]`` -> class logits ``[B, C]`` (KPC).

    With ``alignment_dim`` > 0 the classifier also reads the pair's alignment features ``[B, F]``
    (``AlignmentProjection``) next to the vector: ``linear([dropout(v); project(a)])``.
    """

    def __init__(self, in_dim: int, num_classes: int, dropout: float = 0.1, alignment_dim: int = 0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.alignment = AlignmentProjection(alignment_dim) if alignment_dim else None
        self.classifier = nn.Linear(in_dim + (ALIGNMENT_HIDDEN if alignment_dim else 0), num_classes)

    def forward(self, vectors: torch.Tensor, alignment: torch.Tensor | None = None) -> torch.Tensor:
        vectors = self.dropout(vectors)
        if self.alignment is not None:
            if alignment is None:
                raise ValueError("this head reads alignment features: the batch has none")
            vectors = torch.cat([vectors, self.alignment(alignment).to(vectors.dtype)], dim=-1)
        return self.classifier(vectors)


class PairClassificationHead(nn.Module):
    """Two problem vectors ``u, v: [B, d]`` -> logits over ``[u; v; |u - v|; u * v]`` (QRC, QAM).

    The pair features are those of sentence-BERT: order-aware through ``u; v``,
    symmetric evidence of (dis)similarity through ``|u - v|`` and ``u * v``; with
    ``alignment_dim`` > 0, also the pair's alignment features (``ClassificationHead``).
    """

    def __init__(self, in_dim: int, num_classes: int, dropout: float = 0.1, alignment_dim: int = 0):
        super().__init__()
        self.head = ClassificationHead(4 * in_dim, num_classes, dropout, alignment_dim)

    def forward(self, u: torch.Tensor, v: torch.Tensor, alignment: torch.Tensor | None = None) -> torch.Tensor:
        return self.head(torch.cat([u, v, (u - v).abs(), u * v], dim=-1), alignment)


class BiEncoderScorer(nn.Module):
    """Ranking by cosine between projected query and candidate vectors (SQR)."""

    def __init__(self, in_dim: int, projection_dim: int = 256, temperature: float = 0.05, alignment_dim: int = 0):
        super().__init__()
        self.projection = nn.Linear(in_dim, projection_dim)
        self.temperature = temperature
        self.alignment = AlignmentProjection(alignment_dim) if alignment_dim else None
        self.alignment_score = nn.Linear(ALIGNMENT_HIDDEN, 1) if alignment_dim else None

    def forward(
        self, queries: torch.Tensor, candidates: torch.Tensor, alignment: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Scores ``[B, N]`` for ``queries: [B, d]`` and ``candidates: [B, N, d]``; with ``alignment_dim`` > 0,
        the cosine plus a score of each (query, candidate) alignment ``[B, N, F]``."""
        q = F.normalize(self.projection(queries), dim=-1)
        c = F.normalize(self.projection(candidates), dim=-1)
        scores = torch.einsum("bd,bnd->bn", q, c)
        if self.alignment is not None:
            if alignment is None:
                raise ValueError("this head reads alignment features: the batch has none")
            scores = scores + self.alignment_score(self.alignment(alignment)).squeeze(-1).to(scores.dtype)
        return scores

    def loss(
        self, scores: torch.Tensor, relevant: torch.Tensor, candidate_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """ListNet-style listwise loss with graded relevance, averaged over lists.

        ``scores, relevant, candidate_mask: [B, N]``; ``relevant`` holds each candidate's relevance grade
        (integers 0..2, or booleans read as 0/1) and ``candidate_mask`` marks real candidates (padding gets
        neither probability nor target mass). The target distribution over a list's real candidates is
        proportional to the gains ``2^rel - 1`` (those of NDCG: relevance 2 -> 3, 1 -> 1, 0 -> 0), and the loss
        is its cross-entropy with ``softmax(scores / tau)``: ``-sum_i p_i log softmax(scores / tau)_i``. With
        a single relevant candidate this is ``-log softmax(scores / tau)`` at that candidate.
        """
        logits = scores.float() / self.temperature
        gains = torch.pow(2.0, relevant.float()) - 1
        if candidate_mask is not None:
            logits = logits.masked_fill(~candidate_mask, float("-inf"))
            gains = gains.masked_fill(~candidate_mask, 0.0)
        totals = gains.sum(dim=-1, keepdim=True)
        # Checked where the values are at hand: on a GPU reading them back would stall every step, and
        # ``tasks.data.load_sqr`` has already refused lists with no relevant candidate.
        if totals.device.type == "cpu" and not (totals > 0).all():
            raise ValueError("every candidate list needs at least one relevant item")
        target = gains / totals
        log_probs = torch.log_softmax(logits, dim=-1).masked_fill(target == 0, 0.0)  # no -inf * 0 on padding
        return -(target * log_probs).sum(dim=-1).mean()
