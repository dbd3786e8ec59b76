"""The skeleton channel of search: tokens by hand, name counts, the TF-IDF cosine, three-way fusion, the
numbers bonus, and SearchIndex's fused search against a by-hand computation."""

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from mathgraph.models.late_fusion import standardise
from mathgraph.models.tfidf import VECTORIZER_DEFAULTS
from mathgraph.tasks.search.commands import search_weights, skeleton_search_weight
from mathgraph.tasks.search.index import SearchIndex
from mathgraph.tasks.search.skeleton import (
    ENCODER_LEAD,
    LEAD_STEP,
    NUMBERS_BONUS,
    NUMBERS_INFORMATION,
    SKELETON_CONFIDENCE,
    SKELETON_FUSION,
    SKELETON_WEIGHTS,
    NameCounts,
    SkeletonIndex,
    confident_weight,
    formula_tokens,
    fuse_channels,
    keep_encoder_lead,
    number_keys,
    problem_numbers,
    skeleton_tokens,
    spoken_numbers,
    text_tokens,
)
from tests.tasks.test_search import HashingEncoder


def test_formula_paths_abstract_numbers_and_variables():
    # \frac{x+1}{2}: the tree \frac(num=+(x, 1), den=2)
    tokens = formula_tokens(r"\frac{x+1}{2}")
    assert sorted(tokens) == sorted(
        [
            r"t:(\frac (+ VAR NUM) NUM)",
            "t:(+ VAR NUM)",
            "p:VAR<+",
            r"p:VAR<+<\frac",
            "p:NUM<+",
            r"p:NUM<+<\frac",
            r"p:NUM<\frac",
        ]
    )
    # other numbers and other letters: the same tokens
    assert sorted(formula_tokens(r"\frac{t+7}{13}")) == sorted(tokens)
    assert sorted(formula_tokens(r"\frac{x-1}{2}")) == sorted(tokens)  # a difference is a sum's shape
    assert sorted(formula_tokens(r"\frac{x^1}{2}")) != sorted(tokens)
    # a function named by a letter is FUN, whatever the letter; a named function keeps its name
    assert sorted(formula_tokens("f(x) = 3x + 1")) == sorted(formula_tokens("g(t) = 5t - 2"))
    assert "t:(FUN NUM)" in formula_tokens("h'(4)") and r"t:(\sin VAR)" in formula_tokens(r"\sin x")


def test_names_are_told_by_the_bank():
    names = NameCounts(["Janet has 3 apples. She gives Mark 2.", "Find the mark. So Janet did."])
    assert names.is_name("Janet")  # never lower-case, capitalised inside a sentence
    assert not names.is_name("Find", sentence_start=True)  # only ever at a sentence's start
    assert not names.is_name("Then", sentence_start=True) and not names.is_name("Apples")  # "apples" lower-case
    assert names.is_name("Zelda")  # unseen, inside a sentence
    assert not names.is_name("Zelda", sentence_start=True)
    assert names.is_name("Mark") is False  # "mark" once lower-case, "Mark" once inside: not more often
    assert not names.is_name("X") and not names.is_name("USA")


def test_text_tokens_abstract_numbers_and_names():
    names = NameCounts(["Janet sold it. Then Janet left."])
    tokens = text_tokens("Janet buys 16 eggs. How many eggs does Janet have?", names)
    assert tokens == [
        "w:NAME",
        "w:buy",
        "w:NUM",
        "w:egg",
        "w:NAME_buy",
        "w:buy_NUM",
        "w:NUM_egg",
        "q:egg",
        "w:how",
        "w:many",
        "w:egg",
        "w:NAME",
        "w:how_many",
        "w:many_egg",
        "w:egg_NAME",
        "Q:how",
        "Q:many",
        "Q:egg",
        "Q:NAME",
    ]
    renamed = text_tokens("Janet buys 41 eggs. How many eggs does Janet have?", names)
    assert renamed == tokens


def test_skeleton_tokens_join_formulas_and_words():
    names = NameCounts([])
    tokens = skeleton_tokens("Find $x^2$ if 3 cats.", names)
    assert tokens[:3] == ["t:(^ VAR NUM)", "p:VAR<^", "p:NUM<^"]
    assert "q:cat" in tokens and "w:cat" in tokens
    # the words that ask are left out, superlatives read as one
    assert not any("find" in token for token in tokens)
    asked = skeleton_tokens("Compute the smallest value. What is the maximum?", names)
    assert sorted(asked) == sorted(["w:least", "w:value", "w:least_value", "w:greatest", "Q:greatest"])


def test_skeleton_index_scores_are_tfidf_cosines():
    texts = ["Janet has 3 apples. How many apples?", "Find $x+1$.", "Mark has 5 pears. How many pears?"]
    index = SkeletonIndex(texts)
    bags = [skeleton_tokens(t, index.names) for t in texts]
    vectorizer = TfidfVectorizer(analyzer=lambda x: x, sublinear_tf=True).fit(bags)
    query = "Peter has 9 apples. How many apples?"
    expected = (vectorizer.transform([index.tokens(query)]) @ vectorizer.transform(bags).T).toarray()[0]
    (scores,) = index.scores([query])
    assert scores == pytest.approx(expected)
    assert int(np.argmax(scores)) == 0
    (some,) = index.scores([query], rows=[np.array([2, 0])])
    assert some == pytest.approx(expected[[2, 0]])
    with pytest.raises(ValueError, match="2 token bags for 3 texts"):
        SkeletonIndex(texts, tokens=bags[:2])


def test_fuse_channels_is_a_weighted_sum_of_standardised_scores():
    a, b, c = [1.0, 2.0, 3.0], [3.0, 1.0, 2.0], [0.0, 0.0, 5.0]
    fused = fuse_channels([a, b, c], [0.5, 0.2, 0.3])
    # by hand: z(a) = (-1.2247, 0, 1.2247), z(b) = (1.2247, -1.2247, 0), z(c) = (-0.7071, -0.7071, 1.4142)
    assert fused == pytest.approx([-0.5*1.224745 + 0.2*1.224745 - 0.3*0.707107, -0.2*1.224745 - 0.3*0.707107,
                                   0.5*1.224745 + 0.3*1.414214], abs=1e-5)  # fmt: skip
    assert fused == pytest.approx(0.5 * standardise(a) + 0.2 * standardise(b) + 0.3 * standardise(c))
    with pytest.raises(ValueError, match="sum to 1"):
        fuse_channels([a, b], [0.5, 0.2])
    with pytest.raises(ValueError, match="2 score lists but 3 weights"):
        fuse_channels([a, b], [0.5, 0.2, 0.3])


def test_cosine_fusion_sums_the_cosines_as_they_are():
    a, b, c = [0.9, 0.6, 0.2], [0.1, 0.3, 0.0], [0.0, 0.5, 1.0]
    fused = fuse_channels([a, b, c], [0.5, 0.2, 0.3], "cosine")
    # by hand: 0.45 + 0.02 + 0 = 0.47; 0.30 + 0.06 + 0.15 = 0.51; 0.10 + 0 + 0.30 = 0.40
    assert fused == pytest.approx([0.47, 0.51, 0.40])
    # a row's fused score does not depend on the other candidates (standardised scores do)
    assert fuse_channels([a[:2], b[:2], c[:2]], [0.5, 0.2, 0.3], "cosine") == pytest.approx([0.47, 0.51])
    assert fuse_channels([a[:2], b[:2], c[:2]], [0.5, 0.2, 0.3])[0] != pytest.approx(
        fuse_channels([a, b, c], [0.5, 0.2, 0.3])[0]
    )
    with pytest.raises(ValueError, match="fusion must be one of"):
        fuse_channels([a, b, c], [0.5, 0.2, 0.3], "ranks")


CORPUS = [
    "Janet has 3 apples and buys 4 more. How many apples does she have?",
    "Find the value of $\\frac{x+1}{2}$ when $x=3$.",
    "A train travels 60 miles in 2 hours. What is its speed?",
    "Mark reads 12 pages a day. How many pages in a week?",
]


def test_search_fuses_the_skeleton_channel_over_every_row():
    index = SearchIndex.build(CORPUS, HashingEncoder(), text_field="problem")
    query = "Evaluate $\\frac{t+5}{9}$ when $t=2$."
    hits = index.search(
        [query], k=4, sparse_weight=0.2, skeleton_weight=0.3, skeleton_confidence=None, fusion="standardised"
    )[0]
    vectorizer = TfidfVectorizer(**VECTORIZER_DEFAULTS).fit(CORPUS)
    sparse = (vectorizer.transform([query]) @ vectorizer.transform(CORPUS).T).toarray()[0]
    vector = HashingEncoder().encode([query])[0]
    dense = index.embeddings @ (vector / np.linalg.norm(vector))
    (skeleton,) = SkeletonIndex(CORPUS).scores([query])
    fused = 0.5 * standardise(dense) + 0.2 * standardise(sparse) + 0.3 * standardise(skeleton)
    expected = np.lexsort((np.arange(4), -fused))
    assert [h.index for h in hits] == list(expected)
    assert [h.score for h in hits] == pytest.approx(list(fused[expected]), abs=1e-5)
    assert hits[0].index == 1  # the same formula shape, other numbers and letters
    # skeleton weight 0: the TF-IDF fusion as before
    before = index.search([query], k=4, sparse_weight=0.2)[0]
    assert [h.score for h in before] == pytest.approx(
        sorted(0.8 * standardise(dense) + 0.2 * standardise(sparse), reverse=True), abs=1e-5
    )
    with pytest.raises(ValueError, match="at most 1"):
        index.search([query], sparse_weight=0.6, skeleton_weight=0.6)


def test_search_with_cosine_fusion_by_hand():
    index = SearchIndex.build(CORPUS, HashingEncoder(), text_field="problem")
    queries = ["Evaluate $\\frac{t+5}{9}$ when $t=2$.", "Mark reads 12 pages a day. How many pages in a week?"]
    hits = index.search(
        queries, k=4, skeleton_weight=0.8, skeleton_confidence=(0.2, 1.0), fusion="cosine", numbers_bonus=0.0
    )
    skeletons = SkeletonIndex(CORPUS).scores(queries)
    for query, query_hits, skeleton in zip(queries, hits, skeletons):
        vector = HashingEncoder().encode([query])[0]
        dense = index.embeddings @ (vector / np.linalg.norm(vector))
        own = 0.8 * min(1.0, max(0.0, (skeleton.max() - 0.2) / 0.8))
        fused = (1 - own) * dense + own * skeleton  # the cosines themselves, no standardising
        expected = np.lexsort((np.arange(4), -fused))
        assert [h.index for h in query_hits] == list(expected)
        assert [h.score for h in query_hits] == pytest.approx(list(fused[expected]), abs=1e-5)
        assert [h.cosine for h in query_hits] == pytest.approx(list(dense[expected]), abs=1e-5)
    assert hits[0][0].index == 1 and hits[1][0].index == 3
    # the default fusion is SKELETON_FUSION where the skeleton channel is on
    shipped = index.search(queries, k=4, skeleton_weight=0.8, skeleton_confidence=(0.2, 1.0))
    again = index.search(queries, k=4, skeleton_weight=0.8, skeleton_confidence=(0.2, 1.0), fusion=SKELETON_FUSION)
    assert [[h.score for h in q] for q in shipped] == [[h.score for h in q] for q in again]
    with pytest.raises(ValueError, match="fusion must be one of"):
        index.search(queries, skeleton_weight=0.8, fusion="z")


def test_the_skeleton_weight_follows_the_channels_confidence():
    # (low, high) = (0.2, 1.0): 0 at or below 0.2, the full weight at 1, linear between
    assert confident_weight(1.0, 0.4, (0.2, 1.0)) == pytest.approx(0.4)
    assert confident_weight(0.6, 0.4, (0.2, 1.0)) == pytest.approx(0.4 * 0.4 / 0.8)
    assert confident_weight(0.2, 0.4, (0.2, 1.0)) == 0.0 and confident_weight(0.05, 0.4, (0.2, 1.0)) == 0.0
    assert confident_weight(0.05, 0.4, None) == 0.4  # no confidence: one weight for every query
    with pytest.raises(ValueError, match="low < high"):
        confident_weight(0.5, 0.4, (0.6, 0.3))


def test_search_scales_the_skeleton_weight_by_the_querys_best_skeleton_cosine():
    index = SearchIndex.build(CORPUS, HashingEncoder(), text_field="problem")
    queries = ["Evaluate $\\frac{t+5}{9}$ when $t=2$.", "Mark reads 12 pages a day. How many pages in a week?"]
    hits = index.search(
        queries,
        k=4,
        sparse_weight=0.1,
        skeleton_weight=0.4,
        skeleton_confidence=(0.2, 1.0),
        fusion="standardised",
        numbers_bonus=0.0,
    )
    vectorizer = TfidfVectorizer(**VECTORIZER_DEFAULTS).fit(CORPUS)
    skeletons = SkeletonIndex(CORPUS).scores(queries)
    for query, query_hits, skeleton in zip(queries, hits, skeletons):
        sparse = (vectorizer.transform([query]) @ vectorizer.transform(CORPUS).T).toarray()[0]
        vector = HashingEncoder().encode([query])[0]
        dense = index.embeddings @ (vector / np.linalg.norm(vector))
        own = 0.4 * min(1.0, max(0.0, (skeleton.max() - 0.2) / 0.8))
        fused = (0.9 - own) * standardise(dense) + 0.1 * standardise(sparse) + own * standardise(skeleton)
        expected = np.lexsort((np.arange(4), -fused))
        assert [h.index for h in query_hits] == list(expected)
        assert [h.score for h in query_hits] == pytest.approx(list(fused[expected]), abs=1e-5)
    # the second query is a row word for word: skeleton cosine 1, the full weight
    assert skeletons[1].max() == pytest.approx(1.0) and hits[1][0].index == 3
    # "shipped" (the default) is SKELETON_CONFIDENCE
    shipped = index.search(queries, k=4, sparse_weight=0.1, skeleton_weight=0.4)
    again = index.search(queries, k=4, sparse_weight=0.1, skeleton_weight=0.4, skeleton_confidence=SKELETON_CONFIDENCE)
    assert [[h.score for h in q] for q in shipped] == [[h.score for h in q] for q in again]
    with pytest.raises(ValueError, match="low < high"):
        index.search(queries, sparse_weight=0.1, skeleton_weight=0.4, skeleton_confidence=(0.5, 0.5))
    with pytest.raises(ValueError, match="skeleton_confidence"):
        index.search(queries, sparse_weight=0.1, skeleton_weight=0.4, skeleton_confidence="sure")


def test_the_default_search_weights():
    assert skeleton_search_weight(False) == 0.0
    assert skeleton_search_weight(None) == skeleton_search_weight(True) == SKELETON_WEIGHTS[1]
    sparse, _, skeleton = search_weights(None)
    assert (sparse, skeleton) == SKELETON_WEIGHTS
    assert search_weights(False)[0] == 0.0 and search_weights(False)[2] == 0.0


def test_a_saved_index_keeps_its_skeleton_tokens(tmp_path, monkeypatch):
    import mathgraph.tasks.search.skeleton as skeleton
    from mathgraph.tasks.search.index import SKELETON_CACHE

    SearchIndex.build(CORPUS, HashingEncoder(), text_field="problem").save_pretrained(tmp_path / "index")
    index = SearchIndex.from_pretrained(tmp_path / "index", encoder=HashingEncoder())
    query = "Evaluate $\\frac{t+5}{9}$ when $t=2$."
    first = index.search([query], k=4, sparse_weight=0.2, skeleton_weight=0.3)[0]
    assert (tmp_path / "index" / SKELETON_CACHE).is_file()
    calls = []
    original = skeleton.problem_skeleton
    monkeypatch.setattr(skeleton, "problem_skeleton", lambda *a: calls.append(a) or original(*a))
    again = SearchIndex.from_pretrained(tmp_path / "index", encoder=HashingEncoder())
    second = again.search([query], k=4, sparse_weight=0.2, skeleton_weight=0.3)[0]
    assert len(calls) == 1  # the query's tokens only: the rows' came from the cache
    assert [h.index for h in second] == [h.index for h in first]
    # a cache of other rows (another key) is not used: their tokens are computed again
    other = skeleton.SkeletonIndex.cached(CORPUS[:2], tmp_path / "index" / SKELETON_CACHE, "other")
    assert len(calls) == 3 and other.bags == [original(t, other.names)[0] for t in CORPUS[:2]]
    assert other.numbers == [original(t, other.names)[1] for t in CORPUS[:2]]
    assert other.spoken == [original(t, other.names)[2] for t in CORPUS[:2]]
    # a cache written by another parser version is computed again too (its formulas may read otherwise)
    before = len(calls)
    skeleton.SkeletonIndex.cached(CORPUS, tmp_path / "index" / SKELETON_CACHE, "same")
    skeleton.SkeletonIndex.cached(CORPUS, tmp_path / "index" / SKELETON_CACHE, "same")
    assert len(calls) == before + len(CORPUS)  # the first computed and wrote them, the second read them
    monkeypatch.setattr("mathgraph.parsers.PARSER_VERSION", -1)
    skeleton.SkeletonIndex.cached(CORPUS, tmp_path / "index" / SKELETON_CACHE, "same")
    assert len(calls) == before + 2 * len(CORPUS)


def test_problem_numbers_reads_formulas_and_words_exactly():
    assert problem_numbers("If $2x+3=7$, find x for 10 cats.") == ("10", "2", "3", "7")
    # thousands commas, decimals as exact values, a formula's fraction as its two numbers
    assert problem_numbers("Pay 1,000 dollars or 0.50 of $\\frac{1}{2}$.") == ("1", "1/2", "1000", "2")
    assert problem_numbers("Compute $\\cos 210^\\circ$.") == ("210",)
    assert problem_numbers("Find $-3 + x$.") == ("-3",)  # a negated number keeps its sign
    assert problem_numbers("Find $x - 3$.") == ("3",)  # a subtraction is an operator
    assert problem_numbers("Add $(4,-2)$ and $(1,5)$.") == ("-2", "1", "4", "5")
    assert problem_numbers("Five cats and no digits.") == ()  # number words are spoken_numbers' part


def test_number_matches_are_exact_signed_multisets_weighed_by_rarity():
    bank = ["Compute $\\cos 210^\\circ$.", "Compute $\\cos 270^\\circ$.", "Find $210 + 210$.", "Add 2 and 3."]
    index = SkeletonIndex(bank)
    assert index.numbers == [("210",), ("270",), ("210", "210"), ("2", "3")]
    # inverse document frequencies by hand: 210 in 2 of 4 rows, ln(5/3); 270, 2, 3 in 1, ln(5/2)
    assert index.number_idf == pytest.approx(
        {"210": np.log(5 / 3), "270": np.log(5 / 2), "2": np.log(5 / 2), "3": np.log(5 / 2)}
    )
    queries = ["What is $\\cos 210^\\circ$?", "Sum 3 and 2.", "Add two and three.", "Sum 3 and $-2$."]
    matches = index.number_matches(queries, information=1.0)
    # 210: ln(5/3) = 0.511 of the whole; 2 and 3: 2 ln(5/2) = 1.833, at most 1, in digits or said in words
    # (number_keys); a changed sign matches nothing
    expected = [[np.log(5 / 3), 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]]
    assert np.allclose(np.stack(matches), expected)
    scaled = index.number_matches(queries[1:2], information=4.0)[0]
    assert scaled.tolist() == pytest.approx([0, 0, 0, 2 * np.log(5 / 2) / 4])
    # a number no row has: ln(5/1), as rare as a number can be
    assert index.number_weight(("7",), information=4.0) == pytest.approx(np.log(5) / 4)
    (some,) = index.number_matches(queries[:1], rows=[np.array([2, 0])], information=1.0)
    assert some.tolist() == pytest.approx([0, np.log(5 / 3)])
    with pytest.raises(ValueError, match="information must be > 0"):
        index.number_weight(("2",), information=0.0)
    with pytest.raises(ValueError, match="2 number lists and 4 spoken ones for 4 texts"):
        SkeletonIndex(bank, numbers=index.numbers[:2])


SIBLINGS = [
    "Compute $\\cos 210^\\circ$.",  # the original
    "Find the value of $\\cos 270^\\circ$.",  # its sibling: other numbers, the query's wording
    "A train travels 60 miles in 2 hours. What is its speed?",
    "Mark reads 12 pages a day. How many pages in a week?",
]


def test_a_sibling_with_other_numbers_ranks_below_the_original(monkeypatch):
    import mathgraph.tasks.search.skeleton as skeleton_module

    index = SearchIndex.build(SIBLINGS, HashingEncoder(), text_field="problem")
    reworded = "Find the value of $\\cos 210^\\circ$."  # the original's numbers, the sibling's words
    renumbered = "Find the value of $\\cos 150^\\circ$."  # new numbers: no row has them
    channel = SkeletonIndex(SIBLINGS)
    (skeleton, other) = channel.scores([reworded, renumbered])
    # 210 is in 1 of the 4 rows: its inverse document frequency ln(5/2), a share of NUMBERS_INFORMATION
    assert channel.number_weight(("210",)) == pytest.approx(min(1.0, np.log(5 / 2) / NUMBERS_INFORMATION))
    # in this small bank that is little: below, a match of 210 weighs one half
    monkeypatch.setattr(skeleton_module, "NUMBERS_INFORMATION", 2 * np.log(5 / 2))
    weight = 0.5
    vectors = HashingEncoder().encode([reworded, renumbered])
    dense = index.embeddings @ (vectors[0] / np.linalg.norm(vectors[0]))
    own = 0.7 * min(1.0, max(0.0, skeleton.max()))
    fused = (1 - own) * dense + own * skeleton
    assert fused[1] > fused[0]  # without the bonus the sibling comes first: its words are the query's
    gap = fused[1] - fused[0]
    # the hashing encoder is sure of the sibling (test_search_falls_back_on_the_encoder_where_it_leads): no fall-back
    options = {"skeleton_weight": 0.7, "skeleton_confidence": (0.0, 1.0), "fusion": "cosine", "encoder_lead": None}
    before = index.search([reworded], k=4, numbers_bonus=0.0, **options)[0]
    assert [h.index for h in before][:2] == [1, 0]
    # a bonus whose weighed share is larger than the gap puts the original first; its score is the fused one plus
    # the bonus times the match's weight
    bonus = round((gap + 0.05) / weight, 2)
    assert bonus <= 1.0
    after = index.search([reworded], k=4, numbers_bonus=bonus, **options)[0]
    assert [h.index for h in after][:2] == [0, 1]
    assert after[0].score == pytest.approx(fused[0] + bonus * weight, abs=1e-5)
    assert after[1].score == pytest.approx(fused[1], abs=1e-5)
    # one whose share is smaller than the gap leaves the sibling first (a tie-breaker, not a filter)
    assert index.search([reworded], k=4, numbers_bonus=gap / weight / 2, **options)[0][0].index == 1
    # a query with new numbers matches no row: the same ranking and scores with or without the bonus
    plain = index.search([renumbered], k=4, numbers_bonus=0.0, **options)[0]
    bonused = index.search([renumbered], k=4, numbers_bonus=bonus, **options)[0]
    assert [(h.index, h.score) for h in plain] == [(h.index, h.score) for h in bonused]
    assert other.max() > 0
    # None: NUMBERS_BONUS where the skeleton channel is on
    shipped = index.search([reworded], k=4, **options)[0]
    explicit = index.search([reworded], k=4, numbers_bonus=NUMBERS_BONUS, **options)[0]
    assert [h.score for h in shipped] == [h.score for h in explicit]
    with pytest.raises(ValueError, match="numbers_bonus"):
        index.search([reworded], numbers_bonus=-0.1, **options)


def test_spoken_numbers_read_number_words_outside_formulas():
    assert spoken_numbers("A seven-sided die and twenty-one cards.") == ("21", "7")
    assert spoken_numbers("Twelve eggs, forty apples and Fifty-Five pears.") == ("12", "40", "55")
    # "one" and "zero" say no number here; a word inside another word is no number ("often", "weight")
    assert spoken_numbers("One of them is non-zero; no one often weighs eighty.") == ("80",)
    assert spoken_numbers("If $x$ is two more than $y$ and $z=3$, find $x$.") == ("2",)  # formulas left out
    assert spoken_numbers("Find $x$ if $2x=7$.") == ()


def test_number_keys_are_the_digits_and_the_digits_with_the_spoken_numbers():
    assert number_keys((), ()) == []
    assert number_keys(("7",), ()) == [("7",)]
    assert number_keys((), ("7",)) == [("7",)]
    assert number_keys(("3", "10"), ("7",)) == [("10", "3"), ("10", "3", "7")]


def test_number_matches_read_numbers_said_in_words():
    bank = [
        "How many diagonals does a polygon with 7 sides have?",
        "How many diagonals does a hexagon have?",
        "A seven-sided die is rolled 3 times.",
    ]
    index = SkeletonIndex(bank)
    assert index.numbers == [("7",), (), ("3",)] and index.spoken == [(), (), ("7",)]
    # inverse document frequencies over the digits: 7 in row 0, 3 in row 2, ln(4/2) each
    assert index.number_idf == pytest.approx({"7": np.log(2), "3": np.log(2)})
    queries = [
        "How many diagonals can a seven-sided polygon have?",  # no digit: its spoken 7 matches row 0's digit
        "A 7-sided die is rolled three times.",  # 7 alone matches row 0; 7 with the spoken 3 matches row 2
        "How many diagonals has a hexagon?",  # no number at all: no match
    ]
    matches = index.number_matches(queries, information=1.0)
    # ("7",): ln 2 = 0.693 of the whole; ("3", "7"): 2 ln 2 = 1.386, at most 1
    expected = [[np.log(2), 0, 0], [np.log(2), 0, 1], [0, 0, 0]]
    assert np.allclose(np.stack(matches), expected)
    with pytest.raises(ValueError, match="spoken ones"):
        SkeletonIndex(bank, numbers=index.numbers, spoken=index.spoken[:1])


def test_keep_encoder_lead_puts_a_sure_encoder_row_first():
    fused = np.array([0.5, 0.9, 0.7])
    dense = np.array([0.8, 0.5, 0.55])  # row 0 leads row 2 by 0.25
    kept = keep_encoder_lead(fused, dense, 0.2)
    assert kept.tolist() == pytest.approx([0.9 + LEAD_STEP, 0.9, 0.7])
    assert np.argmax(kept) == 0 and kept[0] > kept[1]
    assert fused.tolist() == [0.5, 0.9, 0.7]  # the input is left as it was
    assert keep_encoder_lead(fused, dense, 0.3).tolist() == fused.tolist()  # a lead of 0.25 is not 0.3
    assert keep_encoder_lead(fused, dense, None).tolist() == fused.tolist()
    # the encoder's row already first by the fused score keeps its score
    assert keep_encoder_lead(np.array([0.95, 0.9, 0.7]), dense, 0.2).tolist() == [0.95, 0.9, 0.7]
    assert keep_encoder_lead(np.array([0.4]), np.array([0.9]), 0.0).tolist() == [0.4]  # one row: nothing to lead
    with pytest.raises(ValueError, match="encoder lead"):
        keep_encoder_lead(fused, dense, -0.1)
    assert ENCODER_LEAD == 0.2


def test_search_falls_back_on_the_encoder_where_it_leads(monkeypatch):
    import mathgraph.tasks.search.skeleton as skeleton_module

    monkeypatch.setattr(skeleton_module, "NUMBERS_INFORMATION", 2 * np.log(5 / 2))  # a match of 210 weighs 0.5
    index = SearchIndex.build(SIBLINGS, HashingEncoder(), text_field="problem")
    reworded = "Find the value of $\\cos 210^\\circ$."  # the original's numbers, the sibling's words
    options = {"skeleton_weight": 0.7, "skeleton_confidence": (0.0, 1.0), "fusion": "cosine", "numbers_bonus": 1.0}
    vector = HashingEncoder().encode([reworded])[0]
    dense = index.embeddings @ (vector / np.linalg.norm(vector))
    first, second = np.argsort(-dense)[:2]
    assert first == 1  # the encoder prefers the sibling, whose words are the query's
    lead = float(dense[first] - dense[second])
    # the numbers bonus puts the original first unless the encoder's lead is at least encoder_lead
    fused = index.search([reworded], k=4, encoder_lead=None, **options)[0]
    assert fused[0].index == 0
    kept = index.search([reworded], k=4, encoder_lead=lead - 1e-4, **options)[0]
    assert [h.index for h in kept][:2] == [1, 0]
    assert kept[0].score == pytest.approx(fused[0].score + LEAD_STEP, abs=1e-6)
    assert [h.index for h in index.search([reworded], k=4, encoder_lead=lead + 1e-4, **options)[0]] == [
        h.index for h in fused
    ]
    # without the skeleton channel there is no fall-back: the TF-IDF fusion as it was
    plain = index.search([reworded], k=4, sparse_weight=0.2, encoder_lead=0.0)[0]
    assert [h.index for h in plain] == [h.index for h in index.search([reworded], k=4, sparse_weight=0.2)[0]]
    with pytest.raises(ValueError, match="encoder_lead"):
        index.search([reworded], encoder_lead="sure", **options)
    with pytest.raises(ValueError, match="encoder_lead"):
        index.search([reworded], encoder_lead=-1.0, **options)
