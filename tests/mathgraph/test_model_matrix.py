"""Every entry point accepts and refuses the same model names, predicts the same for the same input, and says
the same thing about a missing path: names {shipped, a task model, a multi-task model, a TF-IDF model, an
exported package, a Hub id from a pre-filled offline cache, a missing path} against entry points {load,
Predictor, predict, evaluate, encode, compare, index build, routes, serve}, one test per cell.

The package, multi-task and task model directories here are tiny (a 32-wide BERT), so each cell takes about a
second; ``shipped`` is the real packaged model.
"""

import json
from dataclasses import asdict

import pytest

from mathgraph.api import Predictor, load
from mathgraph.cli.main import main

PROBLEMS = ["Find $x$ if $2x+3=7$.", "What is the area of a circle of radius $2$?"]
PAIR = ("Tom has 12 apples and gives 5 away. How many are left?", "Tom has 15 apples and gives 5 away. How many?")
KPC_LABELS = ["Algebra", "Geometry"]
QRC_LABELS = ["numerical substitution", "problem understanding"]
NAMES = ("shipped", "task-model", "multi-task-model", "tfidf", "export", "hub", "missing")
ENTRIES = ("load", "predictor", "predict", "evaluate", "encode", "compare", "index-build", "routes", "serve")

# what each entry point does with each name: "ok", or the words its one-line error must hold
EXPECTED = {
    "shipped": {"routes": "not a multi-task model"},
    "task-model": {"compare": "trained for kpc, not qrc", "routes": "not a multi-task model"},
    "multi-task-model": {"encode": "not an encoder", "index-build": "not an encoder"},
    "tfidf": {
        "encode": "not an encoder",
        "index-build": "not an encoder",
        "routes": "not a multi-task model",
        "serve": "does not record its task",
    },
    "export": {"routes": "not a multi-task model"},
    "hub": {"encode": "not an encoder", "index-build": "not an encoder"},
    "missing": dict.fromkeys(ENTRIES, "no such model: "),
}
# the task each name is asked to predict (a TF-IDF model of QRC pairs predicts QRC)
TASK = {"tfidf": "qrc"}


@pytest.fixture(scope="module")
def names(tmp_path_factory, tiny_text_dir, sample_vocab):
    """Each name of the matrix -> the string a user passes."""
    from mathgraph.models.encoder import MathEncoder
    from mathgraph.models.multitask import MultiTaskConfig, MultiTaskModel
    from mathgraph.models.package import package_config
    from mathgraph.models.task_model import TaskConfig, TaskModel
    from mathgraph.tasks.release.package import write_checksums
    from mathgraph.tasks.training.tfidf import train_tfidf

    root = tmp_path_factory.mktemp("matrix")
    sample_vocab.save_pretrained(root / "vocab")
    (root / "vocab" / "latex_tokens.json").write_text(json.dumps(["\\frac"]))

    def encoder():
        built = MathEncoder.build(
            root / "vocab", text_encoder=str(tiny_text_dir), gat_layers=2, gat_heads=2, gat_head_dim=8,
            relation_dim=4, memory_views=2, fusion_layers=1, dropout=0.0, seed=0,
        )  # fmt: skip
        built.model.eval()
        return built

    TaskModel(encoder(), TaskConfig("kpc", labels=KPC_LABELS)).save_pretrained(root / "kpc")
    tasks = [asdict(TaskConfig("kpc", labels=KPC_LABELS)), asdict(TaskConfig("qrc", labels=QRC_LABELS))]
    multitask = MultiTaskModel(encoder(), MultiTaskConfig(tasks=tasks, adapter="moe", moe_layers="last-1"))
    multitask.eval().save_pretrained(root / "multitask")
    pairs = [{"text_a": PAIR[0], "text_b": PAIR[1], "label": QRC_LABELS[i % 2]} for i in range(4)]
    train_tfidf("qrc", pairs).save_pretrained(root / "tfidf")

    # an exported package: encoder, multi-task model and TF-IDF model with full weights, described by config.json
    package = root / "export"
    plain = MultiTaskModel(encoder(), MultiTaskConfig(tasks=tasks)).eval()  # its encoder is a plain one
    plain.encoder.save_pretrained(package / "encoder")
    plain.save_pretrained(package / "multitask")
    train_tfidf("qrc", pairs).save_pretrained(package / "tfidf" / "qrc")
    fusion = {"weight": 0.5, "default": True}
    release = {"tasks": {"kpc": {"hybrid": None}, "qrc": {"hybrid": fusion}}}
    (package / "config.json").write_text(json.dumps(package_config(release)))
    write_checksums(package)

    _fill_hub_cache(root / "hub-cache", "someone/multitask", root / "multitask")
    return {
        "shipped": "shipped",
        "task-model": str(root / "kpc"),
        "multi-task-model": str(root / "multitask"),
        "tfidf": str(root / "tfidf"),
        "export": str(package),
        "hub": "someone/multitask",
        "missing": str(root / "runs" / "missing"),
        "_hub_cache": root / "hub-cache",
        "_root": root,
    }


def _fill_hub_cache(cache, repo_id, source):
    """The layout huggingface_hub keeps a downloaded repository in: refs/main names a snapshot folder."""
    commit = "0" * 40
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    for file in source.rglob("*"):
        if file.is_file():
            target = repo / "snapshots" / commit / file.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(file.read_bytes())


@pytest.fixture
def offline_hub(names, monkeypatch):
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(names["_hub_cache"]))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)


def _task(name: str) -> str:
    return TASK.get(name, "kpc")


def _inputs(task: str) -> list:
    return [PROBLEMS[0]] if task == "kpc" else [PAIR]


def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(["--quiet", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _run(entry: str, name: str, model: str, tmp_path, capsys):
    """Run ``entry`` with ``model``: ``("ok", what it gave)`` or ``("error", its message)``."""
    task = _task(name)
    inputs = _inputs(task)
    problems = tmp_path / "problems.jsonl"
    problems.write_text("".join(json.dumps({"problem": p, "subject": "Algebra"}) + "\n" for p in PROBLEMS))
    qrc_file = tmp_path / "qrc.jsonl"
    qrc_file.write_text(
        json.dumps({"id": "1", "group": "g", "text_a": PAIR[0], "text_b": PAIR[1], "label": QRC_LABELS[0]}) + "\n"
    )
    cli_args = {
        "predict": ["predict", task, "--model", model, "--format", "json", *([PROBLEMS[0]] if task == "kpc" else PAIR)],
        "evaluate": ["evaluate", task, "--model", model, "--data", str(problems if task == "kpc" else qrc_file)],
        "encode": ["encode", "--input", str(problems), "--output", str(tmp_path / "v.npy"), "--model", model],
        "compare": ["compare", *PAIR, "--model", model, "--format", "json"],
        "index-build": ["index", "build", "--input", str(problems), "--output", str(tmp_path / "ix"), "--model", model],
        "routes": ["routes", "--model", model, PROBLEMS[0], "--output", str(tmp_path / "r.html")],
    }
    try:
        if entry == "load":
            return "ok", type(load(model)).__name__
        if entry == "predictor":
            return "ok", Predictor.from_pretrained(model, task=task).predict(inputs)
        if entry == "serve":
            from mathgraph.serve.service import Service

            service = Service.load(model=model, encoder="untrained")
            return "ok", service.predict(task, inputs) if task in service.predictors else sorted(service.predictors)
    except (FileNotFoundError, NotADirectoryError, ValueError) as err:
        return "error", str(err)
    code, out, err = _cli(capsys, *cli_args[entry])
    if code != 0:
        last = err.strip().splitlines()[-1]
        assert last.startswith("mathgraph: error: ") and "Traceback" not in err, err  # one line, in user terms
        return "error", last
    return "ok", out


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("name", NAMES)
def test_every_entry_point_treats_a_name_alike(name, entry, names, offline_hub, tmp_path, capsys):
    outcome, given = _run(entry, name, names[name], tmp_path, capsys)
    expected = EXPECTED[name].get(entry, "ok")
    if expected == "ok":
        assert outcome == "ok", given
    else:
        assert outcome == "error" and expected in given, given
        if name == "missing":  # the same words everywhere: what was asked for, and what a name may be
            assert f"no such model: {names['missing']} (a model is 'shipped', a directory mathgraph wrote" in given
    if outcome == "ok" and entry in ("predict", "serve", "compare"):
        # the same prediction as Predictor's for the same input
        task = "qrc" if entry == "compare" else _task(name)
        [reference] = Predictor.from_pretrained(names[name], task=task).predict(_inputs(task))
        result = {"predict": lambda: json.loads(given), "compare": lambda: json.loads(given)["relation"]}.get(
            entry, lambda: given[0]
        )()
        assert result["label"] == reference["label"]
        assert result["probabilities"] == pytest.approx(reference["probabilities"], abs=1e-6)
