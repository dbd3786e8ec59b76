"""TF-IDF reference points for every task: logistic regression for KPC/QRC/QAM, cosine ranking for SQR.

- `TfidfClassifier(kind="single")`: a `Pipeline` of `TfidfVectorizer` and `LogisticRegression` on one text (KPC).
- `TfidfClassifier(kind="pair")`: the same on a pair of texts (QRC, QAM). One vectorizer, fitted on both sides,
  maps a pair (a, b) to the sparse concatenation `[v(a); v(b); |v(a) - v(b)|; v(a) * v(b)]`: the two texts, what
  differs between them and what they share, so that a linear model can tell "same problem, numbers changed"
  from "an extra sentence" or "unrelated".
- `TfidfRanker`: scores SQR candidates by the cosine between their TF-IDF vector and the query's (the vectors
  are L2-normalised, so the cosine is a dot product); the vectorizer is fitted on the training texts only.

Models are saved without pickle: `config.json` holds the hyperparameters, the vocabulary (terms in column order)
and the class labels; `arrays.safetensors` holds the idf weights and the logistic regression coefficients.
`load()` rebuilds the scikit-learn objects from those.

`train_tfidf(task, rows)` and `evaluate_tfidf(task, model, rows)` take the rows of the task files (see
the comment above `_check_task`) and return the metrics dicts of `tasks.metrics`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from safetensors.numpy import load_file, save_file
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from mathgraph.files import apply_umask
from mathgraph.hub import local_directory
from mathgraph.tasks.metrics import classification_metrics, ranking_metrics

CONFIG_FILE = "config.json"
ARRAYS_FILE = "arrays.safetensors"
FORMAT_VERSION = 1
MODEL_TYPE = "tfidf"  # config.json's model_type (tasks.loading); "model" says which of TFIDF_MODELS
TFIDF_MODELS = ("tfidf_classifier", "tfidf_ranker")

# LaTeX commands (\frac), words, numbers and single symbols ($, ^, =, ...) are all tokens: in math text the
# operators and one-letter variables carry as much of the topic as the words do.
MATH_TOKEN_PATTERN = r"\\[A-Za-z]+|[A-Za-z]+|\d+|[^\w\s]"

VECTORIZER_DEFAULTS = {
    "ngram_range": (1, 2),
    "min_df": 1,
    "max_features": 200_000,
    "sublinear_tf": True,
    "lowercase": True,
    "token_pattern": MATH_TOKEN_PATTERN,
}
LOGREG_DEFAULTS = {"C": 10.0, "max_iter": 2000}

# Rows each model kind reads (a task's ``input_shape``, tasks.task_types):
#   single: {text_field, label_field} (KPC; MATH: "problem", "subject")
#   pair:   {"text_a", "text_b", "label"} (QRC; QAM with text_b the solution and label 1 or 0)
#   ranker: {"query", "candidates": [...], "relevance": [0..2 per candidate]} (SQR; the old
#           "relevant": [indices] is read as relevance 2 there, see tasks.data.sqr_relevance)


def _vectorizer_params(params: dict) -> dict:
    params = {**VECTORIZER_DEFAULTS, **params}
    params["ngram_range"] = tuple(params["ngram_range"])
    return params


def _vectorizer_state(vectorizer: TfidfVectorizer) -> tuple[list[str], np.ndarray]:
    terms = [None] * len(vectorizer.vocabulary_)
    for term, column in vectorizer.vocabulary_.items():
        terms[column] = term
    return terms, np.asarray(vectorizer.idf_, dtype=np.float64)


def _rebuild_vectorizer(params: dict, terms: list[str], idf: np.ndarray) -> TfidfVectorizer:
    vectorizer = TfidfVectorizer(**_vectorizer_params(params), vocabulary={t: i for i, t in enumerate(terms)})
    vectorizer.idf_ = idf
    return vectorizer


def _write(directory, config: dict, arrays: dict[str, np.ndarray]) -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    config = {"format_version": FORMAT_VERSION, "model_type": MODEL_TYPE, **config}
    (directory / CONFIG_FILE).write_text(json.dumps(config, ensure_ascii=False))
    save_file({name: np.ascontiguousarray(array) for name, array in arrays.items()}, str(directory / ARRAYS_FILE))
    apply_umask(directory / ARRAYS_FILE)
    return directory


def _read(directory, expected_model: str) -> tuple[dict, dict[str, np.ndarray]]:
    directory = local_directory(directory)  # a Hugging Face Hub id is downloaded
    config = json.loads((directory / CONFIG_FILE).read_text())
    if config.get("model") != expected_model:
        raise ValueError(f"{directory} holds a {config.get('model')!r} model, not a {expected_model!r}")
    if config.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{directory}: unsupported format version {config.get('format_version')!r}")
    return config, load_file(str(directory / ARRAYS_FILE))


class PairTfidfFeatures(BaseEstimator, TransformerMixin):
    """(a, b) pairs -> sparse `[v(a); v(b); |v(a) - v(b)|; v(a) * v(b)]`, shape [n_pairs, 4 * vocabulary size]."""

    def __init__(self, vectorizer: TfidfVectorizer):
        self.vectorizer = vectorizer

    def fit(self, pairs, y=None):
        a, b = _split_pairs(pairs)
        self.vectorizer.fit(a + b)
        return self

    def transform(self, pairs):
        a, b = _split_pairs(pairs)
        va, vb = self.vectorizer.transform(a), self.vectorizer.transform(b)
        return sp.hstack([va, vb, abs(va - vb), va.multiply(vb)], format="csr")


def _split_pairs(pairs) -> tuple[list[str], list[str]]:
    pairs = list(pairs)
    if any(len(pair) != 2 for pair in pairs):
        raise ValueError("pair inputs must be (text_a, text_b) tuples")
    return [a for a, _ in pairs], [b for _, b in pairs]


class TfidfClassifier:
    """TF-IDF + logistic regression on one text (`kind="single"`) or on a pair of texts (`kind="pair"`).

    Inputs are a list of strings (single) or a list of (text_a, text_b) pairs; labels may be strings or ints.
    `vectorizer` and `logreg` override `VECTORIZER_DEFAULTS` / `LOGREG_DEFAULTS`.
    """

    def __init__(self, kind: str = "single", vectorizer: dict | None = None, logreg: dict | None = None):
        if kind not in ("single", "pair"):
            raise ValueError(f"kind must be 'single' or 'pair', got {kind!r}")
        self.kind = kind
        self.vectorizer_params = _vectorizer_params(vectorizer or {})
        self.logreg_params = {**LOGREG_DEFAULTS, **(logreg or {})}
        self.pipeline = self._build(TfidfVectorizer(**self.vectorizer_params))

    def _build(self, vectorizer: TfidfVectorizer) -> Pipeline:
        features = ("tfidf", vectorizer) if self.kind == "single" else ("pair_tfidf", PairTfidfFeatures(vectorizer))
        return Pipeline([features, ("logreg", LogisticRegression(**self.logreg_params))])

    @property
    def vectorizer(self) -> TfidfVectorizer:
        step = self.pipeline.steps[0][1]
        return step if self.kind == "single" else step.vectorizer

    @property
    def classes_(self) -> list:
        return self.pipeline.named_steps["logreg"].classes_.tolist()

    def _check_inputs(self, inputs) -> list:
        inputs = list(inputs)
        if not inputs:
            raise ValueError("no inputs")
        if self.kind == "single" and not all(isinstance(text, str) for text in inputs):
            raise ValueError("a 'single' classifier takes a list of strings")
        return inputs

    def fit(self, inputs, labels) -> TfidfClassifier:
        inputs, labels = self._check_inputs(inputs), list(labels)
        if len(inputs) != len(labels):
            raise ValueError(f"{len(inputs)} inputs but {len(labels)} labels")
        if len(set(labels)) < 2:
            raise ValueError(
                f"every example has the label {sorted(set(map(str, labels)))}; a classifier needs two "
                "or more (is the file sorted by label? shuffle it before taking a part)"
            )
        self.pipeline.fit(inputs, labels)
        return self

    def predict(self, inputs) -> list:
        return self.pipeline.predict(self._check_inputs(inputs)).tolist()

    def predict_proba(self, inputs) -> np.ndarray:
        """Class probabilities, columns in the order of `classes_`."""
        return self.pipeline.predict_proba(self._check_inputs(inputs))

    def save_pretrained(self, directory) -> Path:
        logreg = self.pipeline.named_steps["logreg"]
        terms, idf = _vectorizer_state(self.vectorizer)
        config = {
            "model": "tfidf_classifier",
            "kind": self.kind,
            "vectorizer": self.vectorizer_params,
            "logreg": self.logreg_params,
            "classes": self.classes_,
            "terms": terms,
        }
        return _write(directory, config, {"idf": idf, "coef": logreg.coef_, "intercept": logreg.intercept_})

    @classmethod
    def from_pretrained(cls, directory) -> TfidfClassifier:
        config, arrays = _read(directory, "tfidf_classifier")
        model = cls(config["kind"], config["vectorizer"], config["logreg"])
        model.pipeline = model._build(_rebuild_vectorizer(config["vectorizer"], config["terms"], arrays["idf"]))
        logreg = model.pipeline.named_steps["logreg"]
        logreg.classes_ = np.asarray(config["classes"])
        logreg.coef_, logreg.intercept_ = arrays["coef"], arrays["intercept"]
        logreg.n_features_in_ = logreg.coef_.shape[1]
        return model


class TfidfRanker:
    """Ranks candidates by TF-IDF cosine with the query."""

    def __init__(self, vectorizer: dict | None = None):
        self.vectorizer_params = _vectorizer_params(vectorizer or {})
        self.vectorizer = TfidfVectorizer(**self.vectorizer_params)

    def fit(self, texts) -> TfidfRanker:
        texts = list(texts)
        if not texts:
            raise ValueError("no texts to fit the vectorizer on")
        self.vectorizer.fit(texts)
        return self

    def score(self, query: str, candidates: list[str]) -> np.ndarray:
        """Cosine of each candidate with the query: [len(candidates)]."""
        if not candidates:
            raise ValueError("no candidates")
        vectors = self.vectorizer.transform([query, *candidates])
        return (vectors[1:] @ vectors[0].T).toarray().ravel()

    def rank(self, query: str, candidates: list[str]) -> list[int]:
        """Candidate indices, best first; equal scores keep the candidate order."""
        return np.argsort(-self.score(query, candidates), kind="stable").tolist()

    def save_pretrained(self, directory) -> Path:
        terms, idf = _vectorizer_state(self.vectorizer)
        config = {"model": "tfidf_ranker", "vectorizer": self.vectorizer_params, "terms": terms}
        return _write(directory, config, {"idf": idf})

    @classmethod
    def from_pretrained(cls, directory) -> TfidfRanker:
        config, arrays = _read(directory, "tfidf_ranker")
        model = cls(config["vectorizer"])
        model.vectorizer = _rebuild_vectorizer(config["vectorizer"], config["terms"], arrays["idf"])
        return model


def _check_task(task: str) -> str:
    from mathgraph.tasks.task_types import get_task

    return get_task(task).input_shape


def _classification_data(task: str, rows, text_field: str, label_field: str) -> tuple[list, list]:
    rows = list(rows)
    if not rows:
        raise ValueError(f"{task}: no rows")
    try:
        if _check_task(task) == "single":
            return [row[text_field] for row in rows], [row[label_field] for row in rows]
        return [(row["text_a"], row["text_b"]) for row in rows], [row["label"] for row in rows]
    except KeyError as missing:
        raise ValueError(f"{task}: row without field {missing}") from None


def _ranking_data(rows) -> tuple[list[dict], list[tuple[int, ...]]]:
    """The SQR rows and their validated graded relevance (``tasks.data.sqr_relevance``)."""
    from mathgraph.tasks.data import sqr_relevance

    rows = list(rows)
    if not rows:
        raise ValueError("sqr: no rows")
    relevance = []
    for row in rows:
        if not {"query", "candidates"} <= row.keys():
            raise ValueError(f"sqr: row {row.get('id')!r} needs 'query', 'candidates' and 'relevance'")
        try:
            relevance.append(sqr_relevance(row))
        except ValueError as err:
            raise ValueError(f"sqr: row {row.get('id')!r}: {err}") from None
    return rows, relevance


def train_tfidf(
    task: str,
    train_rows,
    *,
    text_field: str = "problem",
    label_field: str = "subject",
    vectorizer: dict | None = None,
    logreg: dict | None = None,
) -> TfidfClassifier | TfidfRanker:
    """Fit the TF-IDF baseline of `task` ("kpc", "qrc", "qam" or "sqr") on its training rows.

    `text_field` / `label_field` name the KPC fields (MATH by default); the other tasks use their fixed fields.
    For SQR the vectorizer is fitted on every query and candidate text of the training rows.
    """
    kind = _check_task(task)
    if kind == "ranker":
        rows, _ = _ranking_data(train_rows)
        return TfidfRanker(vectorizer).fit([text for row in rows for text in (row["query"], *row["candidates"])])
    inputs, labels = _classification_data(task, train_rows, text_field, label_field)
    return TfidfClassifier(kind, vectorizer, logreg).fit(inputs, labels)


def train_tfidf_file(config, train_path: str, output_dir: str, skip_bad: bool = False) -> TfidfClassifier | TfidfRanker:
    """Fit the TF-IDF baseline of a ``tasks.training.finetune.TaskConfig``'s task on a task file (its fields as the
    config names them) and save it to ``output_dir``, where ``tasks.loading.load_model`` finds it."""
    rows = [
        config.task_type.tfidf_row(e, config.text_field, config.label_field) for e in config.load(train_path, skip_bad)
    ]
    model = train_tfidf(config.task, rows, text_field=config.text_field, label_field=config.label_field)
    model.save_pretrained(output_dir)
    return model


def evaluate_tfidf(
    task: str,
    model: TfidfClassifier | TfidfRanker,
    rows,
    *,
    text_field: str = "problem",
    label_field: str = "subject",
    ks=(1, 3, 5),
) -> dict:
    """Metrics of `model` on `rows`: `classification_metrics` for KPC/QRC/QAM, `ranking_metrics` for SQR
    (graded `relevance` per candidate: HR@k, NDCG@k for each k in `ks`, MAP)."""
    kind = _check_task(task)
    if kind == "ranker":
        rows, relevance = _ranking_data(rows)
        scores = [model.score(row["query"], row["candidates"]) for row in rows]
        return ranking_metrics(scores, relevance, ks=ks)
    inputs, labels = _classification_data(task, rows, text_field, label_field)
    return classification_metrics(labels, model.predict(inputs))
