"""The alignment model: gradient-boosted trees on what differs between two problems.

The pair tasks ask what changed between two problems, and the alignment of their
graphs (``parsers.compare``) says it in named numbers: quantities kept or changed,
their written form, sentences inserted or deleted, whether the question changed.
A scikit-learn ``HistGradientBoostingClassifier`` on those numbers is a strong
model of its own and a member of the late fusion (``models.late_fusion``) with the
neural model and TF-IDF:

- QRC: ``align_problems(a, b)`` features -> the relation (9 labels);
- QAM: ``align_solution(question, solution)`` features (does the solution compute
  with this question's quantities?) -> 1 or 0;
- SQR: ``align_problems(query, candidate)`` features -> relevance 0, 1 or 2; a list is
  ranked by the expected gain ``sum_r p(r) (2^r - 1)``, what NDCG rewards.

Saved without pickle: ``config.json`` (task, labels, feature names, sklearn
parameters) and ``arrays.safetensors`` (every tree's nodes); ``predict`` walks the
trees in NumPy, so loading needs no scikit-learn object at all (and gives the
same probabilities as the fitted estimator, tested).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from mathgraph.files import apply_umask
from mathgraph.models.alignment_features import alignment_features, available_features
from mathgraph.models.task_io import aligned_with, ranking_result
from mathgraph.registry import read_config, resolve
from mathgraph.task_specs import TASK_SPECS

MODEL_TYPE = "structure"
CONFIG_FILE = "config.json"
ARRAYS_FILE = "arrays.safetensors"
FORMAT_VERSION = 1
STRUCTURE_TASKS = tuple(name for name, task in TASK_SPECS.items() if task.input_shape != "single")  # the pair tasks
DEFAULT_PARAMS = {
    "max_iter": 300,
    "learning_rate": 0.05,
    "max_leaf_nodes": 15,
    "min_samples_leaf": 5,
    "l2_regularization": 1.0,
    "random_state": 0,
}
_NODE_FIELDS = ("value", "feature_idx", "num_threshold", "missing_go_to_left", "left", "right", "is_leaf")


class AlignmentModel:
    """Gradient-boosted trees on alignment features, for ``task`` in ``STRUCTURE_TASKS``.

    ``fit(inputs, labels)`` and ``predict(inputs)`` take what the task's predictors take:
    QRC/QAM ``(text_a, text_b)`` pairs with labels, SQR ``(query, candidates)`` lists with
    per-candidate relevance lists. ``predict`` returns ``{"label", "probabilities"}`` per pair or
    ``{"scores", "ranking"}`` per list, like every predictor (``models.task_io``).
    """

    def __init__(self, task: str, params: dict | None = None):
        if task not in STRUCTURE_TASKS:
            raise ValueError(f"the alignment model serves {STRUCTURE_TASKS}, not {task!r}")
        self.task = task
        self.aligned_with = aligned_with(task)
        self.ranks = not TASK_SPECS[task].classifies  # SQR: relevance per candidate, a ranking per list
        self.params = {**DEFAULT_PARAMS, **(params or {})}
        self.labels: list = []
        self.trees: dict[str, np.ndarray] = {}
        # the features it reads: all this mathgraph computes when fitted here (a QAM model also reads the solution
        # graph's); a saved model keeps its own, so models fitted on fewer features still load
        self.features: tuple[str, ...] = available_features(self.aligned_with)
        self.parse = None  # texts -> graphs; None: the graph cache

    # ------------------------------------------------------------------ fit / predict
    def _pairs(self, inputs) -> tuple[list[tuple[str, str]], list[int]]:
        """The (a, b) pairs behind ``inputs`` and, for SQR, how many belong to each list."""
        if not self.ranks:
            return [tuple(p) for p in inputs], []
        pairs, sizes = [], []
        for item in inputs:
            if isinstance(item, dict) and {"query", "candidates"} <= set(item):
                item = (item["query"], item["candidates"])
            if not (isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[1], (list, tuple))):
                raise ValueError("sqr inputs are (query, [candidate, ...]) or {'query', 'candidates'} lists")
            pairs += [(item[0], c) for c in item[1]]
            sizes.append(len(item[1]))
        return pairs, sizes

    def fit(self, inputs, labels, show_progress: bool = False) -> AlignmentModel:
        """Fit on ``inputs`` and their ``labels`` (SQR: a relevance list per input list).

        SQR also learns that a problem is its own most similar problem: each query paired with itself
        is added with relevance 2 (the lists hold only variants, so a duplicate in a search index would
        otherwise be scored by guesswork)."""
        from sklearn.ensemble import HistGradientBoostingClassifier

        inputs, labels = list(inputs), list(labels)
        pairs, _ = self._pairs(inputs)
        if self.ranks:
            pairs += [(query, query) for query in dict.fromkeys(query for query, _ in pairs)]
            labels.append([2] * (len(pairs) - sum(len(rel) for rel in labels)))
        targets = [r for rel in labels for r in rel] if self.ranks else list(labels)
        if len(targets) != len(pairs):
            raise ValueError(f"{len(pairs)} pairs but {len(targets)} labels")
        if len(set(map(str, targets))) < 2:
            raise ValueError(f"the alignment model needs at least two labels to learn from, got {set(targets)}")
        self.features = available_features(self.aligned_with)
        features = alignment_features(self.aligned_with, pairs, self.parse, show_progress, self.features)
        # sklearn sorts the classes as strings; the labels keep their own type (QAM, SQR: int)
        named = {str(t): t for t in targets}
        estimator = HistGradientBoostingClassifier(**self.params).fit(features, [str(t) for t in targets])
        self.labels = [named[c] for c in estimator.classes_]
        self.trees = _tree_arrays(estimator)
        return self

    def predict_proba(self, features: np.ndarray) -> np.ndarray:
        """``[n, n_labels]`` probabilities of feature rows (label order: ``self.labels``)."""
        if not self.trees:
            raise ValueError("this alignment model is not fitted")
        raw = self.trees["baseline"][None, :] + _tree_sums(self.trees, features)
        if raw.shape[1] == 1:  # binary: one logit for the second class
            positive = 1.0 / (1.0 + np.exp(-raw[:, 0]))
            return np.stack([1.0 - positive, positive], axis=1)
        raw = raw - raw.max(axis=1, keepdims=True)
        exp = np.exp(raw)
        return exp / exp.sum(axis=1, keepdims=True)

    def predict(self, inputs, batch_size: int = 32, graphs=None, rows=None) -> list[dict]:
        """Results of ``inputs`` in input order (``batch_size`` is accepted for the predictor interface).
        ``rows``: the alignment rows already computed (``models.alignment_features.AlignmentRows``); ``graphs``:
        a ``parsers.graph_cache.ParsedGraphs`` the problems of the other pairs are parsed through (None:
        ``self.parse``, else the default graph cache)."""
        inputs = list(inputs)
        pairs, sizes = self._pairs(inputs)
        parse = self.parse if self.parse is not None or graphs is None else graphs.parse
        probabilities = (
            self.predict_proba(alignment_features(self.aligned_with, pairs, parse, names=self.features, rows=rows))
            if pairs
            else np.zeros((0, len(self.labels)))
        )
        if not self.ranks:
            return [
                {
                    "label": self.labels[int(row.argmax())],
                    "probabilities": {label: float(p) for label, p in zip(self.labels, row)},
                }
                for row in probabilities
            ]
        gains = probabilities @ np.array([2.0 ** int(label) - 1 for label in self.labels])
        results, start = [], 0
        for size in sizes:
            results.append(ranking_result(gains[start : start + size].tolist()))
            start += size
        return results

    # ------------------------------------------------------------------ save / load
    def save_pretrained(self, directory) -> Path:
        """Write ``config.json`` and ``arrays.safetensors`` into ``directory`` (no pickle)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        config = {
            "model_type": MODEL_TYPE,
            "format_version": FORMAT_VERSION,
            "task": self.task,
            "labels": self.labels,
            "features": list(self.features),
            "params": self.params,
        }
        (directory / CONFIG_FILE).write_text(json.dumps(config, indent=1))
        save_file({k: np.ascontiguousarray(v) for k, v in self.trees.items()}, str(directory / ARRAYS_FILE))
        apply_umask(directory / ARRAYS_FILE)
        return directory

    @classmethod
    def from_pretrained(cls, directory, device=None) -> AlignmentModel:
        """A model written by ``save_pretrained``; a config of another kind or other features is a clear error
        (``device`` is not used: the trees are walked in NumPy)."""
        directory = resolve(directory)  # a Hugging Face Hub id is downloaded
        try:
            config = read_config(directory)
            arrays = load_file(str(directory / ARRAYS_FILE))
        except Exception as error:  # a missing or truncated file: OSError, JSONDecodeError, safetensors' own errors
            raise ValueError(f"{directory} holds no readable alignment model: {error}") from None
        if config.get("model_type") != MODEL_TYPE or config.get("format_version") != FORMAT_VERSION:
            raise ValueError(
                f"{directory} holds a {config.get('model_type')!r} model, not a alignment model "
                f"of format {FORMAT_VERSION}"
            )
        model = cls(config["task"], config["params"])
        if not set(config["features"]) <= set(available_features(model.aligned_with)):
            raise ValueError(
                f"{directory} was trained on other alignment features than this mathgraph computes; train it again"
            )
        model.labels, model.trees, model.features = config["labels"], dict(arrays), tuple(config["features"])
        return model


def _tree_arrays(estimator) -> dict[str, np.ndarray]:
    """Every tree's nodes as flat arrays: ``tree_class[t]`` (which logit tree ``t`` adds to),
    ``tree_start[t]`` (its first node), and per node ``_NODE_FIELDS`` (children are tree-local)."""
    nodes, tree_class, tree_start, offset = [], [], [], 0
    for iteration in estimator._predictors:
        for k, predictor in enumerate(iteration):
            nodes.append(predictor.nodes)
            tree_class.append(k)
            tree_start.append(offset)
            offset += len(predictor.nodes)
    if any(len(p.raw_left_cat_bitsets) for it in estimator._predictors for p in it):
        raise ValueError("categorical splits are not supported by the alignment model's tree walker")
    stacked = np.concatenate(nodes)
    arrays = {name: np.asarray(stacked[name]) for name in _NODE_FIELDS}
    arrays["value"] = arrays["value"].astype(np.float64)
    arrays["num_threshold"] = arrays["num_threshold"].astype(np.float64)
    for name in ("feature_idx", "left", "right"):
        arrays[name] = arrays[name].astype(np.int64)
    for name in ("missing_go_to_left", "is_leaf"):
        arrays[name] = arrays[name].astype(np.uint8)
    arrays["tree_class"] = np.asarray(tree_class, dtype=np.int64)
    arrays["tree_start"] = np.asarray(tree_start, dtype=np.int64)
    arrays["baseline"] = np.asarray(estimator._baseline_prediction, dtype=np.float64).reshape(-1)
    return arrays


def _tree_sums(trees: dict[str, np.ndarray], features: np.ndarray) -> np.ndarray:
    """``[n, n_logits]``: each row's leaf values summed per logit, all rows walked down each tree at once."""
    features = np.asarray(features, dtype=np.float64)
    n = len(features)
    sums = np.zeros((n, len(trees["baseline"])))
    rows = np.arange(n)
    for tree, start in enumerate(trees["tree_start"]):
        node = np.full(n, start)
        while True:
            leaf = trees["is_leaf"][node].astype(bool)
            if leaf.all():
                break
            value = features[rows, trees["feature_idx"][node]]
            go_left = np.where(
                np.isnan(value), trees["missing_go_to_left"][node].astype(bool), value <= trees["num_threshold"][node]
            )
            child = start + np.where(go_left, trees["left"][node], trees["right"][node])
            node = np.where(leaf, node, child)
        sums[:, trees["tree_class"][tree]] += trees["value"][node]
    return sums


def close_variant_scores(
    model: AlignmentModel, lists: list[tuple[str, list[str]]], cosines: list, min_cosine: float
) -> list[np.ndarray | None]:
    """An SQR alignment model's scores of each ``(query, candidates)`` list, where only the candidates at least
    ``min_cosine`` close to their query (``cosines``: one array per list) are scored and the others score 0;
    None for a list with no candidate that close.

    The model judges whether a candidate is a variant of the query: it was fitted on graded GSM-Plus lists,
    where the relevant candidates are rewrites of the query and close to it. A candidate far from the query is
    outside what it learnt (on MATH problems it rates unrelated problems as variants), so it is not asked."""
    close = [np.flatnonzero(np.asarray(c) >= min_cosine) for c in cosines]
    asked = [(query, [candidates[i] for i in rows]) for (query, candidates), rows in zip(lists, close) if len(rows)]
    results = iter(model.predict(asked) if asked else [])
    scores = []
    for (_, candidates), rows in zip(lists, close):
        if not len(rows):
            scores.append(None)
            continue
        list_scores = np.zeros(len(candidates))
        list_scores[rows] = next(results)["scores"]
        scores.append(list_scores)
    return scores


__all__ = ["AlignmentModel", "STRUCTURE_TASKS", "MODEL_TYPE", "close_variant_scores"]
