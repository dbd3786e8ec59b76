"""Search's alignment step fitted where it is used: on bank-like candidate lists.

The SQR alignment model was fitted on the graded GSM-Plus lists, whose candidates are all close rewrites; in a
real bank it promoted unrelated problems of the same style (a bumper-car problem's own seed ranked fourth
behind a problem about ceiling lights). Here each training query is a problem whose family is in the
bank (a GSM-Plus variant, whose seed the bank holds), and its candidate list is what the first stage of search
returns for it in that bank: its top ``k`` rows, the family member among them (put in place of the last row
when the first stage missed it) with relevance 2, every other row with relevance 0. The model so learns to
leave an unrelated problem of the same style below the query's own family.

The late-fusion weight of the step and the cosine below which a row is not re-scored are then chosen on dev
queries by mean reciprocal rank; weight 0 (the first stage alone) is one of the choices, so on dev the step is
never worse than the first stage.

    index = SearchIndex.build(bank_rows, load_embedder("text:minilm"), text_field="question")
    model = fit_bank_rescoring(index, train_queries)            # [(query, answer text), ...]
    setting = choose_bank_rescoring(index, model, dev_queries)  # {"weight", "min_cosine", "dev_mrr", ...}
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Rows of the first stage per training list: the rows a re-scoring reads at search time are the top
# ``tasks.search.index.STRUCTURE_RERANK``; the hardest negatives are the top few, so a shorter list trains on
# them without the cost of aligning fifty rows per query.
TRAIN_LIST_SIZE = 20
MIN_COSINES = (0.0, 0.3, 0.5, 0.6, 0.7, 0.8)


def bank_lists(index, queries: Sequence[tuple[str, str]], k: int = TRAIN_LIST_SIZE) -> list[tuple[str, list, list]]:
    """``(query, candidates, relevance)`` per ``(query, answer)``: the first stage's top ``k`` rows of ``index``
    for the query (texts), the answer among them with relevance 2 (put in place of the last row when the first
    stage missed it), the other rows 0. ``answer`` must be the text of a row of the index."""
    hits = index.search([query for query, _ in queries], k=k)
    lists = []
    for (query, answer), query_hits in zip(queries, hits):
        candidates = [str(hit.row[index.text_field]) for hit in query_hits]
        if answer not in candidates:
            candidates[-1] = answer
        lists.append((query, candidates, [2 if text == answer else 0 for text in candidates]))
    return lists


def fit_bank_rescoring(
    index, train_queries: Sequence[tuple[str, str]], k: int = TRAIN_LIST_SIZE, params: dict | None = None
):
    """An SQR ``AlignmentModel`` (options ``params``) fitted on the bank lists of ``train_queries``."""
    from mathgraph.models.alignment_model import AlignmentModel

    lists = bank_lists(index, train_queries, k)
    return AlignmentModel("sqr", params).fit(
        [(query, candidates) for query, candidates, _ in lists], [r for *_, r in lists]
    )


def reciprocal_ranks(hits: Sequence[Sequence], answers: Sequence[str], text_field: str) -> np.ndarray:
    """1 / rank of each query's answer among its hits (0 when it is not among them)."""
    ranks = []
    for query_hits, answer in zip(hits, answers):
        texts = [str(hit.row[text_field]) for hit in query_hits]
        ranks.append(1.0 / (texts.index(answer) + 1) if answer in texts else 0.0)
    return np.array(ranks)


def choose_bank_rescoring(
    index,
    model,
    dev_queries: Sequence[tuple[str, str]],
    weights: Sequence[float] | None = None,
    min_cosines: Sequence[float] = MIN_COSINES,
    k: int = 10,
) -> dict:
    """The late-fusion weight and ``min_cosine`` of the alignment step with the best dev MRR@``k`` (the
    smallest weight, then the highest ``min_cosine``, among equals; weight 0 is the first stage alone), with
    the MRR of every setting tried. The model scores each dev query's first-stage rows once; every setting
    then re-ranks those scores as ``SearchIndex.search`` would (``close_variant_scores``, ``fuse_scores``)."""
    from mathgraph.models.alignment_model import close_variant_scores
    from mathgraph.models.late_fusion import WEIGHTS, fuse_scores
    from mathgraph.tasks.search.index import STRUCTURE_RERANK

    queries, answers = [q for q, _ in dev_queries], [a for _, a in dev_queries]
    hits = index.search(queries, k=max(k, STRUCTURE_RERANK))  # the first stage: cosines as scores
    lists = [(query, [str(hit.row[index.text_field]) for hit in row]) for query, row in zip(queries, hits)]
    scored = {
        (query, candidate): score
        for (query, candidates), result in zip(lists, model.predict(lists))
        for candidate, score in zip(candidates, result["scores"])
    }
    cached = _ScoresOf(scored)
    cosines = [np.array([hit.score for hit in row]) for row in hits]
    tried = {}
    for min_cosine in min_cosines:
        gated = close_variant_scores(cached, lists, cosines, min_cosine)
        for weight in weights or WEIGHTS:
            reranked = []
            for row, first, scores in zip(hits, cosines, gated):
                order = (
                    np.arange(len(row))
                    if scores is None or weight == 0
                    else np.argsort(-fuse_scores(first, scores, weight), kind="stable")
                )
                reranked.append([row[i] for i in order[:k]])
            tried[(weight, min_cosine)] = float(reciprocal_ranks(reranked, answers, index.text_field).mean())
    best = max(tried.values())
    weight, negative_cosine = min((w, -c) for (w, c), value in tried.items() if value == best)
    return {
        "weight": weight,
        "min_cosine": -negative_cosine,
        "dev_mrr": best,
        "dev_mrr_first_stage": tried[(0.0, min_cosines[0])] if 0.0 in (weights or WEIGHTS) else None,
        "tried": {f"{w}@{c}": value for (w, c), value in sorted(tried.items())},
    }


class _ScoresOf:
    """A predictor of scores already computed: ``{(query, candidate): score}``."""

    def __init__(self, scores: dict):
        self.scores = scores

    def predict(self, lists):
        return [{"scores": [self.scores[(query, c)] for c in candidates]} for query, candidates in lists]


__all__ = ["bank_lists", "fit_bank_rescoring", "choose_bank_rescoring", "reciprocal_ranks", "TRAIN_LIST_SIZE"]
