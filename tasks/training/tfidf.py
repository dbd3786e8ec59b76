"""Training and evaluating the TF-IDF models (``models.tfidf``) on the rows of the task files.

Rows each model reads (a task's ``input_shape``):

- single: ``{text_field, label_field}`` (KPC; MATH: ``"problem"``, ``"subject"``);
- pair: ``{"text_a", "text_b", "label"}`` (QRC; QAM with ``text_b`` the solution and label 1 or 0);
- ranker: ``{"query", "candidates": [...], "relevance": [0..2 per candidate]}`` (SQR; the old
  ``"relevant": [indices]`` is read as relevance 2 there, see ``tasks.data.sqr_relevance``).

``train_tfidf(task, rows)`` fits one, ``train_tfidf_file`` fits one on a task file and saves it, and
``evaluate_tfidf(task, model, rows)`` returns the metrics dicts of ``tasks.metrics``.
"""

from __future__ import annotations

from mathgraph.errors import UserError
from mathgraph.models.tfidf import TfidfClassifier, TfidfRanker
from mathgraph.tasks.data import sqr_relevance
from mathgraph.tasks.metrics import classification_metrics, ranking_metrics
from mathgraph.tasks.task_types import get_task, load_examples, task_of


def _check_task(task: str) -> str:
    return get_task(task).input_shape


def _classification_data(task: str, rows, text_field: str, label_field: str) -> tuple[list, list]:
    rows = list(rows)
    if not rows:
        raise UserError(f"{task}: no rows")
    try:
        if _check_task(task) == "single":
            return [row[text_field] for row in rows], [row[label_field] for row in rows]
        return [(row["text_a"], row["text_b"]) for row in rows], [row["label"] for row in rows]
    except KeyError as missing:
        raise UserError(f"{task}: row without field {missing}") from None


def _ranking_data(rows) -> tuple[list[dict], list[tuple[int, ...]]]:
    """The SQR rows and their validated graded relevance (``tasks.data.sqr_relevance``)."""
    rows = list(rows)
    if not rows:
        raise UserError("sqr: no rows")
    relevance = []
    for row in rows:
        if not {"query", "candidates"} <= row.keys():
            raise UserError(f"sqr: row {row.get('id')!r} needs 'query', 'candidates' and 'relevance'")
        try:
            relevance.append(sqr_relevance(row))
        except ValueError as err:
            raise UserError(f"sqr: row {row.get('id')!r}: {err}") from None
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
    """Fit the TF-IDF model of `task` ("kpc", "qrc", "qam" or "sqr") on its training rows.

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
    """Fit the TF-IDF model of a ``models.task_model.TaskConfig``'s task on a task file (its fields as the
    config names them) and save it to ``output_dir``, where ``mathgraph.registry.load`` finds it."""
    task = task_of(config)
    rows = [
        task.tfidf_row(e, config.text_field, config.label_field) for e in load_examples(config, train_path, skip_bad)
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


__all__ = ["train_tfidf", "train_tfidf_file", "evaluate_tfidf"]
