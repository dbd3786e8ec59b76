"""The public API (``mathgraph.load``, ``mathgraph.Predictor``, the names ``mathgraph`` exports), loading by
Hugging Face Hub id from a pre-filled cache offline, and the self-contained export of the shipped model."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import mathgraph
from mathgraph.api import Predictor, load

PUBLIC = [
    "CheckpointError",
    "InputError",
    "MathEncoder",
    "MathSyntaxGraph",
    "Predictor",
    "ProblemParser",
    "Quantity",
    "SearchIndex",
    "UserError",
    "align_problems",
    "align_solution",
    "check_solution",
    "draw_graph",
    "load",
    "parse_latex",
    "parse_problem",
    "parse_problems",
    "parse_solution",
    "sample_problems",
    "segment",
    "__version__",
]
SAMPLE = Path(mathgraph.__file__).parent / "data" / "gsmplus_sample.jsonl"


def test_the_public_names_resolve_and_importing_loads_no_model_code():
    assert mathgraph.__all__ == PUBLIC
    for name in PUBLIC:
        assert getattr(mathgraph, name) is not None, name
    assert "ProblemCollator" not in dir(mathgraph)  # internal helpers left the top level
    code = "import sys, mathgraph; print(sorted(m for m in ('torch', 'spacy', 'transformers') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.fixture
def qrc_tfidf(tmp_path):
    """A TF-IDF QRC model directory and two of its pairs."""
    from mathgraph.tasks.data import build_qrc_pairs, group_seeds
    from mathgraph.tasks.training.tfidf import train_tfidf

    pairs = build_qrc_pairs(group_seeds([json.loads(line) for line in SAMPLE.read_text().splitlines()]), random_state=0)
    directory = tmp_path / "qrc-tfidf"
    train_tfidf("qrc", pairs).save_pretrained(directory)
    return directory, [(p["text_a"], p["text_b"]) for p in pairs[:2]]


def test_load_gives_what_a_directory_holds(tiny_encoder, qrc_tfidf, tmp_path):
    from mathgraph.models.tfidf import TfidfClassifier

    tiny_encoder.save_pretrained(tmp_path / "encoder")
    assert type(load(tmp_path / "encoder")).__name__ == "MathEncoder"
    assert isinstance(load(qrc_tfidf[0]), TfidfClassifier)
    with pytest.raises(FileNotFoundError, match="no such model: .*nowhere.*'shipped'"):
        load(tmp_path / "nowhere")
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        load(tmp_path / "file")


def test_a_predictor_takes_a_list_and_gives_one_result_per_input(qrc_tfidf):
    directory, pairs = qrc_tfidf
    predictor = Predictor.from_pretrained(directory, task="qrc")
    results = predictor.predict(pairs)
    assert len(results) == 2 and all(set(r) == {"label", "probabilities"} for r in results)
    assert abs(sum(results[0]["probabilities"].values()) - 1) < 1e-6
    with pytest.raises(TypeError, match="wrap a single input in a list"):
        predictor.predict(pairs[0])  # a lone pair
    with pytest.raises(ValueError, match="cannot predict kpc"):
        Predictor.from_pretrained(directory, task="kpc")  # a pair model for a one-problem task
    with pytest.raises(ValueError, match="unknown task|choose"):
        Predictor.from_pretrained(directory, task="nope")


def _fill_hub_cache(cache: Path, repo_id: str, source: Path) -> None:
    """The layout huggingface_hub keeps a downloaded repository in: refs/main names a snapshot folder."""
    commit = "0" * 40
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for file in source.rglob("*"):
        if file.is_file():
            target = snapshot / file.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(file.read_bytes())


def test_a_hub_id_loads_from_the_cache_offline(qrc_tfidf, tmp_path):
    directory, pairs = qrc_tfidf
    cache = tmp_path / "hub"
    _fill_hub_cache(cache, "someone/qrc-tfidf", directory)
    code = (
        "import json, sys, mathgraph\n"
        "print(type(mathgraph.load('someone/qrc-tfidf')).__name__)\n"
        "p = mathgraph.Predictor.from_pretrained('someone/qrc-tfidf', task='qrc')\n"
        f"print(json.dumps(p.predict({pairs!r})[0]['label']))\n"
        "try:\n    mathgraph.load('someone/not-cached')\n"
        "except FileNotFoundError as err:\n    print('missing:', err)\n"
    )
    env = {**os.environ, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    expected = Predictor.from_pretrained(directory, task="qrc").predict(pairs)[0]["label"]
    assert lines[0] == "TfidfClassifier" and json.loads(lines[1]) == expected
    assert lines[2].startswith(
        "missing: no such model: someone/not-cached; as a Hugging Face Hub id: not in the Hugging Face cache"
    )


@pytest.mark.slow
def test_the_shipped_model_exports_as_a_self_contained_directory(tmp_path):
    from mathgraph.models.delta import DELTA_NAME
    from mathgraph.tasks.release.package import export_package

    texts = ["Find $x$ if $2x + 3 = 7$.", "What is the area of a circle of radius $2$?"]
    shipped = Predictor.from_pretrained("shipped", task="kpc").predict(texts)
    exported = export_package(tmp_path / "export")
    assert not list(exported.rglob(DELTA_NAME))  # full weights: nothing to resolve against MiniLM
    assert (exported / "MODEL_CARD.md").is_file() and (exported / "release.json").is_file()
    again = Predictor.from_pretrained(exported, task="kpc").predict(texts)
    assert [r["label"] for r in again] == [r["label"] for r in shipped]
    for a, b in zip(again, shipped):
        assert all(abs(a["probabilities"][k] - b["probabilities"][k]) < 1e-5 for k in b["probabilities"])
    assert type(load(exported)).__name__ == "ModelPackage" and type(load(exported).encoder).__name__ == "MathEncoder"
    assert load("default").name_or_path == "shipped"  # the old name of the shipped model still works
    with pytest.raises(FileExistsError):
        export_package(exported)
