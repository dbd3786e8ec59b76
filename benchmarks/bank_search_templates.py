"""Template-made variants of grade-school problems, the bank search benchmark's ``template`` queries.

``template_variants(question, key, count)`` rewrites one seed question ``count`` times, each time with:

- **new person names**: every first name of ``FIRST_NAMES`` in the question (with its possessive) replaced by
  another of the list, the same name always by the same one, he/she kept (names are drawn from the names of the
  same list, which holds names of both);
- **new numbers**: every number written in digits replaced by another of about its size (integers by integers,
  decimals with as many decimals; a number that appears twice gets the same new value), never the old value;
- **one or two added irrelevant clauses** (``CLAUSES``: facts about a new person, a place or a time that no step
  of the solution needs), each put at a sentence boundary before the question sentence.

The rewrites are seeded by ``key`` (the seed's name), so the benchmark's queries are the same on every run; no
wording is taken from the seed's GSM-Plus variants. The answer of a variant is its seed question.
"""

from __future__ import annotations

import hashlib
import random
import re

FIRST_NAMES = tuple(
    """Aaron Abby Adam Adrian Aisha Alan Albert Alex Alice Alicia Allison Amanda Amber Amy Andrea Andrew Andy Angela
    Anna Anne Anthony Ashley Ava Barbara Ben Benjamin Beth Betty Bill Bob Brandon Brian Bruce Carl Carla Carlos Carol
    Caroline Carter Charles Charlie Chloe Chris Christina Claire Colin Connor Daniel Danny David Debra Dennis Diana
    Donald Dorothy Dylan Edward Elena Eli Elizabeth Ella Emily Emma Eric Erin Ethan Eva Fiona Frank Gary George
    Grace Greg Hannah Harry Helen Henry Holly Ian Isabella Jack Jackson Jacob Jake James Jamie Jane Janet Jasmine
    Jason Jay Jean Jeff Jenna Jennifer Jenny Jerry Jessica Jill Jim Joe John Jordan Jose Joseph Josh Joy Juan Judy
    Julia Julie Justin Karen Kate Katie Kelly Ken Kevin Kim Kyle Laura Lauren Leah Leo Liam Lily Linda Lisa Logan
    Lucas Lucy Luke Mark Martha Mary Mason Matt Max Megan Melissa Mia Michael Michelle Mike Molly Nancy Natalie Nathan
    Nick Nina Noah Olivia Oliver Owen Pam Patrick Paul Peter Rachel Ralph Ray Rebecca Richard Rick Robert Rose Ruby
    Ryan Sam Samantha Sandra Sara Sarah Scott Sean Sophia Sophie Stephanie Steve Susan Tim Tina Tom Tony Tyler
    Victoria Vincent Wendy William Zach Zoe""".split()
)
CLAUSES = (
    "{name}'s neighbour has {n} cats.",
    "The shop opened {n} years ago.",
    "{name} lives {n} miles from the nearest lake.",
    "It rained for {n} days last month.",
    "{name} has a cousin who is {n} years old.",
    "There are {n} trees on the street outside.",
    "{name}'s favourite colour is green.",
    "The town library holds {n} books.",
    "{name} once ran {n} laps around the park.",
    "A bus passes the corner every {n} minutes.",
    "{name} keeps {n} stamps in an album.",
    "The building next door has {n} floors.",
)
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.,])\d+(?:\.\d+)?(?![\w])")
_SENTENCE_END = re.compile(r"(?<=[.!])\s+(?=[A-Z$])")


def template_variants(question: str, key: str, count: int) -> list[str]:
    """``count`` different template-made variants of ``question`` (see the module's notes), seeded by ``key``."""
    out: list[str] = []
    for i in range(count * 4):
        variant = template_variant(question, random.Random(_seed(f"{key}/{i}")))
        if variant != question and variant not in out:
            out.append(variant)
        if len(out) == count:
            break
    return out


def template_variant(question: str, rng: random.Random) -> str:
    """One variant: names, numbers and one or two added clauses (``rng`` decides everything)."""
    text = _rename(question, rng)
    text = _renumber(text, rng)
    return _add_clauses(text, rng)


def names_in(text: str) -> list[str]:
    """The ``FIRST_NAMES`` written in ``text``, in order of first appearance."""
    found = re.findall(r"\b[A-Z][a-z]+\b", text)
    return list(dict.fromkeys(word for word in found if word in _NAMES))


_NAMES = frozenset(FIRST_NAMES)


def _rename(text: str, rng: random.Random) -> str:
    present = names_in(text)
    pool = [name for name in FIRST_NAMES if name not in present and name not in text]
    mapping = dict(zip(present, rng.sample(pool, len(present))))
    if not mapping:
        return text
    return re.sub(r"\b(" + "|".join(map(re.escape, mapping)) + r")\b", lambda m: mapping[m.group(1)], text)


def _renumber(text: str, rng: random.Random) -> str:
    mapping: dict[str, str] = {}

    def new(match: re.Match) -> str:
        written = match.group(0)
        if written not in mapping:
            mapping[written] = _other_number(written, rng)
        return mapping[written]

    return _NUMBER.sub(new, text)


def _other_number(written: str, rng: random.Random) -> str:
    plain = written.replace(",", "")
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    value = float(plain)
    low, high = max(value / 2, 1.0 if value >= 1 else 0.1), value * 2 + 2
    for _ in range(50):
        candidate = round(rng.uniform(low, high), decimals)
        if candidate != value and candidate > 0:
            break
    else:
        candidate = value + 1
    text = f"{candidate:.{decimals}f}"
    if "," in written and decimals == 0:
        text = f"{int(candidate):,}"
    return text


def _add_clauses(text: str, rng: random.Random) -> str:
    sentences = _SENTENCE_END.split(text.strip())
    question_at = max(len(sentences) - 1, 1)
    present = set(names_in(text))
    for clause in rng.sample(CLAUSES, rng.choice((1, 2))):
        name = rng.choice([n for n in FIRST_NAMES if n not in present])
        present.add(name)
        added = clause.format(name=name, n=rng.randint(2, 40))
        position = rng.randint(0, question_at) if len(sentences) > 1 else 0
        sentences.insert(position, added)
        question_at += 1
    return " ".join(sentences)


def _seed(key: str) -> int:
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:12], 16)


__all__ = ["CLAUSES", "FIRST_NAMES", "names_in", "template_variant", "template_variants"]
