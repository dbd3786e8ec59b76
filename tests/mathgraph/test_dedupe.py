"""Near-duplicates in a bank: copies that differ in formatting, reworded copies with the same numbers
and question grouped; other numbers, formulas or questions kept apart; `mathgraph dedupe` over the bank formats."""

import csv
import hashlib
import json

import numpy as np
import pytest

from mathgraph.cli import main
from mathgraph.tasks.search.dedupe import (
    DedupeSettings,
    canonical_text,
    copy_groups,
    find_duplicates,
    group_ids,
    same_problem,
)

APPLES = "Tom has 12 apples. He eats 3 of them. How many apples does Tom have left?"
BANK = [
    APPLES,
    "Tom  has 12 apples.\nHe eats 3 of them.   How many apples does Tom have left? ",  # whitespace copy
    "Tom owns 12 apples. He eats 3 of the apples. How many apples does Tom have now?",  # reworded, same numbers
    "Tom has 12.5 apples. He eats 3 of them. How many apples does Tom have left?",  # another number
    "Find the value of $x^{2}+1$ when $x = 3$.",
    "Find the value of \\(x^2 + 1\\) when \\(x=3\\).",  # LaTeX formatting copy
    "Find the value of $x^2-1$ when $x=3$.",  # another formula, the same numbers
    "A train travels 60 miles in 2 hours. What is its speed?",
]
GROUPS = [0, 0, 0, 3, 4, 4, 6, 7]
EVERY_PAIR = DedupeSettings(neighbours=7, min_cosine=-1.0)  # every row a candidate of every other


class WordVectors:
    """Sums of random word vectors seeded by the word: texts sharing words are close."""

    def encode(self, texts, batch_size=32):
        out = np.zeros((len(texts), 24), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little")
                out[i] += np.random.default_rng(seed).normal(size=24)
        return out

    def identity(self):
        return {"kind": "test.WordVectors", "weights_sha256": "words", "mode": "sum", "dimension": 24}


def test_canonical_text_sets_formatting_aside():
    assert canonical_text("Find  $x^{2}$ if \\(x = 3\\).") == "Find x^2 if x=3."
    # \frac{a}{b} is \frac ab, so both become \fracab; a space next to a symbol goes
    assert canonical_text("$$\\left( \\dfrac{a}{b} \\right)\\,$$ and \\[y\\]") == "(\\fracab)and y"
    assert canonical_text("\\frac{1}{23}") != canonical_text("\\frac{12}{3}")
    assert canonical_text(BANK[0]) == canonical_text(BANK[1])
    assert canonical_text(BANK[4]) == canonical_text(BANK[5])
    assert canonical_text(BANK[4]) != canonical_text(BANK[6])  # + and - are not formatting
    assert canonical_text("12 5 apples") != canonical_text("125 apples")  # a space between numbers stays


def test_copy_groups_keep_the_first_row_of_each_text():
    representatives, copy_of = copy_groups(["a  b", "c", "a b", "c ", "d"])
    assert representatives == [0, 1, 4] and copy_of.tolist() == [0, 1, 0, 1, 4]


def test_group_ids_are_the_first_row_of_each_component():
    assert group_ids(6, [(1, 3), (3, 4), (2, 5)]).tolist() == [0, 1, 2, 1, 1, 2]
    assert group_ids(3, []).tolist() == [0, 1, 2]


def test_same_problem_reads_the_alignment():
    from mathgraph.parsers.compare import align_problems
    from mathgraph.parsers.graph_cache import parse_cached

    question = "Tom has 12 apples. He eats 3 of them. How many apples did he give away?"
    inserted = "Tom has 12 apples. He eats 3 of them. Ann has 5 pears. How many apples does Tom have left?"
    graphs = parse_cached([APPLES, BANK[2], BANK[3], BANK[4], BANK[6], question, inserted])

    def reason(i, j, settings=None):
        alignment = align_problems(graphs[i], graphs[j])
        return same_problem(alignment, graphs[i], graphs[j], settings or DedupeSettings())

    assert reason(0, 1) is None  # reworded, the same numbers and question
    assert reason(0, 2) == "quantities"  # 12 apples and 12.5 apples
    assert reason(3, 4) == "formulas"  # x^2+1 and x^2-1: the same numbers
    assert reason(0, 6) == "quantities"  # a sentence with a new quantity
    assert DedupeSettings() == DedupeSettings(10, 0.75, 0.0, False)  # the defaults chosen on dev
    # another question ("give away" for "have left"): the same problem by default (a reworded question shares
    # few words), another above a least word similarity
    assert reason(0, 5) is None
    assert reason(0, 5, DedupeSettings(min_question_similarity=0.5)) == "question"


def test_find_duplicates_groups_copies_and_rewordings_but_not_other_numbers():
    result = find_duplicates(BANK, WordVectors(), EVERY_PAIR)
    assert result.groups.tolist() == GROUPS and result.group_count == 5
    assert [(p.a, p.b, p.how) for p in result.pairs] == [(0, 1, "copy"), (0, 2, "aligned"), (4, 5, "copy")]
    # 6 distinct texts, each with its 5 others: 15 pairs compared, 1 confirmed
    assert result.candidates == 15 and sum(result.rejected.values()) == 14
    assert result.rejected["quantities"] >= 1 and result.rejected["formulas"] == 1
    # a candidate must be near enough: with no candidates only the copies are grouped
    alone = find_duplicates(BANK, WordVectors(), DedupeSettings(min_cosine=1.0))
    assert alone.groups.tolist() == [0, 0, 2, 3, 4, 4, 6, 7] and alone.candidates == 0
    with pytest.raises(ValueError, match="row 1: the text is empty"):
        find_duplicates(["a", " "], WordVectors())


def test_settings_are_checked():
    with pytest.raises(ValueError, match="neighbours must be >= 1"):
        DedupeSettings(neighbours=0)
    with pytest.raises(ValueError, match=r"min_cosine must be in \[-1, 1\]"):
        DedupeSettings(min_cosine=1.5)


# --------------------------------------------------------------------------- the command
@pytest.fixture
def model(tiny_text_dir):
    return f"text:{tiny_text_dir}"


def dedupe(*argv):
    return main(["dedupe", "--min-cosine", "-1", "--neighbours", "7", *map(str, argv)])


def test_every_row_comes_back_with_its_group(tmp_path, model, capsys):
    bank = tmp_path / "bank.jsonl"
    bank.write_text("".join(json.dumps({"id": f"p{i}", "problem": t}) + "\n" for i, t in enumerate(BANK)))
    out, pairs = tmp_path / "rows.jsonl", tmp_path / "pairs.jsonl"
    assert dedupe("--input", bank, "--output", out, "--model", model, "--pairs", pairs) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows == [{"id": f"p{i}", "problem": t, "group": g} for i, (t, g) in enumerate(zip(BANK, GROUPS))]
    found = [json.loads(line) for line in pairs.read_text().splitlines()]
    assert [(p["a"], p["b"], p["how"]) for p in found] == [(0, 1, "copy"), (0, 2, "aligned"), (4, 5, "copy")]
    assert "8 rows are 5 problems: 2 copies, 1 of 15 candidate pairs confirmed" in capsys.readouterr().err


def test_a_csv_bank_to_parquet_rows_with_another_group_field(tmp_path, model):
    import pyarrow.parquet as pq

    bank = tmp_path / "bank.csv"
    with open(bank, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "source"])
        writer.writerows([t, f"s{i}"] for i, t in enumerate(BANK[:4]))
    out = tmp_path / "rows.parquet"
    argv = ["--input", bank, "--text-field", "question", "--group-field", "same_as", "--output", out]
    assert dedupe(*argv, "--model", model) == 0
    assert pq.read_table(out).to_pylist() == [
        {"question": t, "source": f"s{i}", "same_as": g} for i, (t, g) in enumerate(zip(BANK[:4], GROUPS))
    ]


def test_bad_input_is_a_one_line_error(tmp_path, model, capsys):
    bank = tmp_path / "bank.jsonl"
    bank.write_text(json.dumps({"problem": BANK[0], "group": 1}) + "\n" + json.dumps({"question": "x"}) + "\n")
    assert dedupe("--input", bank, "--output", tmp_path / "rows.txt", "--model", model) == 2
    assert "name it .jsonl, .csv, .tsv or .parquet" in capsys.readouterr().err
    assert dedupe("--input", bank, "--output", tmp_path / "rows.jsonl", "--model", model) == 2
    assert "bank.jsonl:1: the row already has a field 'group'" in capsys.readouterr().err
    argv = ["--input", bank, "--output", tmp_path / "rows.jsonl", "--group-field", "g", "--model", model]
    assert dedupe(*argv) == 2
    assert "bank.jsonl:2:" in capsys.readouterr().err and not (tmp_path / "rows.jsonl").exists()
    assert dedupe(*argv, "--skip-bad") == 0
    assert [json.loads(line)["g"] for line in (tmp_path / "rows.jsonl").read_text().splitlines()] == [0]
    assert "skipped 1 bad lines" in capsys.readouterr().err
