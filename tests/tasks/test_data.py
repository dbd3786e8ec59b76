"""Task data: QRC/SQR/QAM builders on the bundled GSM-Plus sample and small in-test fixtures, splits,
validation and the CLI."""

import json
from collections import Counter
from pathlib import Path

import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from mathgraph.cli import main
from mathgraph.jsonl import JsonlError, read_rows
from mathgraph.tasks.data import (
    IRRELEVANT,
    PERTURBATION_TYPES,
    QRC_LABELS,
    build_qam_number_swap,
    build_qam_pairs,
    build_qrc_pairs,
    build_sqr_lists,
    group_seeds,
    load_kpc,
    load_qam,
    load_qrc,
    load_sqr,
    read_seeds,
    split_by_group,
    split_rows,
)

SAMPLE = Path(__file__).resolve().parents[2] / "mathgraph" / "data" / "gsmplus_sample.jsonl"
VARIANTS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
SEED_QUESTIONS = list(dict.fromkeys(row["seed_question"] for row in VARIANTS))
VARIANTS_OF = {
    q: {r["question"]: r["perturbation_type"] for r in VARIANTS if r["seed_question"] == q} for q in SEED_QUESTIONS
}
SEED_OF = {r["question"]: r["seed_question"] for r in VARIANTS}
GSM8K_ROWS = [
    {
        "question": f"Tom has {n} apples and buys {n + 2} more. How many apples does he have?",
        "answer": f"He has {n} + {n + 2} = <<{n}+{n + 2}={2 * n + 2}>>{2 * n + 2} apples.\n#### {2 * n + 2}",
    }
    for n in range(1, 9)
]
# Pairs of near-identical questions on three topics; the third apples question is a rewording of the first
# with the very same solution text, so it must never give the first its negative.
SIMILAR_QAM_ROWS = [
    {
        "question": "Tom has 3 red apples and buys 5 green apples at the market. How many apples does Tom have?",
        "answer": "3 + 5 = 8 apples.\n#### 8",
    },
    {
        "question": "Tom has 4 red apples and buys 6 green apples at the market. How many apples does Tom have?",
        "answer": "4 + 6 = 10 apples.\n#### 10",
    },
    {
        "question": "A train travels 60 miles in 2 hours on the railway. What is the speed of the train?",
        "answer": "60 / 2 = 30 miles per hour.\n#### 30",
    },
    {
        "question": "A train travels 90 miles in 3 hours on the railway. What is the speed of the train?",
        "answer": "90 / 3 = 30 miles per hour, as 90 / 3 = 30.\n#### 30",
    },
    {
        "question": "Paint costs $7 per can and Lisa paints 4 walls, one can per wall. How much does the paint cost?",
        "answer": "7 * 4 = $28.\n#### 28",
    },
    {
        "question": "Paint costs $9 per can and Lisa paints 2 walls, one can per wall. How much does the paint cost?",
        "answer": "9 * 2 = $18.\n#### 18",
    },
    {
        "question": "Tom has 3 red apples and then buys 5 green apples at the market. How many apples does Tom have?",
        "answer": "3 + 5 = 8 apples.\n#### 8",
    },
]
# Two GSM-Plus seeds, solutions named after their question so labels can be checked by name.
SWAP_VARIANTS = [
    {
        "seed_question": f"S{s}",
        "seed_solution": f"sol S{s}",
        "question": f"S{s} {kind}",
        "solution": f"sol S{s}" if kind in ("problem understanding", "distraction insertion") else f"sol S{s} {kind}",
        "perturbation_type": kind,
    }
    for s in (0, 1)
    for kind in PERTURBATION_TYPES
] + [
    # a number-changing variant that kept the seed's solution text: its crossed pairs would be correct
    {
        "seed_question": "S1",
        "seed_solution": "sol S1",
        "question": "S1 same solution",
        "solution": "sol S1",
        "perturbation_type": "digit expansion",
    },
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
    pairs = build_qrc_pairs(seeds, random_state=0)
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
    assert build_qrc_pairs(seeds, random_state=3) == build_qrc_pairs(seeds, random_state=3)
    irrelevant = [
        [p["text_b"] for p in build_qrc_pairs(seeds, random_state=s) if p["label"] == IRRELEVANT] for s in range(6)
    ]
    assert len({tuple(texts) for texts in irrelevant}) > 1
    more = build_qrc_pairs(seeds, random_state=0, irrelevant_per_seed=3)
    assert Counter(p["label"] for p in more)[IRRELEVANT] == 9
    assert len({(p["text_a"], p["text_b"]) for p in more}) == len(more)


# ---------------------------------------------------------------- SQR


# README definition: 2 keeps the solution steps, 1 changes them, 0 critical thinking (and other seeds).
GRADE = {
    "numerical substitution": 2,
    "digit expansion": 2,
    "integer-decimal-fraction conversion": 2,
    "problem understanding": 2,
    "distraction insertion": 2,
    "adding operation": 1,
    "reversing operation": 1,
    "critical thinking": 0,
}


def test_sqr_lists_grade_own_variants_by_type_and_other_seeds_zero(seeds):
    lists = build_sqr_lists(seeds, random_state=0)
    assert [row["query"] for row in lists] == SEED_QUESTIONS
    for row in lists:
        candidates, relevance = row["candidates"], row["relevance"]
        assert set(row) == {"id", "group", "query", "candidates", "relevance"}
        assert len(candidates) == len(relevance) == len(set(candidates)) == 12
        own = VARIANTS_OF[row["query"]]
        assert set(own) < set(candidates)  # all 8 variants of the seed
        for candidate, grade in zip(candidates, relevance):
            if candidate in own:
                assert grade == GRADE[own[candidate]]
            else:
                assert grade == 0 and SEED_OF[candidate] != row["query"]
        assert Counter(relevance) == {2: 5, 1: 2, 0: 5}  # 4 of the zeros are other seeds' variants
    assert build_sqr_lists(seeds, random_state=0) == lists
    assert build_sqr_lists(seeds, random_state=1) != lists  # another shuffle
    assert [sorted(r["candidates"]) for r in build_sqr_lists(seeds, random_state=1)] == [
        sorted(r["candidates"]) for r in lists
    ]


def test_sqr_other_seed_candidates_are_the_most_tfidf_similar(seeds):
    vectorizer = TfidfVectorizer(sublinear_tf=True).fit(SEED_QUESTIONS + [r["question"] for r in VARIANTS])
    for row in build_sqr_lists(seeds, random_state=0):
        others = [r["question"] for r in VARIANTS if r["seed_question"] != row["query"]]
        similarity = dict(
            zip(others, cosine_similarity(vectorizer.transform([row["query"]]), vectorizer.transform(others))[0])
        )
        chosen = [c for c in row["candidates"] if c in similarity]
        assert len(chosen) == 4
        assert min(similarity[c] for c in chosen) >= max(v for c, v in similarity.items() if c not in chosen)


def test_sqr_rejects_bad_sizes_unknown_types_and_lists_without_a_grade_2(seeds):
    with pytest.raises(ValueError, match="6 to 15"):
        build_sqr_lists(seeds, other_seeds=8)  # 8 + 8 = 16 candidates
    assert [len(r["candidates"]) for r in build_sqr_lists(seeds, other_seeds=7)] == [15] * 3
    renamed = [dict(r, perturbation_type="made up") if i == 0 else r for i, r in enumerate(VARIANTS)]
    with pytest.raises(ValueError, match="made up"):
        build_sqr_lists(group_seeds(renamed))
    no_grade_2 = [r for r in VARIANTS if r["seed_question"] != SEED_QUESTIONS[0] or GRADE[r["perturbation_type"]] < 2]
    with pytest.raises(ValueError, match="seed-000 has no variant of relevance 2"):
        build_sqr_lists(group_seeds(no_grade_2))


# ---------------------------------------------------------------- QAM


def test_qam_hard_negatives_are_the_most_similar_other_questions_solution():
    pairs = build_qam_pairs(SIMILAR_QAM_ROWS, random_state=0)
    assert pairs == build_qam_pairs(SIMILAR_QAM_ROWS, random_state=5, negatives="hard")  # no randomness
    assert len(pairs) == 2 * len(SIMILAR_QAM_ROWS) and len({p["id"] for p in pairs}) == len(pairs)
    solution_of = {r["question"]: r["answer"] for r in SIMILAR_QAM_ROWS}
    negative_of = {p["text_a"]: p["text_b"] for p in pairs if p["label"] == 0}
    for i, row in enumerate(SIMILAR_QAM_ROWS):
        members = [p for p in pairs if p["group"] == f"q-{i:05d}"]
        assert [(p["label"], p["text_a"]) for p in members] == [(1, row["question"]), (0, row["question"])]
        assert members[0]["text_b"] == row["answer"] and negative_of[row["question"]] != row["answer"]
    answers = [r["answer"] for r in SIMILAR_QAM_ROWS]
    # each question's topic partner; for question 6, question 0 is as close as 1 (TF-IDF drops one-digit
    # numbers) and earlier, but has the same solution text, so 1's is used
    assert [answers.index(negative_of[r["question"]]) for r in SIMILAR_QAM_ROWS] == [1, 0, 3, 2, 5, 4, 1]
    assert all(negative_of[q] != solution_of[q] for q in solution_of)


def test_qam_random_negatives_are_other_solutions_and_follow_the_seed():
    pairs = build_qam_pairs(GSM8K_ROWS, random_state=0, negatives="random")
    solution_of = {r["question"]: r["answer"] for r in GSM8K_ROWS}
    for pair in pairs:
        assert (pair["text_b"] == solution_of[pair["text_a"]]) == (pair["label"] == 1)
        assert pair["text_b"] in solution_of.values()
    assert [p["label"] for p in pairs] == [1, 0] * len(GSM8K_ROWS)
    assert build_qam_pairs(GSM8K_ROWS, random_state=0, negatives="random") == pairs
    assert any(build_qam_pairs(GSM8K_ROWS, random_state=s, negatives="random") != pairs for s in range(1, 4))
    with pytest.raises(ValueError, match="negatives must be one of"):
        build_qam_pairs(GSM8K_ROWS, negatives=2)
    with pytest.raises(ValueError, match="distinct solutions"):
        build_qam_pairs([{"question": f"q{i}", "answer": "same"} for i in range(3)])


def test_qam_number_swap_pairs_are_labelled_by_whose_numbers_they_hold():
    pairs = build_qam_number_swap(SWAP_VARIANTS)
    for pair in pairs:
        # a question "S0 digit expansion" is solved by "sol S0 digit expansion", the seed "S0" by "sol S0"
        assert pair["label"] == int(pair["text_b"] == f"sol {pair['text_a']}"), pair
        assert pair["group"] == f"seed-00{pair['text_a'][1]}"
    swap = (
        "numerical substitution",
        "digit expansion",
        "integer-decimal-fraction conversion",
        "adding operation",
        "reversing operation",
    )
    for s in (0, 1):
        members = [p for p in pairs if p["group"] == f"seed-00{s}"]
        assert len(members) == 1 + 3 * len(swap)  # the same-solution variant of S1 is skipped
        assert sum(p["text_a"] == f"S{s}" and p["label"] == 1 for p in members) == 1
        for kind in swap:
            assert {(p["text_a"], p["text_b"], p["label"]) for p in members if kind in p["text_a"] + p["text_b"]} == {
                (f"S{s} {kind}", f"sol S{s} {kind}", 1),
                (f"S{s} {kind}", f"sol S{s}", 0),
                (f"S{s}", f"sol S{s} {kind}", 0),
            }
        assert not any(
            kind in p["text_a"] + p["text_b"]
            for p in members
            for kind in ("problem understanding", "distraction insertion", "critical thinking")
        )
    assert Counter(p["label"] for p in pairs) == {1: 12, 0: 20} and len({p["id"] for p in pairs}) == 32
    assert {p["group"] for p in pairs} == {s.group for s in group_seeds(SWAP_VARIANTS)}
    with pytest.raises(ValueError, match="seed_solution"):
        build_qam_number_swap([{k: v for k, v in SWAP_VARIANTS[0].items() if k != "seed_solution"}])
    with pytest.raises(ValueError, match="no variants of types"):
        build_qam_number_swap([r for r in SWAP_VARIANTS if r["perturbation_type"] == "critical thinking"])


# ---------------------------------------------------------------- splits


def test_group_split_keeps_groups_whole_adds_up_and_is_deterministic():
    rows = [{"group": f"g{g}", "n": i} for g in range(40) for i in range(3)]
    splits = split_by_group(rows, "group", dev=0.1, test=0.2, seed=5)
    groups = {name: {r["group"] for r in part} for name, part in splits.items()}
    assert (
        not (groups["train"] & groups["dev"])
        and not (groups["train"] & groups["test"])
        and not (groups["dev"] & groups["test"])
    )
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
    path = write_lines(
        tmp_path / "in.jsonl",
        [
            json.dumps({"problem": "x", "subject": "Algebra"}),
            "",
            json.dumps({"problem": "y"}),
            "[1, 2]",
            json.dumps({"problem": "z", "subject": " "}),
        ],
    )
    with pytest.raises(JsonlError, match=f"^{path}:3: no field 'subject'"):
        read_rows(path, ("problem", "subject"))
    rows, bad = read_rows(path, ("problem", "subject"), skip_bad=True)
    assert rows == [(1, {"problem": "x", "subject": "Algebra"})]
    assert [(e.line, e.reason.split(" (")[0]) for e in bad] == [
        (3, "no field 'subject'"),
        (4, "expected a JSON object, got list"),
        (5, "field 'subject' is empty"),
    ]
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
    assert [(lst.candidates, lst.relevance) for lst in loaded] == [
        (tuple(r["candidates"]), tuple(r["relevance"])) for r in sqr_rows
    ]
    assert all(type(g) is int for g in loaded[0].relevance)

    good = sqr_rows[0]
    old = {k: v for k, v in good.items() if k != "relevance"} | {"id": "old", "relevant": [0, 3]}
    path = write_lines(tmp_path / "old_sqr.jsonl", [json.dumps(good), json.dumps(old)])
    assert load_sqr(path)[1].relevance == (2, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0)  # old format: relevant -> 2

    bad_lists = {
        "5 candidates": {**good, "candidates": good["candidates"][:5], "relevance": [2, 0, 0, 0, 0]},
        "11 grades for 12 candidates": {**good, "relevance": good["relevance"][:-1]},
        "grades 0..2": {**good, "relevance": [3] + good["relevance"][1:]},
        "list of integers, one per candidate": {**good, "relevance": [True] + good["relevance"][1:]},
        "no candidate of relevance 2": {**good, "relevance": [min(g, 1) for g in good["relevance"]]},
        "no field 'relevance'": {k: v for k, v in good.items() if k != "relevance"},
        "non-empty list of integers": {**old, "relevant": []},
        "distinct indices in 0..11": {**old, "relevant": [0, 12]},
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
    assert main(["data", "qrc-pairs", "--input", str(SAMPLE), "--output", str(output), "--seed", "4"]) == 0
    assert read_jsonl(output) == build_qrc_pairs(read_seeds(SAMPLE)[0], random_state=4)
    assert "irrelevant: 3" in capsys.readouterr().err
    assert (
        main(
            [
                "data",
                "split",
                "--input",
                str(output),
                "--group-field",
                "group",
                "--dev",
                "0.34",
                "--test",
                "0.34",
                "--output-dir",
                str(tmp_path / "splits"),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    parts = {name: read_jsonl(tmp_path / "splits" / f"pairs.{name}.jsonl") for name in ("train", "dev", "test")}
    assert [len(rows) for rows in parts.values()] == [9, 9, 9] and "train: 9 rows, 1 groups" in err
    assert len({r["group"] for rows in parts.values() for r in rows}) == 3


def test_cli_sqr_lists_and_qam_pairs(tmp_path, capsys):
    lists = tmp_path / "lists.jsonl"
    assert main(["data", "sqr-lists", "--input", str(SAMPLE), "--output", str(lists), "--seed", "2"]) == 0
    assert read_jsonl(lists) == build_sqr_lists(read_seeds(SAMPLE)[0], random_state=2)
    assert [(len(r.candidates), Counter(r.relevance)) for r in load_sqr(lists)] == [(12, {2: 5, 1: 2, 0: 5})] * 3
    err = capsys.readouterr().err
    assert "wrote 3 rows" in err and "12 candidates, relevance 2/1/0: 5/2/5: 3" in err
    assert main(["data", "sqr-lists", "--input", str(SAMPLE), "--output", str(lists), "--other-seeds", "6"]) == 0
    assert {len(r.candidates) for r in load_sqr(lists)} == {14}

    source = write_lines(tmp_path / "gsm8k.jsonl", [json.dumps(r) for r in SIMILAR_QAM_ROWS])
    qam = tmp_path / "qam.jsonl"
    assert main(["data", "qam-pairs", "--input", str(source), "--output", str(qam)]) == 0
    assert read_jsonl(qam) == build_qam_pairs(SIMILAR_QAM_ROWS, negatives="hard")
    assert "7 questions, hard negatives; label 0: 7, 1: 7" in capsys.readouterr().err
    assert (
        main(
            [
                "data",
                "qam-pairs",
                "--input",
                str(source),
                "--output",
                str(qam),
                "--limit",
                "5",
                "--negatives",
                "random",
                "--seed",
                "3",
            ]
        )
        == 0
    )
    assert read_jsonl(qam) == build_qam_pairs(SIMILAR_QAM_ROWS[:5], random_state=3, negatives="random")
    assert Counter(p.label for p in load_qam(qam)) == {1: 5, 0: 5}
    assert "5 questions, random negatives; label 0: 5, 1: 5" in capsys.readouterr().err

    swap = tmp_path / "swap.jsonl"
    assert main(["data", "qam-pairs", "--source", "gsmplus", "--input", str(SAMPLE), "--output", str(swap)]) == 0
    assert read_jsonl(swap) == build_qam_number_swap(VARIANTS)
    loaded = load_qam(swap)
    assert {p.group for p in loaded} == {"seed-000", "seed-001", "seed-002"}
    counts = Counter(p.label for p in loaded)
    assert f"3 seeds, number-swap pairs; label 0: {counts[0]}, 1: {counts[1]}" in capsys.readouterr().err
    assert (
        main(
            [
                "data",
                "qam-pairs",
                "--source",
                "gsmplus",
                "--input",
                str(SAMPLE),
                "--output",
                str(swap),
                "--negatives",
                "random",
            ]
        )
        == 2
    )
    assert "--negatives apply to --source gsm8k only" in capsys.readouterr().err


def test_cli_stratified_split_next_to_input(tmp_path, capsys):
    source = write_lines(
        tmp_path / "math.jsonl",
        [json.dumps({"problem": f"p{i}", "subject": ["Algebra", "Geometry"][i % 2]}) for i in range(40)],
    )
    assert (
        main(
            [
                "-q",
                "data",
                "split",
                "--input",
                str(source),
                "--stratify-field",
                "subject",
                "--dev",
                "0.1",
                "--test",
                "0.1",
            ]
        )
        == 0
    )
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
    assert "skipped 1 bad line" in capsys.readouterr().err
    assert len(read_jsonl(output)) == 26


def test_a_json_error_names_its_column_on_the_line(tmp_path):
    path = write_lines(tmp_path / "in.jsonl", ['{"problem": "x"', '{"problem" "y"}'])
    rows, bad = read_rows(path, ("problem",), skip_bad=True)
    assert rows == []
    # the first line ends after column 15 (the missing "}" would be column 16); the second lacks its ":" at 12
    assert [(e.line, e.reason) for e in bad] == [
        (1, "not valid JSON (Expecting ',' delimiter at column 16)"),
        (2, "not valid JSON (Expecting ':' delimiter at column 12)"),
    ]


def test_sqr_rows_need_a_list_of_candidate_texts(tmp_path):
    """``read_inputs`` and the prediction commands share one check of SQR candidates (``check_candidates``)."""
    from mathgraph.tasks.data import read_inputs

    source = tmp_path / "sqr.jsonl"
    rows = [
        {"query": "Find $x$.", "candidates": ["Find $y$.", "Solve $x+1=2$."]},
        {"query": "Find $x$.", "candidates": []},
        {"query": "Find $x$.", "candidates": ["ok", "  "]},
        {"query": "Find $x$.", "candidates": "Find $y$."},
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with pytest.raises(JsonlError, match=r"sqr\.jsonl:2: field 'candidates' must be a non-empty list"):
        read_inputs("sqr", source)
    good, inputs, bad = read_inputs("sqr", source, skip_bad=True)
    assert [line for line, _ in good] == [1] and [error.line for error in bad] == [2, 3, 4]
    assert inputs == [("Find $x$.", ["Find $y$.", "Solve $x+1=2$."])]
