"""Shared fixtures: real sample problems parsed once, a tiny BERT for fast model tests, a captured stderr that
passes for a terminal."""

import os
import sys

import pytest

if "PYTEST_XDIST_WORKER" in os.environ and hasattr(os, "sched_setaffinity"):
    # under pytest -n N the N workers share the cores: each worker (and every process it starts) gets its own
    # share of them, so that torch, which sizes its threads by the cores a process may use, does not run
    # N x cores threads that take turns (a notebook that trains ran 5x slower so)
    _cores = sorted(os.sched_getaffinity(0))
    _workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    _index = int(os.environ["PYTEST_XDIST_WORKER"].removeprefix("gw"))
    if 1 < _workers <= len(_cores):
        os.sched_setaffinity(0, _cores[_index % _workers :: _workers])


# Seconds that the slowest tests took in a full run on 2 cores (`python -m pytest -n 2 --durations=40`; the four
# smoke runs made smaller since, scaled by their CPU time before and after). Only the
# order of the run depends on them (pytest_collection_modifyitems): a name that is gone or a figure that drifts
# costs a little balance, never a test.
SLOWEST = {
    "tests/benchmarks/test_smoke.py::test_smoke_run[scale]": 50,
    "tests/test_notebooks.py::test_notebook_executes[05_search_and_refine.ipynb]": 90,
    "tests/tasks/test_kit.py::test_the_kit_path_builds_runs_without_a_parser_and_releases_only_what_is_better": 116,
    "tests/benchmarks/test_smoke.py::test_smoke_run[runtime]": 48,
    "tests/benchmarks/test_smoke.py::test_smoke_run[release_model]": 96,
    "tests/tasks/test_refine.py::test_real_run_with_the_packaged_smollm2": 34,
    "tests/benchmarks/test_smoke.py::test_smoke_run[search_and_refine]": 21,
    "tests/test_notebooks.py::test_notebook_executes[04_experts.ipynb]": 43,
    "tests/test_notebooks.py::test_notebook_executes[03_train_kpc.ipynb]": 43,
    "tests/mathgraph/test_shipped.py::test_the_bundled_sample_gives_the_model_card_figures": 42,
    "tests/benchmarks/test_smoke.py::test_smoke_run[encode_benchmark]": 39,
    "tests/benchmarks/test_smoke.py::test_smoke_run[bank_search]": 39,
    "tests/mathgraph/test_ray_engine.py::test_a_batch_job_on_a_ray_it_starts_says_only_what_it_wrote": 36,
    "tests/tasks/test_release.py::test_onnx_graphs_added_to_a_package_predict_as_pytorch_and_travel_with_an_export": 35,
    "tests/benchmarks/test_smoke.py::test_smoke_run[serve_load]": 33,
    "tests/benchmarks/test_smoke.py::test_smoke_run[kpc_study]": 31,
    "tests/tasks/test_trainer.py::test_two_cpu_processes_stay_in_sync": 27,
    "tests/benchmarks/test_smoke.py::test_smoke_run[cli_startup]": 26,
    "tests/benchmarks/test_smoke.py::test_smoke_run[multitask_results]": 25,
    "tests/test_base_install.py::test_the_base_commands_give_the_full_installs_results": 29,
    "tests/mathgraph/test_quiet_output.py::test_predict_and_compare_print_nothing_on_stderr": 24,
    "tests/test_notebooks.py::test_notebook_executes[02_encode_and_compare.ipynb]": 23,
    "tests/benchmarks/test_smoke.py::test_smoke_run[pooling_probe]": 22,
    "tests/models/test_prediction.py::test_predicting_imports_neither_the_trainer_nor_accelerate": 21,
    "tests/benchmarks/test_smoke.py::test_smoke_run[skill_routes_by_task]": 21,
    "tests/benchmarks/test_smoke.py::test_smoke_run[structure_results]": 20,
    "tests/models/test_onnx.py::test_comus_graph_matches_pytorch_on_batches_of_every_shape": 19,
    "tests/benchmarks/test_smoke.py::test_smoke_run[results]": 18,
    "tests/test_notebooks.py::test_notebook_executes[01_parse_and_draw.ipynb]": 18,
    "tests/benchmarks/test_smoke.py::test_smoke_run[dedupe_fresh]": 19,
}


def pytest_collection_modifyitems(config, items):
    """The slowest tests first, so that pytest-xdist (``-n``, with ``--dist worksteal`` from pyproject.toml)
    hands out the long ones while there are short ones left to balance the workers, and a run does not end
    with one worker on a two-minute test while the other waits. Test files go by their slowest test (``SLOWEST``,
    else 1 for one marked ``slow``) and keep their tests together, so that a module-scoped fixture is set up once;
    within a file, the tests of ``SLOWEST`` go first."""
    first = {}
    slowest = {}
    for position, item in enumerate(items):
        path = item.nodeid.split("::")[0]
        first.setdefault(path, position)
        seconds = SLOWEST.get(item.nodeid, 1 if item.get_closest_marker("slow") else 0)
        slowest[path] = max(slowest.get(path, 0), seconds)
    order = {id(item): position for position, item in enumerate(items)}
    items.sort(
        key=lambda item: (
            -slowest[item.nodeid.split("::")[0]],
            first[item.nodeid.split("::")[0]],
            -SLOWEST.get(item.nodeid, 0),
            order[id(item)],
        )
    )


@pytest.fixture(autouse=True)
def _graph_cache_in_tmp(tmp_path_factory, monkeypatch):
    # Parsing goes through the on-disk graph cache: keep the tests out of the user's ~/.cache
    # (one directory for the session; GraphCache creates it when first opened).
    cache = tmp_path_factory.getbasetemp() / "graph-cache"
    monkeypatch.setenv("MATHGRAPH_CACHE_DIR", str(cache))
    # The dequantised copies of GGUF models (tasks.refine.llm) are shared by the workers of a run: the
    # packaged SmolLM2 is then converted once (about 45 s), not once per worker that loads it.
    run = tmp_path_factory.getbasetemp()
    shared = (run.parent if os.environ.get("PYTEST_XDIST_WORKER") else run) / "gguf"
    if not (cache / "gguf").exists():
        shared.mkdir(exist_ok=True)
        cache.mkdir(exist_ok=True)
        (cache / "gguf").symlink_to(shared, target_is_directory=True)


@pytest.fixture
def terminal_stderr(capsys, monkeypatch):
    """``capsys``'s stderr, passing for a terminal: mathgraph draws its progress bars only on a terminal. (The
    class is patched: ``capsys`` puts its own stream in place only when the test starts, after the fixtures.)"""
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    monkeypatch.setattr(type(sys.stderr), "isatty", lambda self: True)
    return capsys


@pytest.fixture(scope="session")
def sample_graphs():
    from mathgraph.parsers.problem import ProblemParser
    from mathgraph.samples import sample_problems

    parser = ProblemParser("spacy")
    return [parser.parse(row["problem"]) for row in sample_problems()]


@pytest.fixture(scope="session")
def sample_vocab(sample_graphs):
    from mathgraph.graph import GraphVocabulary

    return GraphVocabulary.build(sample_graphs, min_freq=1)


@pytest.fixture(scope="session")
def tiny_text_dir(tmp_path_factory):
    """A randomly initialised 3-layer, 32-wide BERT with the packaged MiniLM tokenizer, saved as a directory."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from mathgraph.models.text_encoder import resolve_text_encoder

    tokenizer = AutoTokenizer.from_pretrained(resolve_text_encoder("default"))
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=3,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    torch.manual_seed(0)
    directory = tmp_path_factory.mktemp("tiny-bert")
    BertModel(config, add_pooling_layer=False).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def build_tiny_encoder(tiny_text_dir):
    """``build(vocab_dir)``: a new tiny COMUS ``MathEncoder`` (3 BERT layers of 32, 3 GAT layers of 2 x 8,
    k = 2) in eval mode, with the vocabularies in ``vocab_dir`` (as ``tiny_vocab_dir`` holds them)."""
    from mathgraph.models.encoder import MathEncoder

    def build(vocab_dir):
        encoder = MathEncoder.build(
            vocab_dir,
            text_encoder=str(tiny_text_dir),
            gat_layers=3,
            gat_heads=2,
            gat_head_dim=8,
            relation_dim=4,
            memory_views=2,
            fusion_layers=2,
            dropout=0.0,
        )
        encoder.model.eval()
        return encoder

    return build


@pytest.fixture
def tiny_encoder(build_tiny_encoder, tiny_vocab_dir):
    """A tiny COMUS ``MathEncoder`` of its own (``build_tiny_encoder``) in eval mode."""
    return build_tiny_encoder(tiny_vocab_dir)


@pytest.fixture
def tiny_vocab_dir(tmp_path, sample_vocab):
    """Vocabularies of the sample problems plus two LaTeX tokens, as `mathgraph vocab` writes them."""
    import json

    sample_vocab.save_pretrained(tmp_path)
    (tmp_path / "latex_tokens.json").write_text(json.dumps(["\\frac", "\\in", "\\angle"]))
    return tmp_path
