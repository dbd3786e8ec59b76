"""A small learned step verifier: the probability that a line of a worked solution is its first wrong step.

``StepVerifier.load()`` reads ``mathgraph/data/step_verifier.json`` (a logistic regression over
``STEP_FEATURES``: its feature means and scales, coefficients, intercept, a Platt calibration and the
thresholds of its operating points) and predicts with NumPy alone; ``line_probabilities(check)`` gives one
probability per line of a checked solution (``parsers.solution_check.SolutionCheck``). ``check_solution``
reports the line of highest probability as a ``suspect_step`` error where that probability reaches the
threshold and no rule found an error there.

Two operating points are chosen on dev (``OPERATING_POINTS``, ``StepVerifier.at``): ``strict`` (the default)
keeps 90% or more of the right dev solutions unflagged, for users who act on every finding; ``f1`` is the
threshold of best dev F1 (ProcessBench's measure), which finds about twice as many first wrong steps and flags
about half the right solutions of competition problems (30% of grade-school ones): for sorting solutions for a
reader.

The features of a line (``line_features``) are what the rules found on it (errors by kind, the claims of
its LaTeX math that hold, fail or cannot be decided, calculations that check out), where it stands (its
place among the lines, first, second, third, last; before or at the first line a rule flags), what it
writes (its length, the numbers it writes, those no earlier line nor the problem wrote, the share of its
words the problem uses, a boxed answer, symbols no earlier line wrote, equations, its share of math
characters), lexical cues of a claim made without work ("assume", "must", "only", "all", "maximum",
"cannot", "therefore", "clearly"), the solution correcting itself ("wait", "however", "let's try",
"mistake": on this line, anywhere, on a later line or the next one), the share of the solution's claims
that cannot be decided, whether substituting the solution's solved values back into its equations
(``solution_claims.substituted_back``) points at this line, and what holds for the whole solution (its
length, its self-corrections, the rules' findings anywhere, its boxed answers, the problem's length and kind).

Training (``fit``, which imports scikit-learn) reads labelled lines: ``benchmarks/process_errors.py
--fit-verifier`` fits it on the ProcessBench dev halves' real first wrong steps (1 on the lines of that
step, 0 on the lines before it and on every line of a right solution) and chooses the calibration and the
thresholds on out-of-fold dev scores. ``inject_step_error`` makes step errors in right solutions (a stated
result changed, an operation changed, a number in a statement changed, a line taken from another
solution), for training on made errors where no labels are.
"""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from mathgraph.parsers.solution_claims import substituted_back

__all__ = ["OPERATING_POINTS", "STEP_FEATURES", "StepVerifier", "line_features", "inject_step_error", "fit", "WEIGHTS"]

WEIGHTS = Path(__file__).resolve().parents[1] / "mathgraph" / "data" / "step_verifier.json"
OPERATING_POINTS = ("strict", "f1")  # the named thresholds of the packaged verifier (``StepVerifier.at``)
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
RULE_FEATURES = (
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
# what a line writes (``_writing_rows``): backtracking and contrast words, a claim without work, an approximation,
# equations, its share of math characters, symbols no earlier line nor the problem wrote, a boxed answer, its length
# against the solution's mean, and its index in bins (0, 1, 2, 3, 4-5, 6-8, 9+)
INDEX_BINS = (0, 1, 2, 3, 4, 6, 9)
LINE_FEATURES = (
    "backtrack",
    "contrast",
    "claim",
    "approx",
    "equals",
    "math_share",
    "symbols_new",
    "share_symbols_new",
    "boxed",
    "rel_chars",
    *(f"index_bin_{b}" for b in INDEX_BINS),
)
# the same for every line of a solution: its length, backtracking, the rules' findings anywhere, its boxed answers
# and their form, the problem's length and kind
_PROBLEM_CUES = {
    "prob_count": r"\b(?:how many|ways|probability|arrangements|choose|distinct)\b",
    "prob_geometry": r"\b(?:triangle|circle|angle|area|polygon|square|radius|perimeter)\b",
    "prob_prove": r"\b(?:prove|show that|determine all|find all)\b",
}
SOLUTION_FEATURES = (
    "sol_log_lines",
    "sol_log_chars",
    "sol_backtrack",
    "sol_rule_errors",
    "sol_claims_fail",
    "sol_claims_unknown",
    "sol_boxed_distinct",
    "sol_no_boxed",
    "ans_decimal",
    "ans_log_magnitude",
    "ans_log_chars",
    "prob_log_chars",
    *_PROBLEM_CUES,
)
STEP_FEATURES = (*RULE_FEATURES, *LINE_FEATURES, *SOLUTION_FEATURES)
_NUMBER_RE = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")
_WORD_RE = re.compile(r"[a-z]{3,}")
_CUE_RES = {name: re.compile(pattern) for name, pattern in _CUES.items()}
_BACKTRACK_RE = re.compile(
    r"\b(?:wait|actually|oops|mistake|error|re-?(?:check|evaluate|examine|consider|calculate)|let me (?:re|check|try)"
    r"|correct(?:ion|ed)?|instead|recheck|double-check)\b"
)
_CONTRAST_RE = re.compile(r"\b(?:however|but|although|though)\b")
_CLAIM_RE = re.compile(r"\b(?:clearly|obviously|note that|we know|it follows|since|because|must|implies)\b")
_APPROX_RE = re.compile(r"\\approx|≈|approximately|\d\.\d{3,}")
_SYMBOL_RE = re.compile(r"\\[A-Za-z]+|(?<![A-Za-z\\])[A-Za-z](?![A-Za-z])")
_BOXED_RE = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")
_MATHY = set("\\$^_{}=+-*/()0123456789<>")
_PROBLEM_CUE_RES = {name: re.compile(pattern) for name, pattern in _PROBLEM_CUES.items()}


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
        rows.append([float(values[name]) for name in RULE_FEATURES])
    rules = np.asarray(rows, dtype=np.float64).reshape(len(rows), len(RULE_FEATURES))
    texts = [step.text for step in graph.steps]
    return lines, np.hstack([rules, _writing_rows(texts, graph.problem.text, rules)])


def _writing_rows(texts: list[str], problem: str, rules: np.ndarray) -> np.ndarray:
    """``LINE_FEATURES`` then ``SOLUTION_FEATURES`` of each line (``rules``: the lines' ``RULE_FEATURES``)."""
    seen = set(_SYMBOL_RE.findall(problem))
    mean_chars = np.mean([len(t) for t in texts]) if texts else 1.0
    rows = []
    for k, text in enumerate(texts):
        lowered = text.lower()
        symbols = _SYMBOL_RE.findall(text)
        new = [s for s in symbols if s not in seen]
        seen.update(symbols)
        bins = [0.0] * len(INDEX_BINS)
        bins[max(j for j, b in enumerate(INDEX_BINS) if k >= b)] = 1.0
        rows.append(
            [
                len(_BACKTRACK_RE.findall(lowered)),
                float(bool(_CONTRAST_RE.search(lowered))),
                float(bool(_CLAIM_RE.search(lowered))),
                float(bool(_APPROX_RE.search(text))),
                np.log1p(text.count("=")),
                sum(c in _MATHY for c in text) / max(len(text), 1),
                np.log1p(len(set(new))),
                len(set(new)) / len(set(symbols)) if symbols else 0.0,
                float("\\boxed" in text),
                len(text) / max(mean_chars, 1.0),
                *bins,
            ]
        )
    whole = "\n".join(texts)
    boxed = _BOXED_RE.findall(whole)
    answer = boxed[-1] if boxed else ""
    numbers = [abs(float(v)) for v in _NUMBER_RE.findall(answer)]
    column = {name: rules[:, k] for k, name in enumerate(RULE_FEATURES)}
    rule_errors = sum(column[name].sum() for name in RULE_FEATURES if name.startswith("rule_"))
    solution = [
        np.log1p(len(texts)),
        np.log1p(len(whole)),
        np.log1p(len(_BACKTRACK_RE.findall(whole.lower()))),
        np.log1p(rule_errors + column["calculations_wrong"].sum()),
        np.log1p(column["claims_fail"].sum()),
        np.log1p(column["claims_unknown"].sum()),
        np.log1p(len(set(b.replace(" ", "") for b in boxed))),
        float(not boxed),
        float("." in answer and any(c.isdigit() for c in answer)),
        np.log10(1 + max(numbers)) if numbers else 0.0,
        np.log1p(len(answer)),
        np.log1p(len(problem)),
        *(float(bool(r.search(problem.lower()))) for r in _PROBLEM_CUE_RES.values()),
    ]
    lines = np.asarray(rows, dtype=np.float64).reshape(len(texts), len(LINE_FEATURES))
    return np.hstack([lines, np.tile(np.asarray(solution, dtype=np.float64), (len(texts), 1))])


@dataclass(frozen=True)
class StepVerifier:
    """A fitted verifier (module docstring): standardisation, logistic coefficients, Platt calibration
    (``a * score + b``) and the decision ``threshold`` on the calibrated probability; ``thresholds`` names the
    operating points chosen on dev (``at``)."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    platt: tuple[float, float] = (1.0, 0.0)
    threshold: float = 1.0
    info: dict | None = None
    thresholds: dict[str, float] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | Path = WEIGHTS, point: str | float = "strict") -> StepVerifier:
        """Read a verifier saved by ``save``, deciding at ``point`` (``at``); a clear error when its features are
        not ``STEP_FEATURES``."""
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if tuple(data["features"]) != STEP_FEATURES:
            raise ValueError(f"{path}: the verifier was fitted on other features; fit it again")
        verifier = cls(
            np.asarray(data["mean"], dtype=np.float64),
            np.asarray(data["scale"], dtype=np.float64),
            np.asarray(data["coef"], dtype=np.float64),
            float(data["intercept"]),
            tuple(data["platt"]),
            float(data["threshold"]),
            data.get("info"),
            {name: float(t) for name, t in (data.get("thresholds") or {"strict": data["threshold"]}).items()},
        )
        return verifier.at(point)

    def at(self, point: str | float) -> StepVerifier:
        """This verifier deciding at ``point``: a named operating point (``OPERATING_POINTS``: "strict", the
        threshold of best dev F1 that keeps 90% of the right solutions unflagged; "f1", the threshold of best
        dev F1) or a probability between 0 and 1."""
        if isinstance(point, str):
            if point not in self.thresholds:
                names = ", ".join(sorted(self.thresholds)) or "none"
                raise ValueError(f"the step verifier has no operating point {point!r} (it has: {names})")
            return replace(self, threshold=self.thresholds[point])
        if not 0.0 <= point <= 1.0:
            raise ValueError(f"a step verifier threshold is a probability between 0 and 1, not {point}")
        return replace(self, threshold=float(point))

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
            "thresholds": {name: round(t, 6) for name, t in self.thresholds.items()},
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

    def suspect_line(self, check) -> tuple[int, float] | None:
        """The line most likely to be the solution's first wrong step and its probability, where that probability
        reaches the threshold (a solution has one first wrong step); ``None`` otherwise."""
        probabilities = self.line_probabilities(check)
        if not probabilities:
            return None
        line = max(probabilities, key=probabilities.get)
        return (line, probabilities[line]) if probabilities[line] >= self.threshold else None


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
