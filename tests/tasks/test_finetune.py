"""Fine-tuning and evaluating the four tasks on a tiny encoder, with the bundled real samples."""

import pytest

from mathgraph.samples import sample_problems
from tasks.data import build_qam_pairs, build_qrc_pairs, build_sqr_lists, group_seeds
from tasks.evaluation import evaluate_directory
from tasks.finetune import TaskConfig, TaskModel, train_task
from tasks.trainer import TrainingArguments


def args(output, epochs=1, batch_size=8, learning_rate=3e-5, **extra):
    return TrainingArguments(output_dir=str(output), epochs=epochs, batch_size=batch_size, learning_rate=learning_rate,
                             **extra)


def test_kpc_learns_its_training_set_and_round_trips(start_model, tmp_path, write):
    rows = [{"q": r["problem"], "topic": r.get("subject", "Word problem")} for r in sample_problems()]
    train = write(tmp_path / "kpc.jsonl", rows)
    result = train_task(TaskConfig("kpc", text_field="q", label_field="topic"), train,
                        args(tmp_path / "kpc", epochs=12, batch_size=3, learning_rate=3e-3), dev_path=train,
                        model=start_model)
    history = result["history"]
    assert history[-1]["loss"] < history[0]["loss"]
    assert result["best_dev"] >= 0.8 and result["metric"] == "accuracy"
    metrics = evaluate_directory("kpc", str(tmp_path / "kpc"), train)
    assert metrics["accuracy"] == result["best_dev"] and metrics["n"] == len(rows)
    loaded = TaskModel.from_pretrained(tmp_path / "kpc")
    assert loaded.config.labels == sorted({r["topic"] for r in rows})
    with pytest.raises(ValueError, match="trained for kpc, not qrc"):
        evaluate_directory("qrc", str(tmp_path / "kpc"), train)


@pytest.mark.parametrize("encoder", ["comus", "bert", "bert+gat"])
def test_qrc_trains_with_each_encoder(start_model, tmp_path, encoder, gsmplus, write):
    pairs = write(tmp_path / "qrc.jsonl", build_qrc_pairs(group_seeds(gsmplus), seed=0))
    result = train_task(TaskConfig("qrc", encoder=encoder), pairs, args(tmp_path / encoder, batch_size=9),
                        dev_path=pairs, model=start_model)
    assert result["history"][0]["dev_n"] == 27
    metrics = evaluate_directory("qrc", str(tmp_path / encoder), pairs)
    assert set(metrics) >= {"accuracy", "macro_f1", "n"} and metrics["n"] == 27


def test_qam_and_sqr(start_model, tmp_path, gsmplus, write):
    qam = write(tmp_path / "qam.jsonl", build_qam_pairs(gsmplus[:8], seed=0, solution_field="solution"))
    train_task(TaskConfig("qam"), qam, args(tmp_path / "qam"), model=start_model)
    assert evaluate_directory("qam", str(tmp_path / "qam"), qam)["n"] == 16

    lists = write(tmp_path / "sqr.jsonl", build_sqr_lists(group_seeds(gsmplus), seed=0))
    result = train_task(TaskConfig("sqr"), lists, args(tmp_path / "sqr", epochs=2, batch_size=3, learning_rate=1e-3),
                        dev_path=lists, model=start_model)
    assert result["metric"] == "ndcg@3"
    metrics = evaluate_directory("sqr", str(tmp_path / "sqr"), lists)
    assert {"hr@1", "hr@3", "ndcg@3", "hr@5", "ndcg@5"} <= set(metrics) and metrics["n"] == 3


def test_tfidf_baseline_through_the_same_evaluate(tmp_path, gsmplus, write):
    from tasks.baselines import train_tfidf

    pairs_rows = build_qrc_pairs(group_seeds(gsmplus), seed=0)
    pairs = write(tmp_path / "qrc.jsonl", pairs_rows)
    train_tfidf("qrc", pairs_rows).save(tmp_path / "tfidf")
    metrics = evaluate_directory("qrc", str(tmp_path / "tfidf"), pairs)
    assert metrics["n"] == 27 and metrics["accuracy"] > 0.5


def test_text_only_training_parses_nothing_and_graph_training_parses_once(start_model, tmp_path, gsmplus, write,
                                                                          monkeypatch):
    import tasks.features

    pairs = write(tmp_path / "qrc.jsonl", build_qrc_pairs(group_seeds(gsmplus), seed=0))
    parsed = []

    def counting_parse(texts, **options):
        parsed.append(len(texts))
        return real_parse(texts, **options)

    real_parse = tasks.features.parse_cached
    monkeypatch.setattr(tasks.features, "parse_cached", counting_parse)
    train_task(TaskConfig("qrc", encoder="bert"), pairs, args(tmp_path / "bert", batch_size=9), dev_path=pairs,
               model=start_model)
    assert parsed == []  # --encoder bert: no graph is parsed or collated
    train_task(TaskConfig("qrc"), pairs, args(tmp_path / "comus", batch_size=9), dev_path=pairs, model=start_model)
    assert len(parsed) == 1  # every distinct text of train and dev in one go, reused by training and evaluation


def test_start_encoder_options_apply_to_a_new_model_only(start_model):
    from tasks.features import graph_cache_option
    from tasks.finetune import load_start_encoder

    loaded = load_start_encoder(start_model, gat_heads=None)  # unset options are no options
    assert loaded.model.config.gat_heads == 2
    with pytest.raises(ValueError, match="apply to --model default"):
        load_start_encoder(start_model, gat_heads=12)
    assert graph_cache_option("none") is False and graph_cache_option("default") is True
    assert graph_cache_option("graphs.sqlite") == "graphs.sqlite"
