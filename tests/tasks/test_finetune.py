"""Fine-tuning and evaluating the four tasks on a tiny encoder, with the bundled real samples."""

import pytest

from mathgraph.api import evaluate
from mathgraph.models.task_model import TaskConfig, TaskModel
from mathgraph.samples import sample_problems
from mathgraph.tasks.data import build_qam_pairs, build_qrc_pairs, build_sqr_lists, group_seeds
from mathgraph.tasks.training.finetune import train_task
from mathgraph.tasks.training.trainer import TrainingArguments


def args(output, epochs=1, batch_size=8, learning_rate=3e-5, **extra):
    return TrainingArguments(
        output_dir=str(output), epochs=epochs, batch_size=batch_size, learning_rate=learning_rate, **extra
    )


def test_kpc_learns_its_training_set_and_round_trips(start_model, tmp_path, write):
    rows = [{"q": r["problem"], "topic": r.get("subject", "Word problem")} for r in sample_problems()]
    train = write(tmp_path / "kpc.jsonl", rows)
    result = train_task(
        TaskConfig("kpc", text_field="q", label_field="topic"),
        train,
        args(tmp_path / "kpc", epochs=12, batch_size=3, learning_rate=3e-3),
        dev_path=train,
        model=start_model,
    )
    history = result["history"]
    assert history[-1]["loss"] < history[0]["loss"]
    assert result["best_dev"] >= 0.8 and result["metric"] == "accuracy"
    metrics = evaluate(str(tmp_path / "kpc"), "kpc", train)
    assert metrics["accuracy"] == result["best_dev"] and metrics["n"] == len(rows)
    loaded = TaskModel.from_pretrained(tmp_path / "kpc")
    assert loaded.config.labels == sorted({r["topic"] for r in rows})
    with pytest.raises(ValueError, match="trained for kpc, not qrc"):
        evaluate(str(tmp_path / "kpc"), "qrc", train)


@pytest.mark.parametrize(
    "architecture,pair_mode", [("comus", "cross"), ("comus", "bi"), ("bert", "cross"), ("bert+gat", "bi")]
)
def test_qrc_trains_with_each_architecture(start_model, tmp_path, architecture, pair_mode, gsmplus, write):
    pairs = write(tmp_path / "qrc.jsonl", build_qrc_pairs(group_seeds(gsmplus), random_state=0))
    result = train_task(
        TaskConfig("qrc", architecture=architecture, pair_mode=pair_mode),
        pairs,
        args(tmp_path / architecture, batch_size=9),
        dev_path=pairs,
        model=start_model,
    )
    assert result["history"][0]["dev_n"] == 27
    metrics = evaluate(str(tmp_path / architecture), "qrc", pairs)
    assert set(metrics) >= {"accuracy", "macro_f1", "n"} and metrics["n"] == 27
    loaded = TaskModel.from_pretrained(tmp_path / architecture)
    assert loaded.config.pair_mode == pair_mode and loaded.config.pooling == "mean"
    # cross: one classifier on the pair's vector; bi: on [u; v; |u - v|; u * v]
    width = loaded.head.classifier.in_features if pair_mode == "cross" else loaded.head.head.classifier.in_features
    dim = loaded.backbone.config.text_hidden if architecture == "bert" else loaded.backbone.output_dim
    assert width == (dim if pair_mode == "cross" else 4 * dim)


def test_pair_mode_defaults_to_cross_and_only_pair_tasks_take_one():
    assert TaskConfig("qrc").pair_mode == TaskConfig("qam").pair_mode == "cross"
    assert TaskConfig("kpc").pair_mode is None
    with pytest.raises(ValueError, match="--pair-mode is for qrc and qam"):
        TaskConfig("kpc", pair_mode="cross")
    with pytest.raises(ValueError, match="unknown pair mode"):
        TaskConfig("qrc", pair_mode="both")


def test_a_config_saved_with_the_old_encoder_key_loads_as_its_architecture(tiny_encoder, tmp_path):
    import json

    TaskModel(tiny_encoder, TaskConfig("kpc", architecture="bert", labels=["a", "b"])).save_pretrained(tmp_path)
    path = tmp_path / "task_config.json"
    saved = json.loads(path.read_text())
    saved["encoder"] = saved.pop("architecture")  # as models saved before the rename have it
    path.write_text(json.dumps(saved))
    assert TaskModel.from_pretrained(tmp_path).config.architecture == "bert"
    with pytest.raises(ValueError, match="unknown architecture 'gpt'"):
        TaskConfig("kpc", architecture="gpt")


def test_mean_pooling_and_the_fused_halves_at_one_scale():
    import torch

    from mathgraph.models.pooling import SplitLayerNorm, pool_tokens

    states = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert pool_tokens(states, mask, "mean").tolist() == [[2.0, 3.0]]  # padding left out
    assert pool_tokens(states, mask, "cls").tolist() == [[1.0, 2.0]]
    torch.manual_seed(0)
    text, graph = torch.randn(5, 6), 3 * torch.randn(5, 4) + 1  # the node half 3x larger, as from a fresh GAT
    normed = SplitLayerNorm(6, 4)(torch.cat([text, graph], dim=-1))
    # each half: zero mean and unit variance per problem, so norms sqrt(6) and sqrt(4)
    assert torch.allclose(normed[:, :6].norm(dim=-1), torch.full((5,), 6**0.5), atol=1e-3)
    assert torch.allclose(normed[:, 6:].norm(dim=-1), torch.full((5,), 4**0.5), atol=1e-3)


def test_qam_and_sqr(start_model, tmp_path, gsmplus, write):
    qam = write(tmp_path / "qam.jsonl", build_qam_pairs(gsmplus[:8], random_state=0, solution_field="solution"))
    train_task(TaskConfig("qam"), qam, args(tmp_path / "qam"), model=start_model)
    assert evaluate(str(tmp_path / "qam"), "qam", qam)["n"] == 16

    lists = write(tmp_path / "sqr.jsonl", build_sqr_lists(group_seeds(gsmplus), random_state=0))
    result = train_task(
        TaskConfig("sqr"),
        lists,
        args(tmp_path / "sqr", epochs=2, batch_size=3, learning_rate=1e-3),
        dev_path=lists,
        model=start_model,
    )
    assert result["metric"] == "ndcg@3"
    metrics = evaluate(str(tmp_path / "sqr"), "sqr", lists)
    assert {"hr@1", "hr@3", "ndcg@3", "hr@5", "ndcg@5"} <= set(metrics) and metrics["n"] == 3


def test_tfidf_baseline_through_the_same_evaluate(tmp_path, gsmplus, write):
    from mathgraph.tasks.training.tfidf import train_tfidf

    pairs_rows = build_qrc_pairs(group_seeds(gsmplus), random_state=0)
    pairs = write(tmp_path / "qrc.jsonl", pairs_rows)
    train_tfidf("qrc", pairs_rows).save_pretrained(tmp_path / "tfidf")
    metrics = evaluate(str(tmp_path / "tfidf"), "qrc", pairs)
    assert metrics["n"] == 27 and metrics["accuracy"] > 0.5
    assert "unseen_labels" not in metrics
    # test labels the model never saw in training are counted and warned about
    train_tfidf("qrc", [r for r in pairs_rows if r["label"] != "irrelevant"]).save_pretrained(
        tmp_path / "no-irrelevant"
    )
    with pytest.warns(UserWarning, match="3 examples have labels the model never saw"):
        metrics = evaluate(str(tmp_path / "no-irrelevant"), "qrc", pairs)
    assert metrics["unseen_labels"] == {"irrelevant": 3}


def test_text_only_training_parses_nothing_and_graph_training_parses_once(
    start_model, tmp_path, gsmplus, write, monkeypatch
):
    import mathgraph.models.features

    pairs = write(tmp_path / "qrc.jsonl", build_qrc_pairs(group_seeds(gsmplus), random_state=0))
    parsed = []

    def counting_parse(texts, **options):
        parsed.append(len(texts))
        return real_parse(texts, **options)

    real_parse = mathgraph.models.features.parse_cached
    monkeypatch.setattr(mathgraph.models.features, "parse_cached", counting_parse)
    train_task(
        TaskConfig("qrc", architecture="bert"),
        pairs,
        args(tmp_path / "bert", batch_size=9),
        dev_path=pairs,
        model=start_model,
    )
    assert parsed == []  # --architecture bert: no graph is parsed or collated
    train_task(TaskConfig("qrc"), pairs, args(tmp_path / "comus", batch_size=9), dev_path=pairs, model=start_model)
    assert len(parsed) == 1  # every distinct text of train and dev in one go, reused by training and evaluation


def test_start_encoder_options_apply_to_a_new_model_only(start_model):
    from mathgraph.models.features import graph_cache_option
    from mathgraph.tasks.training.finetune import load_start_encoder

    loaded = load_start_encoder(start_model, gat_heads=None)  # unset options are no options
    assert loaded.model.config.gat_heads == 2
    with pytest.raises(ValueError, match="apply to --model untrained"):
        load_start_encoder(start_model, gat_heads=12)
    assert graph_cache_option("none") is False and graph_cache_option("default") is True
    assert graph_cache_option("graphs.sqlite") == "graphs.sqlite"


@pytest.mark.parametrize("task,pair_mode", [("qrc", "bi"), ("qam", "cross"), ("sqr", None)])
def test_heads_that_read_the_alignment_train_and_round_trip(start_model, tmp_path, task, pair_mode, gsmplus, write):
    from mathgraph.models.alignment_features import available_features
    from mathgraph.tasks.data import build_qam_number_swap
    from mathgraph.tasks.task_types import get_task

    seeds = group_seeds(gsmplus)
    rows = {
        "qrc": lambda: build_qrc_pairs(seeds, random_state=0),
        "qam": lambda: build_qam_number_swap(gsmplus),
        "sqr": lambda: build_sqr_lists(seeds, random_state=0, other_seeds=2),
    }[task]()
    path = write(tmp_path / f"{task}.jsonl", rows)
    config = TaskConfig(task, pair_mode=pair_mode, alignment=True)
    result = train_task(
        config,
        path,
        args(tmp_path / task, epochs=3, batch_size=4, learning_rate=1e-3),
        dev_path=path,
        model=start_model,
    )
    history = result["history"]
    assert history[-1]["loss"] < history[0]["loss"]
    loaded = TaskModel.from_pretrained(tmp_path / task)
    assert loaded.config.alignment and loaded.head.state_dict()
    # a new head reads every feature computed (QAM: the solution graph's too), and its config names them
    every_feature = list(available_features(get_task(task).aligned_with))
    assert loaded.config.alignment_features == every_feature
    projection = {name: p.shape for name, p in loaded.head.named_parameters() if "alignment." in name}
    assert [shape[-1] for name, shape in projection.items() if name.endswith("linear.weight")] == [len(every_feature)]
    # the reloaded model predicts what the trained one measured on dev
    metrics = evaluate(str(tmp_path / task), task, path)
    assert metrics[result["metric"]] == pytest.approx(result["best_dev"])


def test_alignment_is_for_pair_and_ranking_tasks_only():
    with pytest.raises(ValueError, match="alignment features are for qrc, qam, sqr"):
        TaskConfig("kpc", alignment=True)
    assert TaskConfig("qrc", alignment=True).task_type.alignment_dim == 49
