"""Search's alignment step fitted on bank lists: the lists hold the first stage's rows and the
query's family, and the weight chosen on dev never makes the first stage worse."""

import hashlib

import numpy as np
import pytest

from mathgraph.tasks.search.index import SearchIndex
from mathgraph.tasks.training.search_rescoring import bank_lists, choose_bank_rescoring, reciprocal_ranks


class WordsEncoder:
    """Bag-of-words vectors: texts sharing words are close."""

    def encode(self, texts, batch_size=32):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, hashlib.sha256(word.encode()).digest()[0] % 64] += 1.0
        return out

    def identity(self):
        return {"kind": "test.WordsEncoder", "weights_sha256": "-", "mode": "bow", "dimension": 64}


BANK = [
    {"q": "tom has 12 apples and eats 3 how many apples are left"},  # the family of query 0
    {"q": "tom has 12 pears and eats 3 how many pears are left"},  # same style, another problem
    {"q": "a train travels 60 miles in 2 hours what is its speed"},  # the family of query 1
    {"q": "a car travels 60 miles in 2 hours how far in 5 hours"},
    {"q": "ann buys 4 pens at 2 dollars each what does she pay"},
]
# queries whose first-stage neighbour is a look-alike, not the row given as their family
QUERIES = [
    ("tom has 12 pears and eats 3 how many pears are left now", BANK[0]["q"]),
    ("a car travels 60 miles in 2 hours how far", BANK[2]["q"]),
]


class ScoresFamily:
    """An alignment model stand-in that scores each query's family ``family_score`` and every other row 0."""

    def __init__(self, family_score):
        self.family_score = family_score

    def predict(self, lists):
        answers = dict(QUERIES)
        return [
            {"scores": [self.family_score if c == answers[q] else 0.0 for c in candidates]} for q, candidates in lists
        ]


@pytest.fixture
def index():
    return SearchIndex.build(BANK, WordsEncoder(), text_field="q")


def test_bank_lists_hold_the_first_stage_rows_and_the_family(index):
    lists = bank_lists(index, QUERIES, k=2)
    for (query, answer), (listed_query, candidates, relevance) in zip(QUERIES, lists):
        assert listed_query == query and len(candidates) == 2 and answer in candidates
        assert relevance == [2 if c == answer else 0 for c in candidates] and sum(relevance) == 2
    first = [str(hit.row["q"]) for hit in index.search([QUERIES[0][0]], k=2)[0]]
    assert lists[0][1][0] == first[0]  # the rows keep the first stage's order (the family put last if missed)


def test_the_step_is_kept_only_where_it_helps_on_dev(index):
    first = reciprocal_ranks(index.search([q for q, _ in QUERIES], k=5), [a for _, a in QUERIES], "q").mean()
    assert first < 1.0  # the look-alikes come first: the step has something to fix
    helping = choose_bank_rescoring(index, ScoresFamily(1.0), QUERIES, min_cosines=(0.0,), k=5)
    assert helping["weight"] > 0 and helping["dev_mrr"] == 1.0 and helping["dev_mrr_first_stage"] == first
    # a step that scores every row alike cannot beat the first stage: weight 0 is kept
    useless = choose_bank_rescoring(index, ScoresFamily(0.0), QUERIES, min_cosines=(0.0,), k=5)
    assert useless["weight"] == 0.0 and useless["dev_mrr"] == pytest.approx(first)


def test_reciprocal_ranks_count_a_miss_as_zero():
    class Hit:
        def __init__(self, text):
            self.row = {"q": text}

    assert list(reciprocal_ranks([[Hit("a"), Hit("b")], [Hit("c")]], ["b", "x"], "q")) == [0.5, 0.0]
