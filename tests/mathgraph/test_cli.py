"""The `mathgraph parse` command on files with good and bad lines (real spaCy parser)."""

import json
import warnings

import pytest
import torch

from mathgraph.cli import main
from mathgraph.samples import sample_problems

PROBLEMS = [row["problem"] for row in sample_problems()]


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_graphs(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_file_graphs_keep_input_order_with_two_workers(tmp_path):
    source = write_lines(tmp_path / "in.jsonl", [json.dumps({"problem": p, "n": i}) for i, p in enumerate(PROBLEMS)])
    output = tmp_path / "out.jsonl"
    assert (
        main(["-q", "parse", "--input", str(source), "--output", str(output), "--workers", "2", "--batch-size", "2"])
        == 0
    )
    graphs = read_graphs(output)
    assert [g["text"] for g in graphs] == PROBLEMS
    assert [g["line"] for g in graphs] == list(range(1, len(PROBLEMS) + 1))
    first = graphs[0]
    assert {"nodes", "edges", "formulas", "parser", "schema_version"} <= set(first)
    assert {"id", "kind", "label"} <= set(first["nodes"][0]) and {"src", "dst", "relation"} == set(first["edges"][0])
    assert {"latex", "span", "status"} <= set(first["formulas"][0])
    assert first["parser"] == "spacy"
    assert "id" not in first  # these rows have none


def test_file_graphs_keep_the_input_rows_id(tmp_path):
    source = write_lines(
        tmp_path / "in.jsonl", [json.dumps({"id": f"q{i}", "problem": p}) for i, p in enumerate(PROBLEMS[:2])]
    )
    output = tmp_path / "out.jsonl"
    assert main(["-q", "parse", "--input", str(source), "--output", str(output)]) == 0
    assert [(g["id"], g["line"]) for g in read_graphs(output)] == [("q0", 1), ("q1", 2)]


def test_bad_line_stops_with_file_and_line_and_writes_nothing(tmp_path, capsys):
    source = write_lines(
        tmp_path / "in.jsonl", [json.dumps({"problem": PROBLEMS[0]}), "{not json", json.dumps({"problem": "x"})]
    )
    output = tmp_path / "out.jsonl"
    assert main(["-q", "parse", "--input", str(source), "--output", str(output)]) == 2
    assert f"{source}:2: not valid JSON" in capsys.readouterr().err
    assert not output.exists()


@pytest.mark.parametrize(
    "row, reason",
    [
        ({"question": "What is $1+1$?"}, "no field 'problem' (fields: question)"),
        ({"problem": 7}, "field 'problem' must be a string, got int"),
        ({"problem": "   "}, "field 'problem' is empty"),
        ([1, 2], "expected a JSON object, got list"),
    ],
)
def test_each_kind_of_bad_line_is_named(tmp_path, capsys, row, reason):
    source = write_lines(tmp_path / "in.jsonl", [json.dumps(row)])
    assert main(["-q", "parse", "--input", str(source), "--output", str(tmp_path / "out.jsonl")]) == 2
    assert f"{source}:1: {reason}" in capsys.readouterr().err


def test_skip_bad_counts_and_reports_and_keeps_order(tmp_path, capsys):
    lines = [
        json.dumps({"problem": PROBLEMS[0]}),
        "not json at all",
        "",
        json.dumps({"text": "wrong field"}),
        json.dumps({"problem": PROBLEMS[1]}),
        json.dumps({"problem": PROBLEMS[2]}),
    ]
    source = write_lines(tmp_path / "in.jsonl", lines)
    output = tmp_path / "out.jsonl"
    assert main(["parse", "--input", str(source), "--output", str(output), "--skip-bad"]) == 0
    graphs = read_graphs(output)
    assert [g["text"] for g in graphs] == PROBLEMS[:3]
    assert [g["line"] for g in graphs] == [1, 5, 6]
    err = capsys.readouterr().err
    assert "wrote 3 graphs" in err and "skipped 2 bad lines" in err
    assert f"{source}:2: not valid JSON" in err and f"{source}:4: no field 'problem'" in err


def test_one_text_as_json_and_drawn(tmp_path, capsys):
    picture = tmp_path / "graph.png"
    assert main(["-q", "parse", "Find $x$ if $2x+3=7$.", "--format", "json", "--draw", str(picture)]) == 0
    graph = json.loads(capsys.readouterr().out)
    assert [f["latex"] for f in graph["formulas"]] == ["x", "2x+3=7"]
    assert picture.stat().st_size > 5_000


def test_sample_as_text_tree(capsys):
    assert main(["-q", "parse", "--sample", "math-1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("parser: spacy") and "math→ \\triangle" in out


def test_usage_errors_are_clear(tmp_path, capsys):
    assert main(["-q", "parse"]) == 2
    assert "give the problem TEXT" in capsys.readouterr().err
    assert main(["-q", "parse", "--input", str(tmp_path / "missing.jsonl"), "--output", str(tmp_path / "o.jsonl")]) == 2
    assert "missing.jsonl" in capsys.readouterr().err
    assert main(["-q", "parse", "--sample", "99"]) == 2
    assert "no sample '99'" in capsys.readouterr().err
    # a picture format matplotlib cannot write is refused before anything is parsed or printed
    assert main(["-q", "parse", "--sample", "math-1", "--draw", str(tmp_path / "graph.txt")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "cannot draw a .txt picture" in err and "png" in err
    assert not (tmp_path / "graph.txt").exists()


def test_encode_from_texts_and_from_parsed_graphs(tmp_path, tiny_encoder, capsys):
    import numpy as np

    model = tmp_path / "model"
    tiny_encoder.save_pretrained(model)
    source = write_lines(tmp_path / "in.jsonl", [json.dumps({"question": p}) for p in PROBLEMS[:4]])
    graphs = tmp_path / "graphs.jsonl"
    assert main(["-q", "parse", "--input", str(source), "--text-field", "question", "--output", str(graphs)]) == 0
    from_texts, from_graphs = tmp_path / "a.npy", tmp_path / "b.npy"
    common = ["--model", str(model), "--text-field", "question", "--batch-size", "3"]
    assert main(["encode", "--input", str(source), "--output", str(from_texts), *common]) == 0
    assert (
        main(["-q", "encode", "--input", str(source), "--graphs", str(graphs), "--output", str(from_graphs), *common])
        == 0
    )
    vectors = np.load(from_texts)
    assert vectors.shape == (4, 48) and vectors.dtype == np.float32
    assert np.allclose(np.load(from_graphs), vectors, atol=1e-5)
    assert np.allclose(vectors, tiny_encoder.encode(PROBLEMS[:4]), atol=1e-5)
    assert "wrote 4 x 48 float32 vectors" in capsys.readouterr().err

    # Graphs of other problems, or a corrupt graph line, are named.
    other = write_lines(tmp_path / "other.jsonl", [json.dumps({"question": p}) for p in PROBLEMS[4:8]])
    assert (
        main(["-q", "encode", "--input", str(other), "--graphs", str(graphs), "--output", str(from_graphs), *common])
        == 2
    )
    assert f"{other}:1: its graph in {graphs} is of another text" in capsys.readouterr().err
    broken = write_lines(tmp_path / "broken.jsonl", [graphs.read_text().splitlines()[0], '{"schema_version": 2}'])
    assert main(["-q", "encode", "--graphs", str(broken), "--output", str(from_graphs), "--model", str(model)]) == 2
    assert f"{broken}:2: malformed graph" in capsys.readouterr().err


def test_pretrain_command_writes_an_encoder(tmp_path, tiny_encoder, capsys):
    from mathgraph.models.encoder import MathEncoder

    start = tmp_path / "start"
    tiny_encoder.save_pretrained(start)
    corpus = write_lines(tmp_path / "corpus.jsonl", [json.dumps({"question": p}) for p in PROBLEMS])
    output = tmp_path / "pretrained"
    assert (
        main(
            [
                "pretrain",
                "--corpus",
                f"{corpus}:question",
                "--output",
                str(output),
                "--model",
                str(start),
                "--steps",
                "2",
                "--batch-size",
                "4",
                "--tasks",
                "mlm,dtc",
            ]
        )
        == 0
    )
    assert "pre-trained 2 steps" in capsys.readouterr().err
    assert MathEncoder.from_pretrained(output).encode(PROBLEMS[:2]).shape == (2, 48)
    assert (
        main(
            [
                "-q",
                "pretrain",
                "--corpus",
                str(corpus),
                "--output",
                str(output),
                "--model",
                str(start),
                "--architecture",
                "bert",
                "--tasks",
                "mlm,tgcl",
            ]
        )
        == 2
    )
    assert "only the mlm task applies" in capsys.readouterr().err


@pytest.fixture
def qrc_pairs_and_start(tmp_path, tiny_encoder):
    """QRC pairs built by `mathgraph data qrc-pairs` from the bundled GSM-Plus sample, and the tiny start model."""
    from pathlib import Path

    import mathgraph

    sample = Path(mathgraph.__file__).parent / "data" / "gsmplus_sample.jsonl"
    pairs = tmp_path / "pairs.jsonl"
    assert main(["-q", "data", "qrc-pairs", "--input", str(sample), "--output", str(pairs)]) == 0
    start = tmp_path / "start"
    tiny_encoder.save_pretrained(start)
    return pairs, start


def test_train_and_evaluate_commands(tmp_path, qrc_pairs_and_start, capsys):
    pairs, start = qrc_pairs_and_start
    for encoder in ("tfidf", "comus"):
        output = tmp_path / encoder
        assert (
            main(
                [
                    "-q",
                    "train",
                    "qrc",
                    "--train",
                    str(pairs),
                    "--dev",
                    str(pairs),
                    "--output",
                    str(output),
                    "--model",
                    str(start),
                    "--architecture",
                    encoder,
                    "--epochs",
                    "1",
                    "--batch-size",
                    "9",
                ]
            )
            == 0
        )
        capsys.readouterr()
        assert main(["-q", "evaluate", "qrc", "--model", str(output), "--data", str(pairs)]) == 0
        metrics = json.loads(capsys.readouterr().out)
        assert metrics["n"] == 27 and 0 <= metrics["accuracy"] <= 1 and "macro_f1" in metrics
    assert main(["-q", "evaluate", "qrc", "--model", str(tmp_path / "nowhere"), "--data", str(pairs)]) == 2
    assert "no such model: " in (err := capsys.readouterr().err) and "nowhere; " in err
    (tmp_path / "not-a-model").mkdir()
    assert main(["-q", "evaluate", "qrc", "--model", str(tmp_path / "not-a-model"), "--data", str(pairs)]) == 2
    assert "holds nothing mathgraph can load" in capsys.readouterr().err


def test_training_flags_reach_the_training_arguments(tmp_path, qrc_pairs_and_start, capsys):
    pairs, start = qrc_pairs_and_start
    cache = tmp_path / "graphs.sqlite"
    capsys.readouterr()
    threads = torch.get_num_threads()
    try:
        assert (
            main(
                [
                    "-q",
                    "train",
                    "qrc",
                    "--train",
                    str(pairs),
                    "--dev",
                    str(pairs),
                    "--output",
                    str(tmp_path / "out"),
                    "--model",
                    str(start),
                    "--epochs",
                    "2",
                    "--batch-size",
                    "9",
                    "--freeze-text-layers",
                    "1",
                    "--threads",
                    "1",
                    "--graph-cache",
                    str(cache),
                    "--warmup-ratio",
                    "0",
                ]
            )
            == 0
        )
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)
    printed = capsys.readouterr().out.splitlines()  # a JSON record per epoch, then the result
    result = json.loads(printed[-1])
    assert [json.loads(line)["epoch"] for line in printed[:-1]] == [1, 2]
    assert [r["epoch"] for r in result["history"]] == [1, 2]
    assert all(r["prefix_cache_mib"] > 0 for r in result["history"])  # --freeze-text-layers reached the model
    assert cache.is_file()  # --graph-cache reached the feature store
    saved = json.loads((tmp_path / "out" / "checkpoint-last" / "trainer_state.json").read_text())["arguments"]
    assert saved["threads"] == 1 and saved["warmup_ratio"] == 0 and saved["batch_size"] == 9
    # a new model's GAT width applies to --model untrained only
    assert (
        main(
            [
                "-q",
                "train",
                "qrc",
                "--train",
                str(pairs),
                "--output",
                str(tmp_path / "x"),
                "--model",
                str(start),
                "--gat-heads",
                "12",
            ]
        )
        == 2
    )
    assert "apply to --model untrained" in capsys.readouterr().err
    # a prefix that reaches into the fusion layers is refused before training
    assert (
        main(
            [
                "-q",
                "train",
                "qrc",
                "--train",
                str(pairs),
                "--output",
                str(tmp_path / "y"),
                "--model",
                str(start),
                "--freeze-text-layers",
                "2",
            ]
        )
        == 2
    )
    assert "--freeze-text-layers must be in 1..1" in capsys.readouterr().err


def test_train_multitask_command_and_evaluate(tmp_path, tiny_encoder, capsys):
    from pathlib import Path

    import mathgraph

    sample = Path(mathgraph.__file__).parent / "data" / "gsmplus_sample.jsonl"
    pairs, qam = tmp_path / "pairs.jsonl", tmp_path / "qam.jsonl"
    assert main(["-q", "data", "qrc-pairs", "--input", str(sample), "--output", str(pairs)]) == 0
    assert (
        main(["-q", "data", "qam-pairs", "--input", str(sample), "--output", str(qam), "--solution-field", "solution"])
        == 0
    )
    start, output = tmp_path / "start", tmp_path / "multi"
    tiny_encoder.save_pretrained(start)
    assert (
        main(
            [
                "-q",
                "train",
                "multitask",
                "--task",
                f"qrc:{pairs}:{pairs}",
                "--task",
                f"qam:{qam}",
                "--output",
                str(output),
                "--model",
                str(start),
                "--adapter",
                "moe",
                "--moe-experts",
                "2",
                "--task-prompts",
                "--sampling",
                "uniform",
                "--label-space",
                "unified",
                "--epochs",
                "1",
                "--batch-size",
                "8",
            ]
        )
        == 0
    )
    assert json.loads((output / "multitask_config.json").read_text())["label_space"] == "unified"
    capsys.readouterr()
    assert main(["-q", "evaluate", "qam", "--model", str(output), "--data", str(qam)]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 48
    html, png = tmp_path / "routes.html", tmp_path / "routes.png"
    text = "Find $x$ if $2x = 6$."
    assert main(["-q", "routes", "--model", str(output), text, "--task", "qam", "--output", str(html)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 2 and printed[0].startswith("layer 1: [CLS]/") and " [TASK]/" in printed[0]
    assert "expert" in html.read_text() and "task <b>qam</b>" in html.read_text()
    assert main(["-q", "routes", "--model", str(output), text, "--output", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert main(["-q", "routes", "--model", str(start), text]) == 2
    assert "not a multi-task model" in capsys.readouterr().err
    assert main(["-q", "routes", "--model", str(output), text, "Two apples.", "--output", str(png)]) == 2
    assert "give one TEXT" in capsys.readouterr().err
    assert main(["-q", "train", "multitask", "--train", str(pairs), "--output", str(output)]) == 2
    assert "--task TASK:TRAIN" in capsys.readouterr().err
    assert main(["-q", "train", "multitask", "--task", "nope:x.jsonl", "--output", str(output)]) == 2
    assert "TASK one of" in capsys.readouterr().err


def test_simcse_index_search_and_refine_commands(tmp_path, tiny_encoder, capsys):
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer
    from pathlib import Path

    import mathgraph

    class FakeLLM(BaseHTTPRequestHandler):
        """An OpenAI-compatible endpoint whose every solution ends in '#### 42'."""

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            data = json.dumps({"choices": [{"message": {"content": "So the total is 42.\n#### 42"}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    sample = Path(mathgraph.__file__).parent / "data" / "gsmplus_sample.jsonl"
    start, tuned, index = tmp_path / "start", tmp_path / "simcse", tmp_path / "index"
    tiny_encoder.save_pretrained(start)
    assert (
        main(
            [
                "-q",
                "train",
                "simcse",
                "--corpus",
                f"{sample}:question",
                "--output",
                str(tuned),
                "--model",
                str(start),
                "--steps",
                "2",
                "--batch-size",
                "8",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["steps"] == 2
    assert (
        main(
            [
                "-q",
                "index",
                "build",
                "--input",
                str(sample),
                "--text-field",
                "question",
                "--model",
                str(tuned),
                "--output",
                str(index),
            ]
        )
        == 0
    )
    question = json.loads(sample.read_text().splitlines()[3])["question"]
    capsys.readouterr()
    assert main(["-q", "search", "--index", str(index), question, "-k", "3", "--format", "json", "--no-hybrid"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert len(hits) == 3 and hits[0]["index"] == 3 and hits[0]["score"] == pytest.approx(1.0, abs=1e-4)
    # by default the shipped package's alignment step is off (fitted on bank lists, dev kept weight 0):
    # --hybrid fuses with TF-IDF at the shipped model's search weight: the question itself still comes first
    assert main(["-q", "search", "--index", str(index), question, "-k", "3", "--format", "json", "--hybrid"]) == 0
    fused = json.loads(capsys.readouterr().out)
    # the skeleton channel's cosine fusion: the question itself is 1 on every channel, and its numbers are the
    # query's, so its fused score is 1 plus the numbers bonus; the other rows' fused scores are not their cosines
    from mathgraph.tasks.search.skeleton import NUMBERS_BONUS

    assert len(fused) == 3 and fused[0]["index"] == 3
    assert fused[0]["score"] == pytest.approx(1.0 + NUMBERS_BONUS, abs=1e-4)
    assert any(hit["score"] != pytest.approx(hit["cosine"], abs=1e-4) for hit in fused[1:])
    # the default search fuses TF-IDF too (on by default, chosen on the bank dev queries), and the
    # shipped alignment step's weight is 0, so it is the --hybrid search
    assert main(["-q", "search", "--index", str(index), question, "-k", "3", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == fused
    assert main(["-q", "search", "--index", str(index), question, "--hybrid", "--approximate"]) == 2
    assert "--hybrid searches exactly" in capsys.readouterr().err

    httpd = HTTPServer(("127.0.0.1", 0), FakeLLM)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    problems, output = tmp_path / "problems.jsonl", tmp_path / "refined.jsonl"
    write_lines(
        problems,
        [
            json.dumps({"question": "Tom has 40 apples and buys 2. How many?", "answer": "#### 42"}),
            json.dumps({"question": "What is 6 times 7 plus 1?", "answer": "#### 43"}),
        ],
    )
    try:
        assert (
            main(
                [
                    "-q",
                    "refine",
                    "--problems",
                    str(problems),
                    "--index",
                    str(index),
                    "--llm",
                    f"http://127.0.0.1:{httpd.server_port}/v1",
                    "--llm-model",
                    "fake",
                    "--exemplars",
                    "2",
                    "--output",
                    str(output),
                ]
            )
            == 0
        )
    finally:
        httpd.shutdown()
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    records = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(records) == 2 and [len(r["steps"]) for r in records] == [3, 3]
    assert [r["correct"] for r in records] == [True, False]
    assert all(len(step["exemplar_ids"]) == 2 for r in records for step in r["steps"])
    assert summary["final_accuracy"] == 0.5


def test_routes_need_a_moe_model_and_a_text(tiny_encoder):
    from mathgraph.models.multitask import MultiTaskConfig, MultiTaskModel

    dense = MultiTaskModel(tiny_encoder, MultiTaskConfig([{"task": "kpc", "labels": ["a", "b"]}]))
    with pytest.raises(ValueError, match="no MoE layers"):
        dense.token_routes("Find $x$.")
    moe = MultiTaskModel(
        tiny_encoder,
        MultiTaskConfig([{"task": "kpc", "labels": ["a", "b"]}], adapter="moe", moe_layers="all", moe_experts=2),
    )
    with pytest.raises(ValueError, match="non-empty"):
        moe.token_routes("   ")
    routes = moe.token_routes("Find $x$ if $2x = 6$.")
    assert routes.layers == [0, 1, 2] and len(routes.experts[0]) == len(routes.tokens)
    assert all(0.0 < p <= 1.0 for layer in routes.probabilities for p in layer)


def test_quiet_silences_the_libraries_and_the_progress_bars(tmp_path, terminal_stderr, monkeypatch):
    from transformers.utils import logging as transformers_logging

    for name in ("TRANSFORMERS_VERBOSITY", "HF_HUB_DISABLE_PROGRESS_BARS", "TQDM_DISABLE"):
        monkeypatch.setenv(name, "")  # restored after the test: -q sets them for the process
    source = write_lines(tmp_path / "in.jsonl", [json.dumps({"problem": p}) for p in PROBLEMS[:3]])
    verbosity = transformers_logging.get_verbosity()
    try:
        # the untrained architecture resizes MiniLM's vocabulary: transformers' notice on it used to print;
        # stderr passes for a terminal, where the bars would be drawn without -q
        argv = ["encode", "--model", "untrained", "--input", str(source), "--output", str(tmp_path / "e.npy")]
        assert main(["-q", *argv, "--batch-size", "1"]) == 0
        err = terminal_stderr.readouterr().err
    finally:
        transformers_logging.set_verbosity(verbosity)
        with warnings.catch_warnings():  # the Hub warns that HF_HUB_DISABLE_PROGRESS_BARS, set by -q, wins
            warnings.simplefilter("ignore")
            transformers_logging.enable_progress_bar()
    assert "multivariate normal" not in err and "encoding:" not in err and "Loading weights" not in err
    assert err == ""  # not even "wrote 3 x 768 float32 vectors": -q leaves only warnings and errors
    assert (tmp_path / "e.npy").exists()


def test_train_multitask_reasonformer_command_and_skill_routes(tmp_path, tiny_encoder, capsys):
    from pathlib import Path

    import mathgraph

    sample = Path(mathgraph.__file__).parent / "data" / "gsmplus_sample.jsonl"
    pairs = tmp_path / "pairs.jsonl"
    assert main(["-q", "data", "qrc-pairs", "--input", str(sample), "--output", str(pairs)]) == 0
    start, output = tmp_path / "start", tmp_path / "reasonformer"
    tiny_encoder.save_pretrained(start)
    assert (
        main(
            [
                "-q",
                "train",
                "multitask",
                "--task",
                f"qrc:{pairs}:{pairs}",
                "--output",
                str(output),
                "--model",
                str(start),
                "--adapter",
                "reasonformer",
                "--skills",
                "general,language,relation",
                "--reasoning-depth",
                "2",
                "--reasoning-top-k",
                "2",
                "--skill-pretraining-steps",
                "2",
                "--epochs",
                "1",
                "--batch-size",
                "8",
            ]
        )
        == 0
    )
    config = json.loads((output / "multitask_config.json").read_text())
    assert config["adapter"] == "reasonformer" and config["skills"] == ["general", "language", "relation"]
    assert config["reasoning_depth"] == 2
    capsys.readouterr()
    assert main(["-q", "evaluate", "qrc", "--model", str(output), "--data", str(pairs)]) == 0
    assert "accuracy" in json.loads(capsys.readouterr().out)
    html, png = tmp_path / "skills.html", tmp_path / "skills.png"
    texts = ["Find $x$ if $2x = 6$.", "Tom has 3 apples and eats one."]
    assert main(["-q", "routes", "--model", str(output), *texts, "--output", str(html)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in printed] == ["step 1", "step 2"]
    assert all("| stop gate 0." in line for line in printed)
    page = html.read_text()
    assert "mean over 2 problems" in page and "<th>relation</th>" in page and "step 2" in page
    assert main(["-q", "routes", "--model", str(output), texts[0], "--output", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert (
        main(
            [
                "-q",
                "train",
                "multitask",
                "--task",
                f"qrc:{pairs}",
                "--output",
                str(tmp_path / "x"),
                "--adapter",
                "reasonformer",
                "--skills",
                "general,logic",
            ]
        )
        == 2
    )
    assert "skills must be some of" in capsys.readouterr().err


def test_a_reader_that_leaves_early_gets_no_traceback():
    """`mathgraph samples | head -1`: the pipe closes under the command; it stops quietly with status 1."""
    import subprocess
    import sys

    command = [sys.executable, "-c", "import sys; from mathgraph.cli import main; sys.exit(main(['samples']))"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    child.stdout.close()  # the reader is gone before the command prints (it is still importing)
    stderr = child.stderr.read()
    assert child.wait(timeout=60) == 1
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
