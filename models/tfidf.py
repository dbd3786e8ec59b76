"""TF-IDF models for every task: logistic regression for KPC/QRC/QAM, cosine ranking for SQR.

- `TfidfClassifier(kind="single")`: a `TfidfVectorizer` and a `LogisticRegression` on one text (KPC).
- `TfidfClassifier(kind="pair")`: the same on a pair of texts (QRC, QAM). One vectorizer, fitted on both sides,
  maps a pair (a, b) to the sparse concatenation `[v(a); v(b); |v(a) - v(b)|; v(a) * v(b)]`: the two texts, what
  differs between them and what they share, so that a linear model can tell "same problem, numbers changed"
  from "an extra sentence" or "unrelated".
- `TfidfRanker`: scores SQR candidates by the cosine between their TF-IDF vector and the query's (the vectors
  are L2-normalised, so the cosine is a dot product); the vectorizer is fitted on the training texts only.

`fit` fits with scikit-learn; every prediction, of a fitted or a loaded model, runs in NumPy alone
(`models.tfidf_features`: the same vectors and probabilities), so that loading and predicting import neither
scikit-learn nor PyTorch.

Models are saved without pickle: `config.json` holds the hyperparameters, the vocabulary (terms in column order)
and the class labels; `arrays.safetensors` holds the idf weights and the logistic regression coefficients.

`TfidfModel.from_pretrained(directory)` loads whichever of the two a directory holds, and `TfidfPredictor`
gives either the `predict(inputs)` of a task model (`models.task_io`). Training and evaluation on task files
are `tasks.training.tfidf` (`train_tfidf`, `evaluate_tfidf`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from mathgraph.files import apply_umask
from mathgraph.models.task_io import check_input, ranking_result
from mathgraph.models.tfidf_features import LogisticRegressionScores, TfidfFeatures, dot, pair_row
from mathgraph.registry import read_config, resolve
from mathgraph.task_specs import TaskSpec, task_spec

CONFIG_FILE = "config.json"
ARRAYS_FILE = "arrays.safetensors"
FORMAT_VERSION = 1
MODEL_TYPE = "tfidf"  # config.json's model_type (mathgraph.registry); "model" says which of TFIDF_MODELS
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
#           "relevant": [indices] is read as relevance 2 there, see tasks.data.sqr_relevance);
#           tasks.training.tfidf reads them


def _vectorizer_params(params: dict) -> dict:
    params = {**VECTORIZER_DEFAULTS, **params}
    params["ngram_range"] = tuple(params["ngram_range"])
    return params


def _fit_vectorizer(params: dict, texts: list[str]):
    """A scikit-learn ``TfidfVectorizer`` fitted on ``texts``, its ``TfidfFeatures`` and the rows of ``texts``
    (``fit_transform``'s, which a classifier is fitted on: the coefficients depend on their exact values)."""
    from sklearn.feature_extraction.text import TfidfVectorizer  # fitting only: predictions run without it

    vectorizer = TfidfVectorizer(**params)
    matrix = vectorizer.fit_transform(texts)
    terms = [None] * len(vectorizer.vocabulary_)
    for term, column in vectorizer.vocabulary_.items():
        terms[column] = term
    return vectorizer, TfidfFeatures(params, terms, np.asarray(vectorizer.idf_, dtype=np.float64)), matrix


def _write(directory, config: dict, arrays: dict[str, np.ndarray]) -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    config = {"format_version": FORMAT_VERSION, "model_type": MODEL_TYPE, **config}
    (directory / CONFIG_FILE).write_text(json.dumps(config, ensure_ascii=False))
    save_file({name: np.ascontiguousarray(array) for name, array in arrays.items()}, str(directory / ARRAYS_FILE))
    apply_umask(directory / ARRAYS_FILE)
    return directory


def _read(directory, expected_model: str) -> tuple[dict, dict[str, np.ndarray]]:
    directory = resolve(directory)  # a Hugging Face Hub id is downloaded
    config = read_config(directory)
    if config.get("model") != expected_model:
        raise ValueError(f"{directory} holds a {config.get('model')!r} model, not a {expected_model!r}")
    if config.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{directory}: unsupported format version {config.get('format_version')!r}")
    return config, load_file(str(directory / ARRAYS_FILE))


def _split_pairs(pairs) -> tuple[list[str], list[str]]:
    pairs = list(pairs)
    if any(len(pair) != 2 for pair in pairs):
        raise ValueError("pair inputs must be (text_a, text_b) tuples")
    return [a for a, _ in pairs], [b for _, b in pairs]


class TfidfClassifier:
    """TF-IDF + logistic regression on one text (`kind="single"`) or on a pair of texts (`kind="pair"`).

    Inputs are a list of strings (single) or a list of (text_a, text_b) pairs; labels may be strings or ints.
    `vectorizer` and `logreg` override `VECTORIZER_DEFAULTS` / `LOGREG_DEFAULTS`. Once fitted or loaded:
    `features` (the vectorizer's transform), `scores` (the logistic regression's) and `classes_`, `coef_`,
    `intercept_` as scikit-learn named them.
    """

    def __init__(self, kind: str = "single", vectorizer: dict | None = None, logreg: dict | None = None):
        if kind not in ("single", "pair"):
            raise ValueError(f"kind must be 'single' or 'pair', got {kind!r}")
        self.kind = kind
        self.vectorizer_params = _vectorizer_params(vectorizer or {})
        self.logreg_params = {**LOGREG_DEFAULTS, **(logreg or {})}
        self.features: TfidfFeatures | None = None

    def _fitted(self, features: TfidfFeatures, classes: list, coef: np.ndarray, intercept: np.ndarray):
        width = len(features) * (1 if self.kind == "single" else 4)
        if coef.ndim != 2 or coef.shape[1] != width:
            raise ValueError(f"coefficients of shape {coef.shape} for {width} features")
        self.features, self.classes_, self.coef_, self.intercept_ = features, classes, coef, intercept
        options = {name: self.logreg_params[name] for name in ("multi_class", "solver") if name in self.logreg_params}
        self.scores = LogisticRegressionScores(coef, intercept, len(classes), **options)
        return self

    def _check_inputs(self, inputs) -> list:
        inputs = list(inputs)
        if not inputs:
            raise ValueError("no inputs")
        if self.kind == "single" and not all(isinstance(text, str) for text in inputs):
            raise ValueError("a 'single' classifier takes a list of strings")
        return inputs

    def fit(self, inputs, labels) -> TfidfClassifier:
        from sklearn.linear_model import LogisticRegression  # fitting only: predictions run without it

        inputs, labels = self._check_inputs(inputs), list(labels)
        if len(inputs) != len(labels):
            raise ValueError(f"{len(inputs)} inputs but {len(labels)} labels")
        if len(set(labels)) < 2:
            raise ValueError(
                f"every example has the label {sorted(set(map(str, labels)))}; a classifier needs two "
                "or more (is the file sorted by label? shuffle it before taking a part)"
            )
        if self.kind == "single":
            _, features, matrix = _fit_vectorizer(self.vectorizer_params, inputs)
        else:
            a, b = _split_pairs(inputs)
            vectorizer, features, _ = _fit_vectorizer(self.vectorizer_params, a + b)
            matrix = _pair_matrix(vectorizer.transform(a), vectorizer.transform(b))
        logreg = LogisticRegression(**self.logreg_params).fit(matrix, labels)
        return self._fitted(features, logreg.classes_.tolist(), logreg.coef_, logreg.intercept_)

    def _rows(self, inputs) -> list:
        if self.features is None:
            raise ValueError("the classifier is not fitted: fit it, or load one with from_pretrained")
        inputs = self._check_inputs(inputs)
        if self.kind == "single":
            return self.features.transform(inputs)
        a, b = _split_pairs(inputs)
        width = len(self.features)
        return [pair_row(va, vb, width) for va, vb in zip(self.features.transform(a), self.features.transform(b))]

    def predict(self, inputs) -> list:
        return [self.classes_[i] for i in self.scores.predict(self._rows(inputs))]

    def predict_proba(self, inputs) -> np.ndarray:
        """Class probabilities, columns in the order of `classes_`."""
        return self.scores.probabilities(self._rows(inputs))

    def save_pretrained(self, directory) -> Path:
        config = {
            "model": "tfidf_classifier",
            "kind": self.kind,
            "vectorizer": self.vectorizer_params,
            "logreg": self.logreg_params,
            "classes": self.classes_,
            "terms": self.features.terms,
        }
        arrays = {"idf": self.features.idf, "coef": self.coef_, "intercept": self.intercept_}
        return _write(directory, config, arrays)

    @classmethod
    def from_pretrained(cls, directory, device=None) -> TfidfClassifier:
        """The classifier saved in ``directory`` (``device`` is not used: it runs on the CPU)."""
        config, arrays = _read(directory, "tfidf_classifier")
        model = cls(config["kind"], config["vectorizer"], config["logreg"])
        features = TfidfFeatures(model.vectorizer_params, config["terms"], arrays["idf"])
        return model._fitted(features, list(config["classes"]), arrays["coef"], arrays["intercept"])


def _pair_matrix(va, vb):
    """The scikit-learn rows ``[v(a); v(b); |v(a) - v(b)|; v(a) * v(b)]`` the pair classifier is fitted on."""
    import scipy.sparse as sp

    return sp.hstack([va, vb, abs(va - vb), va.multiply(vb)], format="csr")


class TfidfRanker:
    """Ranks candidates by TF-IDF cosine with the query."""

    def __init__(self, vectorizer: dict | None = None):
        self.vectorizer_params = _vectorizer_params(vectorizer or {})
        self.features: TfidfFeatures | None = None

    def fit(self, texts) -> TfidfRanker:
        texts = list(texts)
        if not texts:
            raise ValueError("no texts to fit the vectorizer on")
        _, self.features, _ = _fit_vectorizer(self.vectorizer_params, texts)
        return self

    def score(self, query: str, candidates: list[str]) -> np.ndarray:
        """Cosine of each candidate with the query: [len(candidates)]."""
        if not candidates:
            raise ValueError("no candidates")
        if self.features is None:
            raise ValueError("the ranker is not fitted: fit it, or load one with from_pretrained")
        query_row, *rows = self.features.transform([query, *candidates])
        return np.array([dot(row, query_row) for row in rows], dtype=np.float64)

    def rank(self, query: str, candidates: list[str]) -> list[int]:
        """Candidate indices, best first; equal scores keep the candidate order."""
        return np.argsort(-self.score(query, candidates), kind="stable").tolist()

    def save_pretrained(self, directory) -> Path:
        config = {"model": "tfidf_ranker", "vectorizer": self.vectorizer_params, "terms": self.features.terms}
        return _write(directory, config, {"idf": self.features.idf})

    @classmethod
    def from_pretrained(cls, directory, device=None) -> TfidfRanker:
        """The ranker saved in ``directory`` (``device`` is not used: it runs on the CPU)."""
        config, arrays = _read(directory, "tfidf_ranker")
        model = cls(config["vectorizer"])
        model.features = TfidfFeatures(model.vectorizer_params, config["terms"], arrays["idf"])
        return model


class TfidfModel:
    """What loads a TF-IDF directory (``model_type`` ``tfidf``): ``from_pretrained`` gives the
    ``TfidfClassifier`` or ``TfidfRanker`` its ``config.json`` names."""

    MODELS = {"tfidf_classifier": TfidfClassifier, "tfidf_ranker": TfidfRanker}

    @classmethod
    def from_pretrained(cls, directory, device=None) -> TfidfClassifier | TfidfRanker:
        """The TF-IDF model saved in ``directory`` (``device`` is not used: it runs on the CPU)."""
        directory = resolve(directory)  # a Hugging Face Hub id is downloaded
        model = read_config(directory).get("model")
        if model not in cls.MODELS:
            raise ValueError(f"{directory} holds a {model!r} model, not one of {TFIDF_MODELS}")
        return cls.MODELS[model].from_pretrained(directory)


class TfidfPredictor:
    """A TF-IDF model with the ``predict(inputs)`` of a ``TaskModel`` (``models.task_io``): class
    probabilities from ``predict_proba``, or the ranker's cosine scores."""

    def __init__(self, task: str | TaskSpec, model):
        self.task = task_spec(task) if isinstance(task, str) else task
        self.model = model
        kind = "ranker" if isinstance(model, TfidfRanker) else model.kind
        if kind != self.task.input_shape:
            raise ValueError(
                f"a TF-IDF {kind} model cannot predict {self.task.name} (that needs a {self.task.input_shape} model)"
            )

    def predict(self, inputs, batch_size: int = 32, graphs=None, rows=None) -> list[dict]:
        """Results of ``inputs`` in the format of ``TaskModel.predict``: TF-IDF reads the texts alone, so
        ``batch_size``, ``graphs`` and ``rows`` (the predictor interface's) are not used."""
        checked = [check_input(self.task, item, i) for i, item in enumerate(inputs)]
        if not checked:
            return []
        if self.task.input_shape == "ranker":
            return [ranking_result(self.model.score(query, list(candidates)).tolist()) for query, candidates in checked]
        texts = [text for (text,) in checked] if self.task.input_shape == "single" else checked
        classes = self.model.classes_
        return [
            {"label": classes[int(row.argmax())], "probabilities": dict(zip(classes, row.tolist()))}
            for row in self.model.predict_proba(texts)
        ]


__all__ = [
    "TfidfClassifier",
    "TfidfRanker",
    "TfidfModel",
    "TfidfPredictor",
    "VECTORIZER_DEFAULTS",
    "LOGREG_DEFAULTS",
    "MODEL_TYPE",
    "TFIDF_MODELS",
    "CONFIG_FILE",
    "ARRAYS_FILE",
]
