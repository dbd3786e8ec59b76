"""One prediction printed for a person (``mathgraph predict TASK TEXT...``): the label and its likeliest
probabilities, or the ranked candidates. The predictions of a bank (``--input``) are a batch job,
``mathgraph.api.prediction_job``."""

from __future__ import annotations

from mathgraph.labels import label_text


def format_prediction(item, result: dict, top: int = 5, task: str | None = None) -> str:
    """A result as readable text: the label and the ``top`` probabilities, or the ranked candidates; with
    ``task``, a coded label says what it means (QAM: ``1 (matches)``, ``mathgraph.labels``)."""
    if "ranking" in result:
        candidates = item[1]
        lines = ["ranking (best first):"]
        for rank, j in enumerate(result["ranking"], 1):
            text = " ".join(str(candidates[j]).split())
            lines.append(f"{rank:3d}. {result['scores'][j]:8.4f}  [{j}] {text[:100]}")
        return "\n".join(lines)
    best = sorted(result["probabilities"].items(), key=lambda kv: -kv[1])[: max(top, 1)]
    width = max(len(label_text(task, label)) for label, _ in best)
    lines = [f"label: {label_text(task, result['label'])}", f"probabilities (top {len(best)}):"]
    lines.extend(f"  {label_text(task, label):<{width}}  {p:.4f}" for label, p in best)
    return "\n".join(lines)


__all__ = ["format_prediction"]
