"""Task data: QRC/SQR/QAM builders on the bundled GSM-Plus sample, splits, validation and the CLI."""

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from mathgraph.cli import main
from mathgraph.jsonl import JsonlError
from tasks.data import (
    IRRELEVANT,
    PERTURBATION_TYPES,
    QRC_LABELS,
    build_qam_pairs,
    build_qrc_pairs,
    build_sqr_lists,
    load_kpc,
    load_qam,
    load_qrc,
    load_sqr,
    read_rows,
    read_seeds,
    split_by_group,
    split_rows,
)

SAMPLE = Path(__file__).resolve().parents[2] / "mathgraph" / "data" / "gsmplus_sample.jsonl"
VARIANTS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
SEED_QUESTIONS = list(dict.fromkeys(row["seed_question"] for row in VARIANTS))
VARIANTS_OF = {q: {r["question"]: r["perturbation_type"] for r in VARIANTS if r["seed_question"] == q} for q in SEED_QUESTIONS}
SEED_OF = {r["question"]: r["seed_question"] for r in VARIANTS}
GSM8K_ROWS = [
    {"question": f"Tom has {n} apples and buys {n + 2} more. How many apples does he have?",
     "answer": f"He has {n} + {n + 2} = <<{n}+{n + 2}={2 * n + 2}>>{2 * n + 2} apples.\n#### {2 * n + 2}"}
    for n in range(1, 9)
]


@pytest.fixture(scope="module")
def seeds():
    return read_seeds(SAMPLE)[0]


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


# ---------------------------------------------------------------- QRC


def test_qrc_pairs_cover_nine_labels_and_pair_seeds_with_their_variants(seeds):
    pairs = build_qrc_pairs(seeds, seed=0)
    assert [s.group for s in seeds] == ["seed-000", "seed-001", "seed-002"]
    assert Counter(p["label"] for p in pairs) == {label: 3 for label in QRC_LABELS}
    assert len({p["id"] for p in pairs}) == len(pairs) == 27
    for pair in pairs:
        assert pair["text_a"] in SEED_QUESTIONS
        assert pair["group"] == f"seed-{SEED_QUESTIONS.index(pair['text_a']):03d}"
        if pair["label"] == IRRELEVANT:
            other_seed = SEED_OF.get(pair["text_b"], pair["text_b"])
            assert other_seed in SEED_QUESTIONS and other_seed != pair["text_a"]
        else:
            assert VARIANTS_OF[pair["text_a"]][pair["text_b"]] == pair["label"]


def test_qrc_pairs_are_deterministic_per_seed_and_differ_across_seeds(seeds):
    assert build_qrc_pairs(seeds, seed=3) == build_qrc_pairs(seeds, seed=3)
    irrelevant = [[p["text_b"] for p in build_qrc_pairs(seeds, seed=s) if p["label"] == IRRELEVANT] for s in range(6)]
    assert len({tuple(texts) for texts in irrelevant}) > 1
    more = build_qrc_pairs(seeds, seed=0, irrelevant_per_seed=3)
    assert Counter(p["label"] for p in more)[IRRELEVANT] == 9
    assert len({(p["text_a"], p["text_b"]) for p in more}) == len(more)


# ---------------------------------------------------------------- SQR


def test_sqr_lists_have_the_seeds_variants_as_relevant_items(seeds):
    lists = build_sqr_lists(seeds, seed=0)
    assert [row["query"] for row in lists] == SEED_QUESTIONS
    for row in lists:
        candidates = row["candidates"]
        assert 6 <= len(candidates) <= 15 and len(candidates) == 12 and len(set(candidates)) == 12
        own = VARIANTS_OF[row["query"]]
        assert sorted(row["relevant"]) == row["relevant"]
        assert row["relevant"] == [i for i, c in enumerate(candidates) if c in own]
        assert len(row["relevant"]) == 4
        assert all(own[candidates[i]] != "critical thinking" for i in row["relevant"])
        assert all(SEED_OF[c] != row["query"] for i, c in enumerate(candidates) if i not in row["relevant"])
    assert build_sqr_lists(seeds, seed=0) == lists
    assert build_sqr_lists(seeds, seed=1) != lists


def test_sqr_all_relevant_gives_the_seven_non_critical_variants(seeds):
    for row in build_sqr_lists(seeds, relevant=None, hard=4, random_negatives=2):
        own = VARIANTS_OF[row["query"]]
        assert {row["candidates"][i] for i in row["relevant"]} == {q for q, t in own.items() if t != "critical thinking"}
        assert len(row["candidates"]) == 13


def test_sqr_hard_negatives_are_closer_than_random_ones(seeds):
    vectorizer = TfidfVectorizer().fit(r["question"] for r in VARIANTS)

    def mean_distractor_similarity(lists):
        values = []
        for row in lists:
            negatives = [c for i, c in enumerate(row["candidates"]) if i not in row["relevant"]]
            values.extend(cosine_similarity(vectorizer.transform([row["query"]]), vectorizer.transform(negatives))[0])
        return float(np.mean(values))

    hard = mean_distractor_similarity(build_sqr_lists(seeds, relevant=4, hard=6, random_negatives=0))
    random_only = np.mean([
        mean_distractor_similarity(build_sqr_lists(seeds, seed=s, relevant=4, hard=0, random_negatives=6)) for s in range(5)
    ])
    assert hard > random_only


def test_sqr_rejects_list_sizes_outside_6_to_15(seeds):
    with pytest.raises(ValueError, match="6 to 15"):
        build_sqr_lists(seeds, relevant=2, hard=2, random_negatives=1)
    with pytest.raises(ValueError, match="6 to 15"):
        build_sqr_lists(seeds, relevant=None, hard=8, random_negatives=1)


# ---------------------------------------------------------------- QAM


def test_qam_pairs_match_questions_with_own_and_other_solutions():
    pairs = build_qam_pairs(GSM8K_ROWS, seed=0, negatives=2)
    assert len(pairs) == 3 * len(GSM8K_ROWS) and len({p["id"] for p in pairs}) == len(pairs)
    solution_of = {r["question"]: r["answer"] for r in GSM8K_ROWS}
    for pair in pairs:
        assert (pair["text_b"] == solution_of[pair["text_a"]]) == (pair["label"] == 1)
        assert pair["text_b"] in solution_of.values()
    for group in {p["group"] for p in pairs}:
        members = [p for p in pairs if p["group"] == group]
        assert [p["label"] for p in members] == [1, 0, 0] and len({p["text_a"] for p in members}) == 1
        assert len({p["text_b"] for p in members}) == 3
    assert build_qam_pairs(GSM8K_ROWS, seed=0, negatives=2) == pairs
    assert build_qam_pairs(GSM8K_ROWS, seed=1, negatives=2) != pairs


# ---------------------------------------------------------------- splits


def test_group_split_keeps_groups_whole_adds_up_and_is_deterministic():
    rows = [{"group": f"g{g}", "n": i} for g in range(40) for i in range(3)]
    splits = split_by_group(rows, "group", dev=0.1, test=0.2, seed=5)
    groups = {name: {r["group"] for r in part} for name, part in splits.items()}
    assert not (groups["train"] & groups["dev"]) and not (groups["train"] & groups["test"]) and not (groups["dev"] & groups["test"])
    assert (len(groups["train"]), len(groups["dev"]), len(groups["test"])) == (28, 4, 8)
    assert sum(len(part) for part in splits.values()) == len(rows)
    assert sorted(id(r) for part in splits.values() for r in part) == sorted(id(r) for r in rows)
    assert split_by_group(rows, "group", 0.1, 0.2, seed=5) == splits
    assert split_by_group(rows, "group", 0.1, 0.2, seed=6) != splits


def test_group_split_of_qrc_pairs_keeps_each_seed_in_one_split(seeds):
    pairs = build_qrc_pairs(seeds)
    splits = split_by_group(pairs, "group", dev=0.34, test=0.34, seed=0)
    assert [len({p["text_a"] for p in part}) for part in splits.values()] == [1, 1, 1]
    assert len({p["text_a"] for part in splits.values() for p in part}) == 3


def test_stratified_row_split_keeps_label_proportions():
    rows = [{"text": f"t{i}", "label": "a" if i % 4 else "b"} for i in range(200)]
    splits = split_rows(rows, dev=0.1, test=0.1, seed=0, stratify_field="label")
    assert [len(part) for part in splits.values()] == [160, 20, 20]
    for part in splits.values():
        assert Counter(r["label"] for r in part)["b"] == len(part) // 4
    assert len({r["text"] for part in splits.values() for r in part}) == 200
    assert split_rows(rows, 0.1, 0.1, 0, "label") == splits
    with pytest.raises(ValueError, match="dev \\+ test < 1"):
        split_rows(rows, dev=0.5, test=0.5)


# ---------------------------------------------------------------- validation


def test_read_rows_names_file_and_line_or_skips_and_counts(tmp_path):
    path = write_lines(tmp_path / "in.jsonl", [
        json.dumps({"problem": "x", "subject": "Algebra"}),
        "",
        json.dumps({"problem": "y"}),
        "[1, 2]",
        json.dumps({"problem": "z", "subject": " "}),
    ])
    with pytest.raises(JsonlError, match=f"^{path}:3: no field 'subject'"):
        read_rows(path, ("problem", "subject"))
    rows, bad = read_rows(path, ("problem", "subject"), skip_bad=True)
    assert rows == [{"problem": "x", "subject": "Algebra"}]
    assert [(e.line, e.reason.split(" (")[0]) for e in bad] == [
        (3, "no field 'subject'"), (4, "expected a JSON object, got list"), (5, "field 'subject' is empty")]
    assert load_kpc(path, skip_bad=True)[0].label == "Algebra"


def test_loaders_round_trip_builders_and_reject_bad_structure(tmp_path, seeds):
    qrc = write_lines(tmp_path / "qrc.jsonl", [json.dumps(p) for p in build_qrc_pairs(seeds)])
    assert {p.label for p in load_qrc(qrc)} == set(QRC_LABELS) and set(PERTURBATION_TYPES) < set(QRC_LABELS)
    qam_rows = build_qam_pairs(GSM8K_ROWS)
    qam = write_lines(tmp_path / "qam.jsonl", [json.dumps(p) for p in qam_rows])
    assert [p.label for p in load_qam(qam)] == [p["label"] for p in qam_rows]
    sqr_rows = build_sqr_lists(seeds)
    sqr = write_lines(tmp_path / "sqr.jsonl", [json.dumps(r) for r in sqr_rows])
    loaded = load_sqr(sqr)
    assert loaded[0].candidates == tuple(sqr_rows[0]["candidates"]) and loaded[0].relevant == tuple(sqr_rows[0]["relevant"])

    good = sqr_rows[0]
    bad_lists = {
        "5 candidates": {**good, "candidates": good["candidates"][:5], "relevant": [0]},
        "non-empty list of integers": {**good, "relevant": []},
        "distinct indices in 0..11": {**good, "relevant": [0, 12]},
        "list of non-empty strings": {**good, "candidates": good["candidates"][:-1] + [3]},
        "duplicate id": good,
    }
    for reason, row in bad_lists.items():
        path = write_lines(tmp_path / "bad_sqr.jsonl", [json.dumps(good), json.dumps(row)])
        with pytest.raises(JsonlError, match=f"^{path}:2: .*{reason}"):
            load_sqr(path)
    path = write_lines(tmp_path / "bad_qam.jsonl", [json.dumps(qam_rows[0]), json.dumps({**qam_rows[1], "label": "1"})])
    with pytest.raises(JsonlError, match=f"^{path}:2: field 'label' must be the integer 0 or 1"):
        load_qam(path)
    assert len(load_qam(path, skip_bad=True)) == 1


# ---------------------------------------------------------------- CLI


def test_cli_qrc_pairs_then_group_split(tmp_path, capsys):
    output = tmp_path / "pairs.jsonl"
    assert main(["-q", "data", "qrc-pairs", "--input", str(SAMPLE), "--output", str(output), "--seed", "4"]) == 0
    assert read_jsonl(output) == build_qrc_pairs(read_seeds(SAMPLE)[0], seed=4)
    assert "irrelevant: 3" in capsys.readouterr().err
    assert main(["-q", "data", "split", "--input", str(output), "--group-field", "group",
                 "--dev", "0.34", "--test", "0.34", "--output-dir", str(tmp_path / "splits")]) == 0
    err = capsys.readouterr().err
    parts = {name: read_jsonl(tmp_path / "splits" / f"pairs.{name}.jsonl") for name in ("train", "dev", "test")}
    assert [len(rows) for rows in parts.values()] == [9, 9, 9] and "train: 9 rows, 1 groups" in err
    assert len({r["group"] for rows in parts.values() for r in rows}) == 3


def test_cli_sqr_lists_and_qam_pairs(tmp_path, capsys):
    lists = tmp_path / "lists.jsonl"
    assert main(["-q", "data", "sqr-lists", "--input", str(SAMPLE), "--output", str(lists),
                 "--relevant", "5", "--hard", "4", "--random", "3"]) == 0
    assert [(len(r.candidates), len(r.relevant)) for r in load_sqr(lists)] == [(12, 5)] * 3
    assert "12 candidates/5 relevant: 3" in capsys.readouterr().err

    source = write_lines(tmp_path / "gsm8k.jsonl", [json.dumps(r) for r in GSM8K_ROWS])
    qam = tmp_path / "qam.jsonl"
    assert main(["-q", "data", "qam-pairs", "--input", str(source), "--output", str(qam), "--limit", "5", "--negatives", "2"]) == 0
    assert Counter(p.label for p in load_qam(qam)) == {1: 5, 0: 10}
    assert "5 questions; label 0: 10, 1: 5" in capsys.readouterr().err


def test_cli_stratified_split_next_to_input(tmp_path, capsys):
    source = write_lines(tmp_path / "math.jsonl", [
        json.dumps({"problem": f"p{i}", "subject": ["Algebra", "Geometry"][i % 2]}) for i in range(40)])
    assert main(["-q", "data", "split", "--input", str(source), "--stratify-field", "subject", "--dev", "0.1", "--test", "0.1"]) == 0
    test_rows = read_jsonl(tmp_path / "math.test.jsonl")
    assert Counter(r["subject"] for r in test_rows) == {"Algebra": 2, "Geometry": 2}
    assert sum(len(read_jsonl(tmp_path / f"math.{n}.jsonl")) for n in ("train", "dev", "test")) == 40


def test_cli_bad_rows_exit_2_with_file_and_line_or_are_skipped(tmp_path, capsys):
    rows = [json.dumps(r) for r in VARIANTS]
    rows[5] = json.dumps({k: v for k, v in VARIANTS[5].items() if k != "perturbation_type"})
    source = write_lines(tmp_path / "variants.jsonl", rows)
    output = tmp_path / "pairs.jsonl"
    assert main(["-q", "data", "qrc-pairs", "--input", str(source), "--output", str(output)]) == 2
    assert f"{source}:6: no field 'perturbation_type'" in capsys.readouterr().err
    assert not output.exists()
    assert main(["-q", "data", "qrc-pairs", "--input", str(source), "--output", str(output), "--skip-bad"]) == 0
    assert "skipped 1 bad lines" in capsys.readouterr().err
    assert len(read_jsonl(output)) == 26
