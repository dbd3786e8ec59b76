"""Multi-task training: task mixing, task prompts, MoE, CGC-LoRA and ReasonFormer adapters, save/load, evaluate."""

from collections import Counter

import pytest
import torch

from mathgraph.api import evaluate
from mathgraph.models.multitask import MultiTaskConfig, MultiTaskModel
from mathgraph.models.task_model import TaskConfig
from mathgraph.tasks.task_types import get_task
from mathgraph.tasks.training.multitask import parse_task_spec, train_multitask
from mathgraph.tasks.training.task_mixing import TaskMixingSampler
from mathgraph.tasks.training.trainer import TrainingArguments


def test_proportional_sampling_visits_every_example_once_per_epoch():
    sampler = TaskMixingSampler([5, 2, 9], batch_size=2, sampling="proportional", seed=0)
    assert len(sampler) == 3 + 1 + 5
    for epoch in range(2):
        sampler.set_epoch(epoch)
        batches = list(sampler)
        assert sorted(i for b in batches for i in b) == list(range(16))
        # one task per batch: all indices of a batch fall in one task's range
        assert all(len({0 if i < 5 else 1 if i < 7 else 2 for i in b}) == 1 for b in batches)
    assert list(TaskMixingSampler([5, 2, 9], 2, seed=0)) != list(TaskMixingSampler([5, 2, 9], 2, seed=1))


def test_uniform_and_temperature_sampling_follow_their_task_probabilities():
    uniform = TaskMixingSampler([90, 10], batch_size=1, sampling="uniform")
    temperature = TaskMixingSampler([90, 10], batch_size=1, sampling="temperature", temperature=2.0)
    assert uniform.task_probabilities == [0.5, 0.5]
    assert temperature.task_probabilities == pytest.approx([3 / 4, 1 / 4])  # sqrt(90) : sqrt(10) = 3 : 1
    counts = Counter()
    for epoch in range(20):
        uniform.set_epoch(epoch)
        counts.update(0 if b[0] < 90 else 1 for b in uniform)
    assert abs(counts[0] / sum(counts.values()) - 0.5) < 0.05


def test_task_spec_parsing():
    assert parse_task_spec("kpc:a.jsonl") == ("kpc", "a.jsonl", None)
    assert parse_task_spec("sqr:a.jsonl:b.jsonl") == ("sqr", "a.jsonl", "b.jsonl")
    with pytest.raises(ValueError, match="TASK:TRAIN"):
        parse_task_spec("xyz:a.jsonl")


def test_task_prompt_is_inserted_after_cls(tiny_encoder):
    config = MultiTaskConfig(
        [{"task": "kpc", "labels": ["a", "b"]}, {"task": "qam", "labels": ["0", "1"]}], task_prompts=True
    )
    model = MultiTaskModel(tiny_encoder, config).eval()
    batch = tiny_encoder.collator(tiny_encoder.parse(["Find $x$ if $x+1=2$.", "Two apples."]))
    seen = {}
    handle = model.backbone.text.embeddings.register_forward_hook(
        lambda module, args, kwargs, out: seen.update(kwargs), with_kwargs=True
    )
    model.vectors(1, batch)
    handle.remove()
    embeds = seen["inputs_embeds"]
    assert embeds.shape[1] == batch.input_ids.shape[1] + 1
    assert torch.equal(embeds[:, 1], model.task_prompts.weight[1].expand(2, -1))
    assert torch.equal(embeds[:, 0], model.backbone.text.embeddings.word_embeddings(batch.input_ids[:, 0]))
    # the two tasks' prompts give different vectors for the same problems
    assert not torch.allclose(model.vectors(0, batch), model.vectors(1, batch))


@pytest.mark.parametrize(
    "adapter,prompts,label_space",
    [
        ("none", False, "per-task"),
        ("moe", True, "per-task"),
        ("cgc-lora", False, "per-task"),
        ("none", False, "unified"),
        ("reasonformer", True, "per-task"),
    ],
)
def test_multitask_training_lowers_the_loss_and_round_trips(
    start_model, task_files, tmp_path, adapter, prompts, label_space
):
    output = tmp_path / f"multi-{adapter}"
    options = {"moe_layers": "all", "moe_experts": 2} if adapter == "moe" else {}
    args = TrainingArguments(output_dir=str(output), epochs=3, batch_size=4, learning_rate=3e-3)
    result = train_multitask(
        task_files, args, model=start_model, adapter=adapter, task_prompts=prompts, label_space=label_space, **options
    )
    history = result["history"]
    assert history[-1]["loss"] < history[0]["loss"] or history[-1]["dev_mean"] > history[0]["dev_mean"]
    assert {"dev_kpc_accuracy", "dev_qrc_accuracy", "dev_sqr_ndcg@3", "dev_mean"} <= set(history[0])
    if adapter == "moe":
        load = history[0]["expert_load"]
        assert set(load) == {"kpc", "qrc", "sqr"} and len(load["kpc"]) == 3 and sum(load["kpc"][0]) > 0

    loaded = MultiTaskModel.from_pretrained(output)
    assert loaded.config.adapter == adapter and loaded.config.task_names == ["kpc", "qrc", "sqr"]
    assert (loaded.unified_head is not None) == (label_space == "unified")
    best = max(history, key=lambda r: r["dev_mean"])
    metrics = evaluate(str(output), "kpc", task_files[0][1])
    assert metrics["accuracy"] == pytest.approx(best["dev_kpc_accuracy"])
    assert evaluate(str(output), "sqr", task_files[2][1])["ndcg@3"] == pytest.approx(best["dev_sqr_ndcg@3"])
    with pytest.raises(ValueError, match="no qam head"):
        evaluate(str(output), "qam", task_files[0][1])


def test_cgc_lora_trains_only_adapters_and_the_graph_side(tiny_encoder):
    config = MultiTaskConfig([{"task": "kpc", "labels": ["a", "b"]}], adapter="cgc-lora")
    model = MultiTaskModel(tiny_encoder, config)
    trainable = {name for name, p in model.named_parameters() if p.requires_grad}
    lora = {"common_A", "common_B", "specific_A", "specific_B"}
    new_rows = "backbone.text.embeddings.word_embeddings.new"  # the added LaTeX tokens' embeddings
    assert not any(
        name.startswith("backbone.text.") and name.split(".")[-1] not in lora and name != new_rows for name in trainable
    )
    assert any(name.split(".")[-1] in lora for name in trainable) and "task_gate.task_embedding.weight" in trainable
    assert new_rows in trainable
    assert any(name.startswith("backbone.graph.") for name in trainable)


def test_a_cgc_lora_task_predicts_with_its_update_merged_and_the_weights_come_back(tiny_encoder, monkeypatch):
    import mathgraph.models.multitask as multitask
    from mathgraph.models.cgc_lora import cgc_lora_layers

    config = MultiTaskConfig(
        [{"task": "kpc", "labels": ["a", "b"]}, {"task": "qrc", "labels": ["x", "y"]}], adapter="cgc-lora"
    )
    model = MultiTaskModel(tiny_encoder, config).eval()
    torch.manual_seed(0)
    for layer in cgc_lora_layers(model):  # B starts at zero: give the adapters an update to merge
        layer.common_B.data.normal_(std=0.5)
        layer.specific_B.data.normal_(std=0.5)
    before = {name: p.detach().clone() for name, p in model.state_dict().items()}
    texts = ["Find $x$ if $2x+3=7$.", "What is $3^2$?"]
    unmerged = multitask.predict_inputs(model.for_task("qrc"), [(texts[0], texts[1])])
    merged_tasks = []
    predict_inputs = multitask.predict_inputs

    def spy(view, inputs, batch_size, **given):  # given: the graphs and alignment rows passed on
        merged_tasks.append({layer.merged_task for layer in cgc_lora_layers(view.model)})
        return predict_inputs(view, inputs, batch_size, **given)

    monkeypatch.setattr(multitask, "predict_inputs", spy)
    merged = model.for_task("qrc").predict([(texts[0], texts[1])])
    assert merged_tasks == [{1}]  # every layer merged for qrc (task 1) while predicting
    assert merged[0]["label"] == unmerged[0]["label"]
    assert merged[0]["probabilities"] == pytest.approx(unmerged[0]["probabilities"], abs=1e-5)
    assert all(layer.merged_task is None for layer in cgc_lora_layers(model))
    assert all(torch.equal(before[name], p) for name, p in model.state_dict().items())


def test_cgc_lora_trains_the_new_latex_token_embeddings_and_keeps_the_pretrained_ones(tiny_encoder):
    from mathgraph.models.multitask import MultiTaskBatch
    from mathgraph.models.task_model import TaskBatch
    from mathgraph.tasks.training.trainer import build_optimizer

    tokenizer = tiny_encoder.tokenizer
    config = MultiTaskConfig([{"task": "kpc", "labels": ["a", "b"]}], adapter="cgc-lora")
    model = MultiTaskModel(tiny_encoder, config).train()
    words = model.backbone.text.embeddings.word_embeddings
    # The pre-trained rows are the original vocabulary; the tiny vocab adds three LaTeX tokens after it.
    assert words.num_frozen == tokenizer.vocab_size == len(tokenizer) - 3
    problems = tiny_encoder.collator(tiny_encoder.parse([r"Find $\frac{1}{2} + x$.", "Two apples and a pear."]))
    frac, apples = tokenizer.convert_tokens_to_ids([r"\frac", "apples"])
    assert frac >= words.num_frozen > apples
    assert frac in problems.input_ids and apples in problems.input_ids
    before = words.weight.detach().clone()

    # The trainer's own optimizer: AdamW with weight decay, which must not touch the pre-trained rows.
    optimizer = build_optimizer(model, TrainingArguments(learning_rate=1e-2, weight_decay=0.1))
    model(MultiTaskBatch(0, TaskBatch(problems, labels=torch.tensor([0, 1]))))["loss"].backward()
    optimizer.step()

    after = words.weight.detach()
    assert not torch.equal(after[frac], before[frac])
    assert torch.equal(after[apples], before[apples])
    assert torch.equal(after[: words.num_frozen], before[: words.num_frozen])  # every pre-trained row


def test_unified_label_space_loss_and_logits_by_hand(tiny_encoder):
    from types import SimpleNamespace

    config = MultiTaskConfig(
        [
            {"task": "kpc", "labels": ["a", "b", "c"]},
            {"task": "sqr", "labels": []},
            {"task": "qam", "labels": ["0", "1"]},
        ],
        label_space="unified",
    )
    assert config.label_offsets() == {0: (0, 3), 2: (3, 5)}
    model = MultiTaskModel(tiny_encoder, config).eval()
    assert isinstance(model.heads[0], torch.nn.Identity) and isinstance(model.heads[2], torch.nn.Identity)
    assert sum(p.numel() for p in model.heads[1].parameters()) > 0  # SQR keeps its own scorer
    classifier = model.unified_head.head.classifier
    assert classifier.out_features == 5

    torch.manual_seed(0)
    dim = classifier.in_features // 4
    u, v = torch.randn(2, dim), torch.randn(2, dim)

    def by_hand(left, right, positives):
        logits = (
            torch.cat([left, right, (left - right).abs(), left * right], -1) @ classifier.weight.T + classifier.bias
        )
        targets = torch.zeros_like(logits)
        targets[torch.arange(len(positives)), positives] = 1
        per_label = -(targets * torch.log(torch.sigmoid(logits)) + (1 - targets) * torch.log(1 - torch.sigmoid(logits)))
        return logits, per_label.sum() / len(positives)

    with torch.no_grad():
        kpc = model._unified_outputs(get_task("kpc"), (0, 3), u, SimpleNamespace(labels=torch.tensor([2, 0])))
        logits, loss = by_hand(u, u, [2, 0])  # a single problem is the pair (u, u)
        assert torch.allclose(kpc["logits"], logits[:, 0:3], atol=1e-5)
        assert kpc["loss"].item() == pytest.approx(loss.item(), rel=1e-5)

        qam = model._unified_outputs(
            get_task("qam"), (3, 5), torch.cat([u, v]), SimpleNamespace(labels=torch.tensor([1, 0]))
        )
        logits, loss = by_hand(u, v, [3 + 1, 3 + 0])  # QAM's labels sit after KPC's three
        assert torch.allclose(qam["logits"], logits[:, 3:5], atol=1e-5)
        assert qam["loss"].item() == pytest.approx(loss.item(), rel=1e-5)


def test_unknown_label_space_is_refused():
    with pytest.raises(ValueError, match="label space"):
        MultiTaskConfig([{"task": "kpc", "labels": ["a"]}], label_space="shared")


def test_frozen_embeddings_stay_as_the_start_encoder_has_them(start_model, task_files, tmp_path):
    from mathgraph.models.encoder import MathEncoder

    output = tmp_path / "frozen"
    args = TrainingArguments(output_dir=str(output), epochs=1, batch_size=4, learning_rate=3e-3)
    train_multitask(task_files, args, model=start_model, freeze_embeddings=True)
    start, trained = MathEncoder.from_pretrained(start_model).model, MultiTaskModel.from_pretrained(output).backbone
    for name in (
        "text.embeddings.word_embeddings.weight",
        "text.embeddings.position_embeddings.weight",
        "graph.label_embedding.weight",
    ):
        assert torch.equal(start.state_dict()[name], trained.state_dict()[name]), name
    layer = "text.encoder.layer.0.attention.self.query.weight"
    assert not torch.equal(start.state_dict()[layer], trained.state_dict()[layer])
    assert MultiTaskModel.from_pretrained(output).config.freeze_embeddings


def test_a_task_file_with_one_label_is_refused_naming_it(start_model, tmp_path):
    import json

    one = tmp_path / "one.jsonl"
    one.write_text(
        "".join(json.dumps({"problem": f"Find $x$ if $x+{i}=5$.", "subject": "Prealgebra"}) + "\n" for i in range(4))
    )
    args = TrainingArguments(output_dir=str(tmp_path / "out"), epochs=1, batch_size=4)
    with pytest.raises(ValueError, match=r"every example has the label \['Prealgebra'\]"):
        train_multitask([(TaskConfig("kpc"), str(one), None)], args, model=start_model)


def test_multitask_heads_that_read_the_alignment(start_model, task_files, tmp_path):
    from dataclasses import replace

    aligned = [(replace(config, alignment=config.task != "kpc"), train, dev) for config, train, dev in task_files]
    output = tmp_path / "multi-aligned"
    args = TrainingArguments(output_dir=str(output), epochs=2, batch_size=4, learning_rate=3e-3)
    result = train_multitask(aligned, args, model=start_model)
    assert result["history"][-1]["loss"] < result["history"][0]["loss"]
    loaded = MultiTaskModel.from_pretrained(output)
    assert [t.alignment for t in loaded.config.task_configs] == [False, True, True]
    best = max(result["history"], key=lambda r: r["dev_mean"])
    assert evaluate(str(output), "qrc", task_files[1][1])["accuracy"] == pytest.approx(best["dev_qrc_accuracy"])
    with pytest.raises(ValueError, match="unified label space"):
        train_multitask(aligned, args, model=start_model, label_space="unified")


def test_heads_pool_by_the_mean_and_models_saved_before_keep_cls(tiny_encoder, tmp_path):
    import json
    from dataclasses import asdict

    from mathgraph.models.multitask import MULTITASK_CONFIG_NAME, MultiTaskConfig, MultiTaskModel

    config = MultiTaskConfig([asdict(TaskConfig("kpc", labels=["a", "b"]))])
    assert config.pooling == "mean"
    MultiTaskModel(tiny_encoder, config).save_pretrained(tmp_path)
    assert MultiTaskModel.from_pretrained(tmp_path).config.pooling == "mean"
    path = tmp_path / MULTITASK_CONFIG_NAME
    saved = json.loads(path.read_text())
    del saved["pooling"]  # as written before the field existed: those models were trained on [CLS]
    path.write_text(json.dumps(saved))
    assert MultiTaskModel.from_pretrained(tmp_path).config.pooling == "cls"
    with pytest.raises(ValueError, match="unknown pooling"):
        MultiTaskConfig([asdict(TaskConfig("kpc", labels=["a", "b"]))], pooling="max")
