"""The task definitions (one torch-free module per task) and what the commands read from them: ``task_specs``
(shapes, checks) and ``labels`` (label names)."""

import subprocess
import sys

import pytest

from mathgraph.errors import UserError
from mathgraph.labels import LABEL_MEANINGS, LABEL_NAMES, label_text
from mathgraph.task_definitions import TASK_DEFINITIONS, kpc, qam, qrc, sqr
from mathgraph.task_specs import PAIR_TASKS, TASK_NAMES, check_candidates, task_spec


def test_each_task_module_defines_its_task_and_the_registry_reads_them_in_order():
    assert TASK_NAMES == ("kpc", "qrc", "qam", "sqr")
    assert [TASK_DEFINITIONS[n] for n in TASK_NAMES] == [m.DEFINITION for m in (kpc, qrc, qam, sqr)]
    shapes = {n: (d.input_shape, d.classifies, d.metric) for n, d in TASK_DEFINITIONS.items()}
    assert shapes == {
        "kpc": ("single", True, "accuracy"),
        "qrc": ("pair", True, "accuracy"),
        "qam": ("pair", True, "accuracy"),
        "sqr": ("ranker", False, "ndcg@3"),
    }
    assert PAIR_TASKS == ("qrc", "qam")
    assert {n: d.aligned_with for n, d in TASK_DEFINITIONS.items()} == {
        "kpc": "problem",
        "qrc": "problem",
        "qam": "solution",
        "sqr": "problem",
    }
    assert task_spec("sqr").text_arguments == (2, None, "a QUERY and its CANDIDATEs")
    assert task_spec("qam").input_fields() == ("text_a", "text_b") and task_spec("kpc").input_fields("q") == ("q",)
    with pytest.raises(UserError, match="unknown task 'kpx'; known: kpc, qrc, qam, sqr"):
        task_spec("kpx")


def test_an_input_becomes_the_task_example_with_placeholder_gold():
    assert kpc.DEFINITION.input_example(("x",)) == kpc.KpcExample("x", "")
    assert qrc.DEFINITION.input_example(("a", "b"), 3) == qrc.QrcPair("input-3", "", "a", "b", "")
    assert qam.DEFINITION.input_example(("q", "s"), 1) == qam.QamPair("input-1", "", "q", "s", 0)
    assert sqr.DEFINITION.input_example(("q", ("c1", "c2", "c3")), 2) == sqr.SqrList(
        "input-2", "", "q", ("c1", "c2", "c3"), (1, 0, 0)
    )
    with pytest.raises(ValueError):  # a single-problem task given two texts
        kpc.DEFINITION.input_example(("a", "b"))


def test_labels_decode_and_are_named_where_the_task_defines_them():
    assert qam.DEFINITION.decode_label("1") == 1 and qam.DEFINITION.decode_label("0") == 0
    assert qrc.DEFINITION.decode_label("irrelevant") == "irrelevant"
    assert LABEL_NAMES == {"qam": {"1": "matches", "0": "does not match"}}
    assert set(LABEL_MEANINGS) == {"qam"}
    assert label_text("qam", 0) == "0 (does not match)" and label_text("kpc", "Algebra") == "Algebra"
    assert qam.DEFINITION.label_name(1) == "matches" and kpc.DEFINITION.label_name("Algebra") is None


def test_a_bad_input_shape_is_refused_and_candidates_are_checked():
    with pytest.raises(ValueError, match="unknown input shape 'triple'"):
        kpc.DEFINITION.__class__(
            name="x", input_shape="triple", classifies=True, metric="accuracy", example_type=object,
            make_input_example=lambda texts, position: None, title="", dataset=("", ""),
        )  # fmt: skip
    check_candidates({"candidates": ["a", "b"]})
    for bad in ({}, {"candidates": []}, {"candidates": ["a", " "]}, {"candidates": "ab"}):
        with pytest.raises(UserError, match="non-empty list of non-empty strings"):
            check_candidates(bad)


def test_the_definitions_import_no_torch():
    code = (
        "import sys, mathgraph.task_definitions, mathgraph.task_specs, mathgraph.labels, mathgraph.models.examples;"
        "print('torch' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
