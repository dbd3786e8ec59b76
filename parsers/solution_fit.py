"""How well a worked solution fits its problem, beyond its arithmetic: named numbers a model reads (QAM).

A solution written for another version of a problem (one step added, one condition left out) states right
calculations that check out; what gives it away is what it talks about and what it leaves alone:

- ``quantities_unmatched``: the problem's quantities (other than 1) left over when each is paired with a
  calculation operand of its value (or a value it implies, ``implied_values``) that no other quantity
  took, one operand per quantity. An operand equal to an earlier result of the solution (one no operand took
  before) is that result, not the problem's number ("24 - 15" after "5/8 * 24 = 15" does not use a problem's
  "15 more cards"), and a number the problem states twice ("4 snails ... four new fish") needs two operands;
  ``quantities_unmatched_digits``: those written in digits;
- ``operands_constant_uncued``: operands the graph explains as a known constant (``parsers.constants``)
  that the problem's own words do not call for: cued only by the solution's words (7 where the solution,
  not the problem, speaks of a week), or 2 where the problem says nothing of two (no "two", "twice",
  "double", "half", "pair", "both"...);
- ``solution_words_unseen`` / ``share_solution_words_unseen``: the content words of the solution's prose
  (stems, stop words left out) that the problem never writes ("stickers", "Saturday", "the tree");
- ``solution_words_unseen_specific``: those that are not words of method (``parsers.solution_vocabulary``:
  "total", "multiply", "left", which solutions write whatever the problem);
- ``operand_uses_beyond_mentions``: how many more times the calculations take a number the problem states (not
  as an earlier result) than the problem states it, over its numbers other than 1: a step added with a number
  of the problem read again ("24 / 24 + 2" where "2 smores apiece" was used already);
- ``question_words_unmentioned``: the share of the question's content words the solution never writes
  ("... after it was discounted in February?" answered without a word of February);
- ``sentences_unmentioned``: the problem's sentences (not the question) that state a quantity other than 1
  none of which is matched (as ``quantities_unmatched`` pairs them), and none of whose own content words
  (words no other sentence of the problem writes) the solution writes: a condition the solution leaves
  alone in both numbers and words;
- ``clauses_unmentioned``: the same at the level of clauses (a sentence cut at commas, semicolons and "and" /
  "but" / "then"): a clause with a quantity other than 1 that none of whose quantities is matched and none of
  whose own content words (words no other clause writes) the solution writes ("... two hours of errands and a
  one-hour dance lesson on Friday" answered without the lesson): an added condition inside a sentence;
- ``clauses_words_unwritten``: the clauses that state a quantity (of any value, 1 too: "a one-hour dance
  lesson") none of whose own content words the solution writes, whatever numbers it uses;
- ``calculation_lines_unseen_words``: the solution's lines with a calculation whose prose writes a content word
  that is neither the problem's nor a word of method ("6 gifts for colleagues" where the problem has no
  colleagues): a step the problem does not ask for.

``fit_features(check)`` reads them off a ``parsers.solution_check.SolutionCheck`` (the rules' check, as
``models.alignment_features`` makes it); ``FIT_FEATURES`` names them in order.
"""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction

from mathgraph.parsers.constants import available_constants
from mathgraph.parsers.solution_check import SolutionCheck
from mathgraph.parsers.solution_graph import implied_values
from mathgraph.parsers.solution_vocabulary import METHOD_STEMS, content_stems

__all__ = ["FIT_FEATURES", "fit_features", "content_stems", "problem_sentences", "matched_quantities"]

FIT_FEATURES = (
    "quantities_unmatched",
    "quantities_unmatched_digits",
    "operands_constant_uncued",
    "solution_words_unseen",
    "share_solution_words_unseen",
    "solution_words_unseen_specific",
    "operand_uses_beyond_mentions",
    "question_words_unmentioned",
    "sentences_unmentioned",
    "clauses_unmentioned",
    "clauses_words_unwritten",
    "calculation_lines_unseen_words",
)
_SENTENCE_RE = re.compile(r"[^.?!\n]+(?:[.?!]+|$)")
_DIGIT_RE = re.compile(r"\d")
_CLAUSE_CUT_RE = re.compile(r"[,;:]|\b(?:and|but|then)\b", re.IGNORECASE)
# words that say a count of two: a problem with one of them calls for the constant 2 (or 1/2)
_TWO_WORDS = re.compile(r"\b(?:two|twice|double[ds]?|doubling|half|halves|halved|pairs?|both|couples?|twins?|second)\b")


def problem_sentences(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` character spans of ``text``'s sentences (split after ``.``, ``?``, ``!`` and at line
    breaks; a decimal point between digits does not end one)."""
    protected = re.sub(r"(?<=\d)\.(?=\d)", "0", text)  # same length: 1.5 stays one word
    return [m.span() for m in _SENTENCE_RE.finditer(protected) if m.group().strip()]


def problem_clauses(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` spans of ``text``'s clauses: its sentences (``problem_sentences``) cut at commas,
    semicolons, colons and the words "and", "but", "then" (a comma between digits, as in 1,500, does not cut)."""
    protected = re.sub(r"(?<=\d)[,.](?=\d)", "0", text)
    clauses = []
    for start, end in problem_sentences(text):
        cut = start
        for match in _CLAUSE_CUT_RE.finditer(protected, start, end):
            if protected[cut : match.start()].strip():
                clauses.append((cut, match.start()))
            cut = match.end()
        if protected[cut:end].strip():
            clauses.append((cut, end))
    return clauses


def _unmentioned(spans, text, quantities, counted, matched, solution_words, skip=None) -> int:
    """How many of ``spans`` (not ``skip``) hold a quantity of ``counted``, none of them ``matched``, and none of
    whose own content words (written in no other span) the solution writes."""
    words = [content_stems(text[slice(*span)]) for span in spans]
    by_span: dict[int, list[int]] = {}
    for k in counted:
        start = quantities[k].span[0]
        where = next((s for s, (a, b) in enumerate(spans) if a <= start < b), None)
        if where is not None and where != skip:
            by_span.setdefault(where, []).append(k)
    count = 0
    for where, members in by_span.items():
        others = set().union(*(w for s, w in enumerate(words) if s != where))
        own = words[where] - others
        count += not any(matched[k] for k in members) and not (own & solution_words)
    return count


def matched_quantities(check: SolutionCheck) -> list[bool]:
    """Per quantity of the problem, whether it is paired with an operand of the solution's calculations
    (``quantities_unmatched`` in the module docstring): quantities in order, each taking the first free
    operand of its own value (in the problem's order), then those left one of a value it implies. An operand
    equal to an earlier result that no operand took yet is that result, not free."""
    graph = check.graph
    free = _free_operands(graph)
    pool = Counter(free)
    quantities = graph.problem.quantities()
    matched = [False] * len(quantities)
    # a quantity's own value first, for every quantity; then the values they imply, for those left
    for values_of in (lambda q: [q.value], implied_values):
        for k, quantity in enumerate(quantities):
            if matched[k]:
                continue
            value = next((v for v in values_of(quantity) if pool[v] > 0), None)
            if value is not None:
                pool[value] -= 1
                matched[k] = True
    return matched


def _free_operands(graph) -> list[Fraction]:
    """The values of the calculations' operands that are not an earlier result (one that no operand took yet)."""
    results: Counter = Counter()  # earlier results not yet taken by an operand
    free: list[Fraction] = []
    for _, calculation in graph.calculations():
        for operand in calculation.operands:
            if results[operand.value] > 0:
                results[operand.value] -= 1
            else:
                free.append(operand.value)
        for value in {calculation.result, calculation.computed} - {None}:
            results[value] += 1
    return free


def fit_features(check: SolutionCheck) -> dict[str, float]:
    """``{name: value}`` for every name of ``FIT_FEATURES`` (module docstring), read off a check of a solution
    against its problem."""
    graph = check.graph
    problem_text = graph.problem.text
    quantities = graph.problem.quantities()
    matched = matched_quantities(check)
    counted = [k for k, q in enumerate(quantities) if q.value != 1]
    unmatched = [k for k in counted if not matched[k]]

    cued_by_problem = available_constants(problem_text)
    has_two = bool(_TWO_WORDS.search(problem_text.lower()))
    uncued = 0
    for _, operand in graph.operands():
        if operand.source != "constant" or operand.value in (0, 1):
            continue
        if operand.value in (2, Fraction(1, 2)):
            uncued += not has_two
        else:
            uncued += operand.value not in cued_by_problem

    solution_words = content_stems(graph.solution.split("####")[0])
    problem_words = content_stems(problem_text)
    unseen = solution_words - problem_words
    stated = Counter(q.value for q in quantities)
    uses = Counter(_free_operands(graph))
    beyond = sum(max(0, uses[value] - count) for value, count in stated.items() if value != 1)

    spans = problem_sentences(problem_text)
    question = next((k for k in reversed(range(len(spans))) if "?" in problem_text[slice(*spans[k])]), None)
    question = len(spans) - 1 if question is None and spans else question
    sentence_words = [content_stems(problem_text[slice(*span)]) for span in spans]
    question_words = sentence_words[question] if question is not None else set()

    unmentioned = _unmentioned(spans, problem_text, quantities, counted, matched, solution_words, question)
    question_span = spans[question] if question is not None else (len(problem_text), len(problem_text))
    clauses = [c for c in problem_clauses(problem_text) if not question_span[0] <= c[0] < question_span[1]]
    clauses_unmentioned = _unmentioned(clauses, problem_text, quantities, counted, matched, solution_words)
    every = range(len(quantities))
    clauses_unwritten = _unmentioned(
        clauses, problem_text, quantities, every, [False] * len(quantities), solution_words
    )
    unseen_lines = sum(
        bool(content_stems(step.text) - problem_words - METHOD_STEMS) for step in graph.steps if step.calculations
    )
    return {
        "quantities_unmatched": float(len(unmatched)),
        "quantities_unmatched_digits": float(sum(bool(_DIGIT_RE.search(quantities[k].text)) for k in unmatched)),
        "operands_constant_uncued": float(uncued),
        "solution_words_unseen": float(len(unseen)),
        "share_solution_words_unseen": len(unseen) / len(solution_words) if solution_words else 0.0,
        "solution_words_unseen_specific": float(len(unseen - METHOD_STEMS)),
        "operand_uses_beyond_mentions": float(beyond),
        "question_words_unmentioned": (
            len(question_words - solution_words) / len(question_words) if question_words else 0.0
        ),
        "sentences_unmentioned": float(unmentioned),
        "clauses_unmentioned": float(clauses_unmentioned),
        "clauses_words_unwritten": float(clauses_unwritten),
        "calculation_lines_unseen_words": float(unseen_lines),
    }
