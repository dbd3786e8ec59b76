"""``mathgraph.api.Predictor``, the one prediction pipeline: its three steps with stand-in models (fast), and
the command line's one TEXT writing no graph cache (the shipped model)."""

import math
import os
import subprocess
import sys

import pytest

from mathgraph.api import Predictor, check_inputs, texts_of
from mathgraph.errors import UserError


class Recorder:
    """A model that records what it was asked, and the graphs it reads from the ``ParsedGraphs`` the forward
    step passes it."""

    def __init__(self, result, parser=None):
        self.result, self.parser, self.calls, self.graphs = result, parser, [], []

    def predict(self, inputs, batch_size=32, graphs=None, rows=None):
        self.calls.append(list(inputs))
        if self.parser is not None:
            self.graphs.append(graphs.parse([t for item in inputs for t in texts_of(item)], parser=self.parser))
        return [dict(self.result) for _ in inputs]


class Fused:
    """A late-fused model (``models.late_fusion.HybridPredictor``'s shape): its own ``predict`` must not run."""

    def __init__(self, neural, sparse, weight):
        self.neural, self.sparse, self.weight = neural, sparse, weight

    def predict(self, inputs, batch_size=32, graphs=None, rows=None):
        raise AssertionError("the Predictor fuses in its postprocess step")


def test_qam_labels_are_named_once_and_other_tasks_are_left_as_they_are():
    qam = Predictor("qam", Recorder({"label": 1, "probabilities": {0: 0.25, 1: 0.75}}))
    assert qam.predict([("Q?", "S.")]) == [{"label": 1, "label_name": "matches", "probabilities": {0: 0.25, 1: 0.75}}]
    kpc = Predictor("kpc", Recorder({"label": "Algebra", "probabilities": {"Algebra": 1.0}}))
    assert kpc.predict(["x"]) == [{"label": "Algebra", "probabilities": {"Algebra": 1.0}}]


def test_inputs_are_checked_before_the_model_is_asked():
    model = Recorder({"label": "a", "probabilities": {"a": 1.0}})
    predictor = Predictor("qrc", model)
    with pytest.raises(UserError, match="input 1: qrc takes a pair"):
        predictor.predict([("a", "b"), "lone text"])
    with pytest.raises(UserError, match="input 0: text_b"):
        check_inputs("qrc", [("a", " ")])
    with pytest.raises(TypeError, match="wrap a single input in a list"):
        predictor.predict(("a", "b"))
    with pytest.raises(UserError, match="unknown task 'nope'"):
        Predictor("nope", model)
    assert model.calls == []


def test_late_fusion_runs_in_postprocess_with_the_weight_of_the_model():
    neural = Recorder({"label": "a", "probabilities": {"a": 0.8, "b": 0.2}})
    sparse = Recorder({"label": "b", "probabilities": {"a": 0.4, "b": 0.6}})
    predictor = Predictor("qrc", Fused(neural, sparse, 0.5))
    [result] = predictor.predict([("x", "y")])
    # by hand: p(a) ~ 0.8^0.5 * 0.4^0.5 = sqrt(0.32), p(b) ~ sqrt(0.12), renormalised
    p_a = math.sqrt(0.32) / (math.sqrt(0.32) + math.sqrt(0.12))
    assert result["label"] == "a"
    assert result["probabilities"]["a"] == pytest.approx(p_a, abs=1e-12)
    assert result["probabilities"]["a"] == pytest.approx(0.6202041028867288, abs=1e-12)
    assert neural.calls == sparse.calls == [[("x", "y")]]
    assert predictor.late_fusion


def test_graphs_passed_in_reach_the_model_and_nothing_is_parsed_or_written(sample_graphs, monkeypatch, tmp_path):
    """A batch job's parse stage made the graphs: the model reads them from the ``ParsedGraphs`` passed to it,
    parses nothing and writes no cache file."""
    from mathgraph.parsers import graph_cache

    monkeypatch.setenv("MATHGRAPH_CACHE_DIR", str(tmp_path / "cache"))

    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed again")

    monkeypatch.setattr(graph_cache, "parse_problems", no_parsing)
    graphs = sample_graphs[:3]
    model = Recorder({"label": "Algebra", "probabilities": {"Algebra": 1.0}}, parser="spacy")
    predictor = Predictor("kpc", model, parser="spacy")
    results = predictor.predict([g.text for g in graphs], graphs={g.text: g for g in graphs})
    assert len(results) == 3 and model.calls == [[g.text for g in graphs]]
    assert [g.to_json() for g in model.graphs[0]] == [g.to_json() for g in graphs]
    assert not (tmp_path / "cache").exists()  # no graph cache was opened
    # the models' default is the cache file again (training, bank-scale commands)
    with pytest.raises(AssertionError, match="parsed again"):
        graph_cache.parse_cached(["A text never parsed before."], parser="spacy")


def test_the_model_gets_the_graphs_only_as_arguments(sample_graphs, monkeypatch, tmp_path):
    """Nothing reaches the model but its arguments: a model that parses on its own, ignoring the ``graphs`` it
    is passed, inside the forward step, parses (the graphs went nowhere else) and reads its own cache."""
    from mathgraph.parsers import graph_cache

    monkeypatch.setenv("MATHGRAPH_CACHE_DIR", str(tmp_path / "cache"))

    class Ignoring(Recorder):
        def predict(self, inputs, batch_size=32, graphs=None, rows=None):
            self.given = graphs
            graph_cache.parse_cached(list(inputs), parser="spacy", cache=None)  # not the graphs it was passed
            return [dict(self.result) for _ in inputs]

    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed")

    monkeypatch.setattr(graph_cache, "parse_problems", no_parsing)
    graphs = {g.text: g for g in sample_graphs[:2]}
    model = Ignoring({}, parser="spacy")
    with pytest.raises(AssertionError, match="parsed"):
        Predictor("kpc", model, parser="spacy").predict(list(graphs), graphs=graphs)
    assert [g.to_json() for g in model.given.parse(list(graphs), parser="spacy")] == [
        g.to_json() for g in graphs.values()
    ]  # what it was passed held them
    assert not (tmp_path / "cache").exists()


def test_a_prediction_parses_each_problem_once_through_the_cache_it_is_given(monkeypatch, tmp_path):
    from mathgraph.parsers import graph_cache

    parsed = []
    real = graph_cache.parse_problems

    def counting(texts, **kwargs):
        parsed.extend(texts)
        return real(texts, **kwargs)

    monkeypatch.setattr(graph_cache, "parse_problems", counting)
    model = Recorder({"label": "a", "probabilities": {"a": 1.0}}, parser="spacy")
    with graph_cache.GraphCache(tmp_path / "graphs.sqlite") as cache:
        predictor = Predictor("qrc", model, parser="spacy", graph_cache=cache)
        predictor.predict([("Tom has 3 apples.", "Tom has 4 apples."), ("Tom has 3 apples.", "Ann has 2 pens.")])
        assert sorted(parsed) == ["Ann has 2 pens.", "Tom has 3 apples.", "Tom has 4 apples."]
        assert len(cache) == 3  # written where it was told
        Predictor("qrc", model, parser="spacy", graph_cache=cache).predict([("Tom has 3 apples.", "Ann has 2 pens.")])
        assert len(parsed) == 3  # the second prediction read them from the cache


def test_the_pair_alignments_of_a_prediction_are_its_own(monkeypatch):
    """A model that reads alignment features gets them from its prediction's rows, computed in preprocess
    (outside a server's model lock) and passed to it: none go to the process's training rows, and a call that
    does not name the rows passed aligns again (they reach the model by no other way)."""
    from mathgraph.models import alignment_features as features

    class Aligned(Recorder):
        aligned_with = "problem"

        def predict(self, inputs, batch_size=32, graphs=None, rows=None):
            def no_parsing(texts):
                raise AssertionError("aligned in the forward step")

            self.rows = features.alignment_features("problem", list(inputs), parse=no_parsing, rows=rows)
            with pytest.raises(AssertionError, match="aligned in the forward step"):
                features.alignment_features("problem", list(inputs), parse=no_parsing)
            return super().predict(inputs, batch_size)

    pairs = [("Tom has 3 apples. How many?", "Tom has 4 apples. How many?")]
    model = Aligned({"label": "a", "probabilities": {"a": 1.0}})
    Predictor("qrc", model).predict(pairs)
    from mathgraph.parsers.compare import align_texts

    assert model.rows.tolist() == [align_texts(pairs)[0].feature_vector()]
    assert features.pair_key("problem", *pairs[0]) not in features.TRAINING_ROWS


def test_one_text_on_the_command_line_writes_no_graph_cache(monkeypatch, tmp_path, capsys):
    from mathgraph.cli import main

    monkeypatch.setenv("MATHGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["-q", "predict", "kpc", "Find $x$ if $2x + 3 = 7$.", "--format", "json"]) == 0
    assert '"label"' in capsys.readouterr().out
    # the cache holds the ONNX sessions' optimised copies (the networks, no input of this prediction), nothing else
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["onnx-sessions"]
    assert not list((tmp_path / "cache").rglob("*.sqlite*"))


@pytest.mark.parametrize("runtime", ["onnx", "torch"])
def test_graphs_passed_to_the_shipped_model_are_its_only_graphs(monkeypatch, tmp_path, runtime):
    """The shipped package, KPC and QAM (whose head reads alignment features): graphs passed to ``predict``
    are what the model reads, with the parser patched to fail, and the results are those of a prediction that
    parsed; nothing writes a graph cache."""
    from mathgraph.parsers import graph_cache

    monkeypatch.setenv("MATHGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    question = "Tom has 3 apples and buys 4 more. How many apples does he have?"
    cases = {
        "kpc": ["Find $x$ if $2x + 3 = 7$.", "A circle has radius 3. What is its area?"],
        "qam": [(question, "3 + 4 = 7. The answer is 7."), (question, "3 + 5 = 8. The answer is 8.")],
    }
    predictors = {task: Predictor.from_pretrained("shipped", task, runtime=runtime) for task in cases}
    expected = {task: predictors[task].predict(inputs) for task, inputs in cases.items()}
    texts = list(dict.fromkeys(t for inputs in cases.values() for item in inputs for t in texts_of(item)))
    graphs = dict(zip(texts, graph_cache.parse_cached(texts, parser="spacy", cache=None)))

    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed although the graphs were passed in")

    monkeypatch.setattr(graph_cache, "parse_problems", no_parsing)
    for task, inputs in cases.items():
        assert predictors[task].predict(inputs, graphs=graphs) == expected[task]
    with pytest.raises(AssertionError, match="parsed although"):  # without them, the model's parse is the parser
        predictors["kpc"].predict(["A problem no graph was passed for."], graphs=graphs)
    # no graph cache: the cache directory holds at most the ONNX sessions' optimised copies
    assert {p.name for p in (tmp_path / "cache").glob("*")} <= {"onnx-sessions", "onnx-int8"}
    assert not list((tmp_path / "cache").rglob("*.sqlite*"))


def test_a_kpc_prediction_imports_no_alignment_code(tmp_path):
    """KPC reads one problem: predicting it on ONNX Runtime leaves the pair tasks' alignment code (and so
    scikit-learn and the solution readers) unimported, which keeps a one-TEXT command's start-up short."""
    script = (
        "import sys\n"
        "import mathgraph\n"
        "predictor = mathgraph.Predictor.from_pretrained('shipped', 'kpc', runtime='onnx')\n"
        "print(predictor.predict(['Find $x$ if $2x+3=7$.'])[0]['label'])\n"
        "loaded = [m for m in ('mathgraph.models.alignment_features', 'mathgraph.parsers.compare', 'sklearn')\n"
        "          if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    env = {**os.environ, "MATHGRAPH_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "Algebra"
