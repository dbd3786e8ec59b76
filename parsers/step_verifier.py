"""A small learned step verifier: the probability that a line of a worked solution is its first wrong step.

``StepVerifier.load()`` reads ``mathgraph/data/step_verifier.json`` (a logistic regression over
``STEP_FEATURES``: its feature means and scales, coefficients, intercept, a Platt calibration and the
decision threshold) and predicts with NumPy alone; ``line_probabilities(check)`` gives one probability per
line of a checked solution (``parsers.solution_check.SolutionCheck``). ``check_solution`` reports a line as
a ``suspect_step`` error where the probability reaches the threshold and no rule found an error there.

The features of a line (``line_features``) are what the rules found on it (errors by kind, the claims of
its LaTeX math that hold, fail or cannot be decided, calculations that check out), where it stands (its
place among the lines, first, second, third, last; before or at the first line a rule flags), what it
writes (its length, the numbers it writes, those no earlier line nor the problem wrote, the share of its
words the problem uses, a boxed answer), lexical cues of a claim made without work ("assume", "must",
"only", "all", "maximum", "cannot", "therefore", "clearly"), the solution correcting itself ("wait",
"however", "let's try", "mistake": on this line, anywhere, on a later line or the next one), the share of
the solution's claims that cannot be decided, and whether substituting the solution's solved values back
into its equations (``solution_claims.substituted_back``) points at this line.

Training (``fit``, which imports scikit-learn) reads labelled lines: ``benchmarks/process_errors.py
--fit-verifier`` fits it on the ProcessBench dev halves' real first wrong steps (1 on the lines of that
step, 0 on the lines before it and on every line of a right solution) and chooses the calibration and the
threshold on out-of-fold dev scores. ``inject_step_error`` makes step errors in right solutions (a stated
result changed, an operation changed, a number in a statement changed, a line taken from another
solution), for training on made errors where no labels are.
"""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mathgraph.parsers.solution_claims import substituted_back

__all__ = ["STEP_FEATURES", "StepVerifier", "line_features", "inject_step_error", "fit", "WEIGHTS"]

WEIGHTS = Path(__file__).resolve().parents[1] / "mathgraph" / "data" / "step_verifier.json"
_CUES = {
    "cue_assume": r"\b(?:assum|suppos|guess|let's say|must be|should be)",
    "cue_only": r"\b(?:only|all|every|each|always|never|none)\b",
    "cue_extreme": r"\b(?:maxim|minim|largest|smallest|greatest|least|at most|at least)",
    "cue_negation": r"\b(?:not|cannot|can't|impossible|no)\b",
    "cue_conclude": r"\b(?:therefore|thus|hence|so|conclude)\b",
    "cue_formula": r"\b(?:formula|theorem|rule|property|identity)\b",
    "cue_count": r"\b(?:ways|cases|combinations|possibilit|choices|arrangements)\b",
    "cue_hedge": r"\b(?:approximately|roughly|about|probably|seems|likely|i hope)\b",
    "cue_claim": r"\b(?:clearly|obviously|since|must)\b",
}
_SELF_CORRECTION = re.compile(
    r"\b(?:wait|however|upon further|re-?evaluat|re-?check|mistake|let's try|let us try|adjust|actually|instead"
    r"|reconsider|contradict|not possible|oops|incorrect|error|revisit|alternatively)\b"
)
STEP_FEATURES = (
    "rule_arithmetic",
    "rule_unexplained",
    "rule_false_claim",
    "rule_answer_mismatch",
    "claims_hold",
    "claims_fail",
    "claims_unknown",
    "calculations",
    "calculations_wrong",
    "position",
    "log_index",
    "is_first",
    "is_last",
    "log_chars",
    "numbers",
    "numbers_new",
    "share_numbers_new",
    "share_words_in_problem",
    "symbolic",
    *_CUES,
    "is_second",
    "is_third",
    "log_lines",
    "self_correction",
    "solution_self_corrects",
    "before_self_correction",
    "just_before_self_correction",
    "before_first_rule_error",
    "at_first_rule_error",
    "share_claims_unknown",
    "writes_boxed",
    "substituted_back",
)
_NUMBER_RE = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")
_WORD_RE = re.compile(r"[a-z]{3,}")
_CUE_RES = {name: re.compile(pattern) for name, pattern in _CUES.items()}


def line_features(check) -> tuple[list[int], np.ndarray]:
    """The solution's lines (0-based numbers of its non-blank lines) and a ``(lines, STEP_FEATURES)`` array."""
    graph = check.graph
    lines = [step.index for step in graph.steps]
    problem_words = set(_WORD_RE.findall(graph.problem.text.lower()))
    seen = set(_NUMBER_RE.findall(graph.problem.text))
    errors: dict[int, dict[str, int]] = {}
    for finding in check.findings:
        if finding.severity == "error" and finding.step is not None and finding.kind != "suspect_step":
            errors.setdefault(finding.step, {}).setdefault(finding.kind, 0)
            errors[finding.step][finding.kind] += 1
    claims: dict[int, list[str]] = {}
    for claim in check.claims:
        claims.setdefault(claim.line, []).append(claim.verdict)
    calculations: dict[int, list] = {}
    for line, calculation in graph.calculations():
        calculations.setdefault(line, []).append(calculation)
    symbolic = float(bool(check.claims) or any(c.form == "latex" for _, c in graph.calculations()))
    corrections = [k for k, step in enumerate(graph.steps) if _SELF_CORRECTION.search(step.text.lower())]
    first_correction = corrections[0] if corrections else None
    ruled = [k for k, step in enumerate(graph.steps) if step.index in errors]
    first_rule = ruled[0] if ruled else None
    verdicts_all = [claim.verdict for claim in check.claims]
    decided = sum(v != "unknown" for v in verdicts_all)
    share_unknown = (len(verdicts_all) - decided) / len(verdicts_all) if verdicts_all else 0.0
    substituted = set(substituted_back(graph.solution))
    rows = []
    n = max(len(lines), 1)
    for k, step in enumerate(graph.steps):
        text = step.text
        lowered = text.lower()
        numbers = _NUMBER_RE.findall(text)
        new = [v for v in numbers if v not in seen]
        seen.update(numbers)
        words = _WORD_RE.findall(lowered)
        found = errors.get(step.index, {})
        verdicts = claims.get(step.index, [])
        calcs = calculations.get(step.index, [])
        values = {
            "rule_arithmetic": min(found.get("arithmetic", 0), 3),
            "rule_unexplained": min(found.get("unexplained_operand", 0), 3),
            "rule_false_claim": min(found.get("false_claim", 0), 3),
            "rule_answer_mismatch": min(found.get("answer_mismatch", 0), 1),
            "claims_hold": math.log1p(verdicts.count("holds")),
            "claims_fail": min(verdicts.count("fails"), 3),
            "claims_unknown": math.log1p(verdicts.count("unknown")),
            "calculations": math.log1p(len(calcs)),
            "calculations_wrong": min(sum(c.checks_out is False for c in calcs), 3),
            "position": k / n,
            "log_index": math.log1p(k),
            "is_first": float(k == 0),
            "is_last": float(k == len(lines) - 1),
            "log_chars": math.log1p(len(text)),
            "numbers": math.log1p(len(numbers)),
            "numbers_new": math.log1p(len(new)),
            "share_numbers_new": len(new) / len(numbers) if numbers else 0.0,
            "share_words_in_problem": sum(w in problem_words for w in words) / len(words) if words else 0.0,
            "symbolic": symbolic,
            "is_second": float(k == 1),
            "is_third": float(k == 2),
            "log_lines": math.log1p(len(lines)),
            "self_correction": float(k in corrections),
            "solution_self_corrects": float(bool(corrections)),
            "before_self_correction": float(first_correction is not None and k < first_correction),
            "just_before_self_correction": float(first_correction is not None and k == first_correction - 1),
            "before_first_rule_error": float(first_rule is not None and k < first_rule),
            "at_first_rule_error": float(k == first_rule),
            "share_claims_unknown": share_unknown,
            "writes_boxed": float("boxed" in text),
            "substituted_back": float(step.index in substituted),
        }
        values.update({name: float(bool(pattern.search(lowered))) for name, pattern in _CUE_RES.items()})
        rows.append([float(values[name]) for name in STEP_FEATURES])
    return lines, np.asarray(rows, dtype=np.float64).reshape(len(rows), len(STEP_FEATURES))


@dataclass(frozen=True)
class StepVerifier:
    """A fitted verifier (module docstring): standardisation, logistic coefficients, Platt calibration
    (``a * score + b``) and the decision ``threshold`` on the calibrated probability."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    platt: tuple[float, float] = (1.0, 0.0)
    threshold: float = 1.0
    info: dict | None = None

    @classmethod
    def load(cls, path: str | Path = WEIGHTS) -> StepVerifier:
        """Read a verifier saved by ``save``; a clear error when its features are not ``STEP_FEATURES``."""
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if tuple(data["features"]) != STEP_FEATURES:
            raise ValueError(f"{path}: the verifier was fitted on other features; fit it again")
        return cls(
            np.asarray(data["mean"], dtype=np.float64),
            np.asarray(data["scale"], dtype=np.float64),
            np.asarray(data["coef"], dtype=np.float64),
            float(data["intercept"]),
            tuple(data["platt"]),
            float(data["threshold"]),
            data.get("info"),
        )

    def save(self, path: str | Path = WEIGHTS) -> None:
        """Write the verifier as JSON (no pickle)."""
        data = {
            "features": list(STEP_FEATURES),
            "mean": self.mean.round(8).tolist(),
            "scale": self.scale.round(8).tolist(),
            "coef": self.coef.round(8).tolist(),
            "intercept": round(self.intercept, 8),
            "platt": [round(v, 8) for v in self.platt],
            "threshold": round(self.threshold, 6),
            "info": self.info or {},
        }
        Path(path).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")

    def scores(self, features: np.ndarray) -> np.ndarray:
        """The uncalibrated logit of each row."""
        return ((features - self.mean) / self.scale) @ self.coef + self.intercept

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """The calibrated probability of each row that it is the first wrong step."""
        a, b = self.platt
        return 1.0 / (1.0 + np.exp(-(a * self.scores(features) + b)))

    def line_probabilities(self, check) -> dict[int, float]:
        """``{line: probability}`` for the lines of a checked solution."""
        lines, features = line_features(check)
        if not lines:
            return {}
        return dict(zip(lines, self.probabilities(features).tolist()))


_RESULT_RE = re.compile(r"(=\s*\$?\s*)(-?\d+(?:\.\d+)?)")
_OPERATOR_RE = re.compile(r"(?<=[\d)}\s])([+\-])(?=[\s\d(\\])")
_STATEMENT_NUMBER_RE = re.compile(r"(?<![\w.\\^_{])(\d+)(?![\w.}])")


def inject_step_error(lines: list[str], other_lines: list[str], rng: random.Random) -> tuple[list[str], int] | None:
    """One error made in a right solution's ``lines``: a stated result changed, an operation changed (``+`` for
    ``-``), a number of a statement changed, or a line replaced by one of ``other_lines`` (a step of another
    solution); the new lines and the index of the changed one, ``None`` when no kind applies."""
    kinds = ["result", "operation", "statement", "foreign"]
    rng.shuffle(kinds)
    for kind in kinds:
        candidates = list(range(len(lines)))
        rng.shuffle(candidates)
        for k in candidates:
            changed = _change(lines[k], kind, other_lines, rng)
            if changed is not None and changed != lines[k]:
                return lines[:k] + [changed] + lines[k + 1 :], k
    return None


def _change(line: str, kind: str, other_lines: list[str], rng: random.Random) -> str | None:
    if kind == "result":
        matches = list(_RESULT_RE.finditer(line))
        if not matches:
            return None
        m = rng.choice(matches)
        value = float(m.group(2))
        new = (
            value + rng.choice([-1, 1]) * rng.randint(1, 9) if rng.random() < 0.6 else value * rng.choice([2, 0.5, -1])
        )
        text = str(int(new)) if float(new).is_integer() else f"{new:g}"
        return line[: m.start(2)] + text + line[m.end(2) :]
    if kind == "operation":
        matches = list(_OPERATOR_RE.finditer(line))
        if not matches:
            return None
        m = rng.choice(matches)
        return line[: m.start()] + ("-" if m.group() == "+" else "+") + line[m.end() :]
    if kind == "statement":
        matches = [m for m in _STATEMENT_NUMBER_RE.finditer(line) if "=" not in line[max(0, m.start() - 3) : m.start()]]
        if not matches:
            return None
        m = rng.choice(matches)
        value = int(m.group())
        return line[: m.start()] + str(value + rng.choice([-2, -1, 1, 2, value or 1])) + line[m.end() :]
    if not other_lines:
        return None
    return rng.choice(other_lines)


def fit(features: np.ndarray, labels: np.ndarray, c: float = 0.1) -> StepVerifier:
    """A logistic regression (scikit-learn, balanced classes) on standardised ``features``; not calibrated."""
    from sklearn.linear_model import LogisticRegression

    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=2000)
    model.fit((features - mean) / scale, labels)
    return StepVerifier(mean, scale, model.coef_[0].astype(np.float64), float(model.intercept_[0]))
