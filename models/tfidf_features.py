"""What a fitted TF-IDF model computes when it predicts, in NumPy alone: scikit-learn's ``TfidfVectorizer.transform``
and ``LogisticRegression.predict_proba``.

Importing scikit-learn takes seconds (SciPy's sparse matrices half a second), longer than the prediction of one
text; so the models of ``models.tfidf`` are fitted with scikit-learn and predict with this module, from what the fit
left: the vectorizer's options, its terms in column order and their idf weights, the classifier's coefficients and
intercepts. The results are scikit-learn's up to the order of floating-point sums (``tests/models/test_tfidf.py``).

A text's vector is a ``SparseRow``: its nonzero columns in ascending order and their values.

    features = TfidfFeatures(options, terms, idf)
    rows = features.transform(["Find $x$ if $2x+3=7$."])
    probabilities = LogisticRegressionScores(coef, intercept, n_classes=7).probabilities(rows)  # [1, 7]
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

# scikit-learn's English stop words (sklearn.feature_extraction.text.ENGLISH_STOP_WORDS, 318 words), kept here so that
# models fitted with stop_words="english" predict without scikit-learn (a test checks that the lists agree)
ENGLISH_STOP_WORDS = frozenset(
    """
    a about above across after afterwards again against all almost alone along already also although always am among
    amongst amoungst amount an and another any anyhow anyone anything anyway anywhere are around as at back be
    became because become becomes becoming been before beforehand behind being below beside besides between beyond
    bill both bottom but by call can cannot cant co con could couldnt cry de describe detail do done down due during
    each eg eight either eleven else elsewhere empty enough etc even ever every everyone everything everywhere
    except few fifteen fifty fill find fire first five for former formerly forty found four from front full further
    get give go had has hasnt have he hence her here hereafter hereby herein hereupon hers herself him himself his
    how however hundred i ie if in inc indeed interest into is it its itself keep last latter latterly least less
    ltd made many may me meanwhile might mill mine more moreover most mostly move much must my myself name namely
    neither never nevertheless next nine no nobody none noone nor not nothing now nowhere of off often on once one
    only onto or other others otherwise our ours ourselves out over own part per perhaps please put rather re same
    see seem seemed seeming seems serious several she should show side since sincere six sixty so some somehow
    someone something sometime sometimes somewhere still such system take ten than that the their them themselves
    then thence there thereafter thereby therefore therein thereupon these they thick thin third this those though
    three through throughout thru thus to together too top toward towards twelve twenty two un under until up upon
    us very via was we well were what whatever when whence whenever where whereafter whereas whereby wherein
    whereupon wherever whether which while whither who whoever whole whom whose why will with within without would
    yet you your yours yourself yourselves
    """.split()
)


# TfidfVectorizer's options (scikit-learn's defaults) that shape a prediction
TRANSFORM_DEFAULTS = {
    "input": "content",
    "encoding": "utf-8",  # encoding and decode_error read bytes; the inputs here are str
    "decode_error": "strict",
    "strip_accents": None,
    "lowercase": True,
    "analyzer": "word",
    "stop_words": None,
    "token_pattern": r"(?u)\b\w\w+\b",
    "ngram_range": (1, 1),
    "binary": False,
    "norm": "l2",
    "use_idf": True,
    "sublinear_tf": False,
}
FIT_ONLY_OPTIONS = frozenset({"min_df", "max_df", "max_features", "smooth_idf"})  # the stored terms and idf hold them
_WHITE_SPACES = re.compile(r"\s\s+")  # the character analyzers fold runs of white space into one space


class SparseRow(NamedTuple):
    """One vector: ``columns`` [nnz] ascending (int64), ``values`` [nnz] (float64)."""

    columns: np.ndarray
    values: np.ndarray


class TfidfFeatures:
    """``TfidfVectorizer.transform`` of a fitted vectorizer: its ``options`` (the keyword arguments it was made with),
    ``terms`` in column order and ``idf`` [len(terms)]. An option this class does not compute, or a value of one it
    does not know, is a ``ValueError`` here rather than a silently different vector."""

    def __init__(self, options: dict, terms: Sequence[str], idf: np.ndarray, analyze=None):
        options = _checked_options(options)
        if len(idf) != len(terms):
            raise ValueError(f"{len(terms)} terms but {len(idf)} idf weights")
        self.columns = {term: column for column, term in enumerate(terms)}
        # scikit-learn multiplies float64 counts by the stored weights: float32 ones are widened exactly
        self.idf = np.asarray(idf, dtype=np.float64)
        self.options = options
        # a callable analyzer (scikit-learn's analyzer=callable) replaces the one the options describe
        self.analyze = analyze or _analyzer(options)

    @classmethod
    def fit(cls, documents: Sequence, options: dict | None = None, analyze=None) -> TfidfFeatures:
        """``TfidfVectorizer(**options).fit(documents)``: the terms (sorted, as scikit-learn orders its vocabulary)
        and their idf, ``log((1 + n) / (1 + df)) + 1`` (``smooth_idf``, the default) or ``log(n / df) + 1``.
        ``min_df`` and ``max_df`` (counts or shares) and ``max_features`` (the most frequent terms in the corpus;
        terms tied at the cut may differ from scikit-learn's) are applied as scikit-learn applies them.
        ``analyze``: a callable that gives a document's terms (e.g. ``lambda bag: bag`` for documents that are
        already token bags), else the word or character analyzer of ``options``."""
        options = dict(options or {})
        fit_options = {name: options.pop(name) for name in FIT_ONLY_OPTIONS if name in options}
        analyze = analyze or _analyzer(_checked_options(options))
        documents = list(documents)
        if not documents:
            raise ValueError("TF-IDF needs at least one document to fit")
        document_frequency: dict[str, int] = {}
        corpus_frequency: dict[str, int] = {}
        for document in documents:
            terms = analyze(document)
            for term in terms:
                corpus_frequency[term] = corpus_frequency.get(term, 0) + 1
            for term in set(terms):
                document_frequency[term] = document_frequency.get(term, 0) + 1
        n = len(documents)
        low = _document_count(fit_options.get("min_df", 1), n)
        high = _document_count(fit_options.get("max_df", 1.0), n)
        kept = [term for term, df in document_frequency.items() if low <= df <= high]
        limit = fit_options.get("max_features")
        if limit is not None and len(kept) > limit:
            kept.sort(key=lambda term: -corpus_frequency[term])
            kept = kept[:limit]
        if not kept:
            raise ValueError("no term is left after min_df / max_df: the documents are empty or too few")
        terms = sorted(kept)
        df = np.array([document_frequency[term] for term in terms], dtype=np.float64)
        if fit_options.get("smooth_idf", True):
            idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
        else:
            idf = np.log(n / df) + 1.0
        return cls(options, terms, idf, analyze=analyze)

    @property
    def terms(self) -> list[str]:
        """The terms in column order."""
        return list(self.columns)

    def __len__(self) -> int:
        """The number of columns (terms)."""
        return len(self.columns)

    def transform(self, texts: Sequence[str]) -> list[SparseRow]:
        """The tf-idf vectors of ``texts``, one ``SparseRow`` each."""
        return [self.transform_one(text) for text in texts]

    def transform_one(self, text: str) -> SparseRow:
        """The tf-idf vector of one text: term counts, ``log(count) + 1`` with ``sublinear_tf``, times idf, normed."""
        counts: dict[int, int] = {}
        for term in self.analyze(text):
            column = self.columns.get(term)
            if column is not None:
                counts[column] = counts.get(column, 0) + 1
        columns = np.fromiter(counts, dtype=np.int64, count=len(counts))
        values = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
        order = np.argsort(columns)
        columns, values = columns[order], values[order]
        if self.options["binary"]:
            values[:] = 1.0
        if self.options["sublinear_tf"]:
            values = np.log(values) + 1.0
        values = values * self.idf[columns]
        return SparseRow(columns, _normalized(values, self.options["norm"]))


def pair_row(a: SparseRow, b: SparseRow, width: int) -> SparseRow:
    """``[a; b; |a - b|; a * b]`` of two vectors of ``width`` columns: a row of ``4 * width``."""
    union = np.union1d(a.columns, b.columns)
    difference = np.zeros(len(union))
    difference[np.searchsorted(union, a.columns)] += a.values
    difference[np.searchsorted(union, b.columns)] -= b.values
    shared, in_a, in_b = np.intersect1d(a.columns, b.columns, assume_unique=True, return_indices=True)
    product = a.values[in_a] * b.values[in_b]
    return SparseRow(
        np.concatenate([a.columns, b.columns + width, union + 2 * width, shared + 3 * width]),
        np.concatenate([a.values, b.values, np.abs(difference), product]),
    )


def dot(a: SparseRow, b: SparseRow) -> float:
    """The dot product of two vectors (their cosine when both are L2-normalised)."""
    _, in_a, in_b = np.intersect1d(a.columns, b.columns, assume_unique=True, return_indices=True)
    return float(a.values[in_a] @ b.values[in_b])


class LogisticRegressionScores:
    """``LogisticRegression``'s ``decision_function`` and ``predict_proba`` from its ``coef`` [K, F] and ``intercept``
    [K] (K = 1 for two classes, else ``n_classes``), with the probabilities scikit-learn gives for ``multi_class``
    (``"auto"`` when absent; scikit-learn >= 1.8 no longer takes the option and does what ``"auto"`` did with
    its default solver) and ``solver``: one-vs-rest, normalised, for ``"ovr"`` and for ``"auto"`` with two classes or
    liblinear; else the softmax (of ``[-s, s]`` for two classes)."""

    def __init__(self, coef: np.ndarray, intercept: np.ndarray, n_classes: int, multi_class="auto", solver="lbfgs"):
        if coef.ndim != 2 or coef.shape[0] != (1 if n_classes == 2 else n_classes) or intercept.shape != coef.shape[:1]:
            raise ValueError(f"coefficients {coef.shape} and intercepts {intercept.shape} for {n_classes} classes")
        if multi_class not in ("auto", "ovr", "multinomial"):
            raise ValueError(f"unknown multi_class {multi_class!r}")
        self.weights = np.asarray(coef, dtype=np.float64).T.copy()  # [F, K]: a row per column of the features
        self.intercept = np.asarray(intercept, dtype=np.float64)
        self.n_features = coef.shape[1]
        self.one_vs_rest = multi_class == "ovr" or (multi_class == "auto" and (n_classes == 2 or solver == "liblinear"))

    def decision(self, rows: Sequence[SparseRow]) -> np.ndarray:
        """``X @ coef.T + intercept``: [len(rows), K]."""
        scores = np.empty((len(rows), len(self.intercept)))
        for i, row in enumerate(rows):
            scores[i] = row.values @ self.weights[row.columns]
        return scores + self.intercept

    def predict(self, rows: Sequence[SparseRow]) -> np.ndarray:
        """Class indices, as ``LogisticRegression.predict``: the positive score's sign for two classes, else the
        best score (the first of equal ones)."""
        scores = self.decision(rows)
        return (scores[:, 0] > 0).astype(np.int64) if scores.shape[1] == 1 else scores.argmax(axis=1)

    def probabilities(self, rows: Sequence[SparseRow]) -> np.ndarray:
        """Class probabilities, [len(rows), n_classes]."""
        scores = self.decision(rows)
        if scores.shape[1] == 1 and self.one_vs_rest:
            positive = _expit(scores[:, 0])
            return np.stack([1 - positive, positive], axis=1)
        if scores.shape[1] == 1:
            return _softmax(np.concatenate([-scores, scores], axis=1))
        if not self.one_vs_rest:
            return _softmax(scores)
        probabilities = _expit(scores)
        total = probabilities.sum(axis=1)
        vanished = total == 0  # every class's expit underflowed: scikit-learn says uniform
        probabilities[vanished], total[vanished] = 1.0, probabilities.shape[1]
        return probabilities / total[:, None]


def _document_count(limit, documents: int) -> float:
    """``min_df`` / ``max_df`` as a number of documents: an int is a count, a float a share of ``documents``."""
    return limit if isinstance(limit, int) else limit * documents


class ColumnMatrix:
    """Rows of sparse vectors (``SparseRow``) kept by column, an inverted index: the dot products of a query row
    with every row, or with some of them, in NumPy alone (what ``query @ matrix.T`` gives with SciPy)."""

    def __init__(self, rows: Sequence[SparseRow], width: int):
        self.n_rows = len(rows)
        lengths = np.array([len(row.columns) for row in rows], dtype=np.int64)
        columns = np.concatenate([row.columns for row in rows]) if rows else np.zeros(0, dtype=np.int64)
        values = np.concatenate([row.values for row in rows]) if rows else np.zeros(0)
        row_ids = np.repeat(np.arange(self.n_rows, dtype=np.int64), lengths)
        order = np.argsort(columns, kind="stable")
        self.row_ids, self.values = row_ids[order], values[order]
        self.starts = np.zeros(width + 1, dtype=np.int64)
        np.cumsum(np.bincount(columns, minlength=width), out=self.starts[1:])

    def dot(self, query: SparseRow, rows: np.ndarray | None = None) -> np.ndarray:
        """``query``'s dot product with every row [n_rows], or with the rows ``rows`` (in that order)."""
        scores = np.zeros(self.n_rows)
        for column, value in zip(query.columns, query.values):
            start, end = self.starts[column], self.starts[column + 1]
            np.add.at(scores, self.row_ids[start:end], value * self.values[start:end])
        return scores if rows is None else scores[np.asarray(rows, dtype=np.int64)]


def _checked_options(options: dict) -> dict:
    unknown = set(options) - set(TRANSFORM_DEFAULTS) - FIT_ONLY_OPTIONS
    if unknown:
        raise ValueError(f"TF-IDF options {sorted(unknown)} are not computed without scikit-learn")
    options = {**TRANSFORM_DEFAULTS, **options}
    allowed = {
        "input": ("content",),
        "strip_accents": (None, False, "ascii", "unicode"),
        "analyzer": ("word", "char", "char_wb"),
        "norm": ("l2", "l1", None),
        "use_idf": (True,),
    }
    for name, values in allowed.items():
        if options[name] not in values:
            raise ValueError(f"TF-IDF option {name}={options[name]!r} is not computed without scikit-learn")
    stop_words = options["stop_words"]
    if isinstance(stop_words, str) and stop_words != "english":
        raise ValueError(f"not a built-in stop list: {stop_words}")
    options["ngram_range"] = tuple(options["ngram_range"])
    return options


def _analyzer(options: dict):
    """``TfidfVectorizer.build_analyzer``: text -> terms (lower-cased, accents stripped, tokens, stop words dropped,
    n-grams)."""
    lowercase = options["lowercase"]
    strip_accents = {"ascii": _strip_accents_ascii, "unicode": _strip_accents}.get(options["strip_accents"])
    low, high = options["ngram_range"]

    def preprocess(text: str) -> str:
        text = text.lower() if lowercase else text
        return strip_accents(text) if strip_accents else text

    if options["analyzer"] == "char":
        return lambda text: _char_ngrams(_WHITE_SPACES.sub(" ", preprocess(text)), low, high)
    if options["analyzer"] == "char_wb":
        return lambda text: _char_wb_ngrams(_WHITE_SPACES.sub(" ", preprocess(text)), low, high)
    pattern = re.compile(options["token_pattern"])
    if pattern.groups > 1:
        raise ValueError("More than 1 capturing group in token pattern. Only a single group should be captured.")
    stop_words = _stop_words(options["stop_words"])

    def analyze(text: str) -> list[str]:
        tokens = pattern.findall(preprocess(text))
        if stop_words is not None:
            tokens = [token for token in tokens if token not in stop_words]
        return _word_ngrams(tokens, low, high)

    return analyze


def _stop_words(stop_words) -> frozenset | None:
    if stop_words is None:
        return None
    if stop_words == "english":  # scikit-learn's list (ENGLISH_STOP_WORDS)
        return ENGLISH_STOP_WORDS
    return frozenset(stop_words)


def _word_ngrams(tokens: list[str], low: int, high: int) -> list[str]:
    terms = list(tokens) if low == 1 else []
    for n in range(max(low, 2), min(high, len(tokens)) + 1):
        terms.extend(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    return terms


def _char_ngrams(text: str, low: int, high: int) -> list[str]:
    return [text[i : i + n] for n in range(low, min(high, len(text)) + 1) for i in range(len(text) - n + 1)]


def _char_wb_ngrams(text: str, low: int, high: int) -> list[str]:
    """Character n-grams inside each word padded with a space; a word shorter than ``n`` counts once, whole."""
    terms = []
    for word in text.split():
        word = f" {word} "
        for n in range(low, high + 1):
            terms.extend(word[i : i + n] for i in range(max(len(word) - n + 1, 1)))
            if len(word) <= n:
                break
    return terms


def _strip_accents(text: str) -> str:
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def _strip_accents_ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ASCII", "ignore").decode("ASCII")


def _normalized(values: np.ndarray, norm: str | None) -> np.ndarray:
    if norm is None:
        return values
    total = np.abs(values).sum() if norm == "l1" else np.sqrt(values @ values)
    return values if total == 0 else values / total


def _expit(x: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-x))`` without overflow."""
    small = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + small), small / (1 + small))


def _softmax(scores: np.ndarray) -> np.ndarray:
    exponentials = np.exp(scores - scores.max(axis=1, keepdims=True))
    return exponentials / exponentials.sum(axis=1, keepdims=True)


__all__ = [
    "ENGLISH_STOP_WORDS",
    "TRANSFORM_DEFAULTS",
    "FIT_ONLY_OPTIONS",
    "SparseRow",
    "TfidfFeatures",
    "pair_row",
    "dot",
    "LogisticRegressionScores",
]
