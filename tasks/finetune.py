"""Fine-tuning and evaluation for KPC, QRC, QAM and SQR on one encoder.

The problem vector is COMUS's fused ``[CLS] ; mean node`` (``--encoder comus``),
the text encoder's ``[CLS]`` alone (``bert``), or ``[CLS] ; mean node`` of the
text and graph encoders run side by side without memory (``bert+gat``), all on
the same backbone. Heads: a classifier (KPC), a pair classifier over
``[u; v; |u - v|; u * v]`` (QRC, QAM), and a bi-encoder scorer (SQR).

A trained model directory holds the encoder (``save_pretrained``), the head
(``head.safetensors``) and ``task_config.json`` with the label names.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import nn

from mathgraph.batching import ProblemBatch
from mathgraph.encoder import MathEncoder
from mathgraph.graph import MathSyntaxGraph
from models.heads import BiEncoderScorer, ClassificationHead, PairClassificationHead
from tasks.data import KpcExample, SqrList, load_kpc, load_qam, load_qrc, load_sqr

TASKS = ("kpc", "qrc", "qam", "sqr")
ENCODER_KINDS = ("comus", "bert", "bert+gat")
TASK_CONFIG_NAME = "task_config.json"
HEAD_NAME = "head.safetensors"


@dataclass
class TaskConfig:
    """What a task model predicts and how it reads its data."""

    task: str
    encoder: str = "comus"
    labels: list[str] = field(default_factory=list)
    text_field: str = "problem"
    label_field: str = "subject"

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"unknown task {self.task!r}; choose one of {TASKS}")
        if self.encoder not in ENCODER_KINDS:
            raise ValueError(f"unknown encoder {self.encoder!r}; choose one of {ENCODER_KINDS} (or tfidf)")


def load_examples(config: TaskConfig, path: str, skip_bad: bool = False) -> list:
    """The task's examples from a JSONL file (formats in ``tasks.data``)."""
    if config.task == "kpc":
        return load_kpc(path, config.text_field, config.label_field, skip_bad)
    return {"qrc": load_qrc, "qam": load_qam, "sqr": load_sqr}[config.task](path, skip_bad)


def example_texts(example) -> list[str]:
    """Every problem text an example needs encoded."""
    if isinstance(example, KpcExample):
        return [example.text]
    if isinstance(example, SqrList):
        return [example.query, *example.candidates]
    return [example.text_a, example.text_b]


@dataclass
class TaskBatch:
    """Problems of a batch in one ``ProblemBatch`` plus what the task needs to use their vectors.

    KPC: problem ``i`` is example ``i``. QRC/QAM: problems ``0..B-1`` are the
    ``text_a`` and ``B..2B-1`` the ``text_b``. SQR: problems ``0..B-1`` are the
    queries; ``candidates: [B, N]`` indexes the problems of each list
    (``candidate_mask`` marks real ones) and ``relevant: [B, N]`` the relevant ones.
    """

    problems: ProblemBatch
    labels: torch.Tensor | None = None
    candidates: torch.Tensor | None = None
    candidate_mask: torch.Tensor | None = None
    relevant: torch.Tensor | None = None

    def __len__(self) -> int:
        return len(self.labels) if self.labels is not None else len(self.candidates)

    def to(self, device) -> "TaskBatch":
        return TaskBatch(self.problems.to(device), *(None if t is None else t.to(device) for t in
                         (self.labels, self.candidates, self.candidate_mask, self.relevant)))


class TaskCollator:
    """Examples -> ``TaskBatch``, looking graphs up by text in ``graphs``."""

    def __init__(self, encoder: MathEncoder, config: TaskConfig, graphs: dict[str, MathSyntaxGraph]):
        self.collator, self.config, self.graphs = encoder.collator, config, graphs
        self.label_ids = {label: i for i, label in enumerate(config.labels)}

    def label_id(self, label) -> int:
        key = str(label)
        if key not in self.label_ids:
            raise ValueError(f"label {key!r} was not seen in training (labels: {self.config.labels})")
        return self.label_ids[key]

    def __call__(self, examples: Sequence, with_labels: bool = True) -> TaskBatch:
        """Collate ``examples``; ``with_labels=False`` (prediction) puts zeros where gold labels go."""
        if self.config.task == "sqr":
            texts = [e.query for e in examples]
            width = max(len(e.candidates) for e in examples)
            candidates = torch.zeros(len(examples), width, dtype=torch.long)
            mask = torch.zeros(len(examples), width, dtype=torch.bool)
            relevant = torch.zeros_like(mask)
            for i, example in enumerate(examples):
                count = len(example.candidates)
                candidates[i, :count] = torch.arange(len(texts), len(texts) + count)
                mask[i, :count] = True
                relevant[i, list(example.relevant)] = True
                texts.extend(example.candidates)
            return TaskBatch(self._problems(texts), candidates=candidates, candidate_mask=mask, relevant=relevant)
        if self.config.task == "kpc":
            texts = [e.text for e in examples]
        else:
            texts = [e.text_a for e in examples] + [e.text_b for e in examples]
        labels = [self.label_id(e.label) for e in examples] if with_labels else [0] * len(examples)
        return TaskBatch(self._problems(texts), labels=torch.tensor(labels))

    def _problems(self, texts: list[str]) -> ProblemBatch:
        return self.collator([self.graphs[t] for t in texts])


class TaskModel(nn.Module):
    """An encoder with the head of one task; ``forward(TaskBatch)`` gives the loss and outputs."""

    def __init__(self, encoder: MathEncoder, config: TaskConfig):
        super().__init__()
        self.encoder, self.config = encoder, config
        self.backbone = encoder.model  # registered, so its weights train and save with the head
        self.head = make_head(config.task, vector_dim(self.backbone, config.encoder), len(config.labels))

    def vectors(self, problems: ProblemBatch) -> torch.Tensor:
        """One vector per problem ``[N, dim]``, as ``config.encoder`` defines it."""
        return problem_vectors(self.backbone, self.config.encoder, problems.as_model_inputs())

    def forward(self, batch: TaskBatch) -> dict[str, torch.Tensor]:
        return head_outputs(self.config.task, self.head, self.vectors(batch.problems), batch)

    # ------------------------------------------------------------ saving
    def save_pretrained(self, directory: str | Path) -> None:
        """Encoder files, ``head.safetensors`` and ``task_config.json`` in ``directory``."""
        from safetensors.torch import save_file

        directory = Path(directory)
        self.encoder.save_pretrained(directory)
        save_file({k: v.detach().cpu().contiguous() for k, v in self.head.state_dict().items()}, str(directory / HEAD_NAME))
        with open(directory / TASK_CONFIG_NAME, "w", encoding="utf-8") as f:
            json.dump(asdict(self.config), f, indent=1)

    @classmethod
    def from_pretrained(cls, directory: str | Path, device: str | None = None) -> "TaskModel":
        """Load a directory written by ``save_pretrained`` (safetensors only)."""
        from safetensors.torch import load_file

        from models.comus import CheckpointError

        directory = Path(directory)
        try:
            config = TaskConfig(**json.loads((directory / TASK_CONFIG_NAME).read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError, TypeError) as err:
            raise CheckpointError(f"{directory} is not a trained task model: {err}") from err
        model = cls(MathEncoder.from_pretrained(directory, device="cpu"), config)
        try:
            model.head.load_state_dict(load_file(str(directory / HEAD_NAME)))
        except Exception as err:  # safetensors and shape errors alike
            raise CheckpointError(f"cannot load {directory / HEAD_NAME}: {err}") from err
        return model.to(device or "cpu").eval()


def vector_dim(backbone: nn.Module, encoder: str) -> int:
    """Length of the problem vectors of ``encoder`` (``comus``, ``bert+gat``: fused; ``bert``: ``[CLS]``)."""
    return backbone.config.text_hidden if encoder == "bert" else backbone.output_dim


def problem_vectors(backbone: nn.Module, encoder: str, inputs: dict) -> torch.Tensor:
    """One vector per problem ``[N, dim]`` from ``ProblemBatch.as_model_inputs()`` (``inputs_embeds``
    may replace ``input_ids``): ``[CLS]`` of the text encoder alone (``bert``) or the fused
    ``[CLS] ; mean node`` with (``comus``) or without (``bert+gat``) the memory layers."""
    if encoder == "bert":
        return backbone.text(input_ids=None if inputs.get("inputs_embeds") is not None else inputs["input_ids"],
                             inputs_embeds=inputs.get("inputs_embeds"), attention_mask=inputs["attention_mask"],
                             token_type_ids=inputs.get("token_type_ids")).last_hidden_state[:, 0]
    return backbone(**inputs, fuse=encoder == "comus").fused


def make_head(task: str, dim: int, num_labels: int) -> nn.Module:
    """The head of ``task``: a classifier (KPC), a pair classifier (QRC, QAM) or a bi-encoder scorer (SQR)."""
    if task == "kpc":
        return ClassificationHead(dim, num_labels)
    if task in ("qrc", "qam"):
        return PairClassificationHead(dim, num_labels)
    return BiEncoderScorer(dim)


def head_outputs(task: str, head: nn.Module, vectors: torch.Tensor, batch: TaskBatch) -> dict[str, torch.Tensor]:
    """Loss and ``logits`` (KPC, QRC, QAM) or ``scores`` (SQR; padding at ``-inf``) of a ``TaskBatch``
    whose problems are encoded as ``vectors``."""
    if task == "sqr":
        queries = vectors[: len(batch.candidates)]
        scores = head(queries, vectors[batch.candidates])
        loss = head.loss(scores, batch.relevant, batch.candidate_mask)
        return {"loss": loss, "scores": scores.masked_fill(~batch.candidate_mask, float("-inf"))}
    if task == "kpc":
        logits = head(vectors)
    else:
        half = len(batch.labels)
        logits = head(vectors[:half], vectors[half:])
    return {"loss": nn.functional.cross_entropy(logits.float(), batch.labels), "logits": logits}


# ---------------------------------------------------------------- running
def parse_texts(texts: Sequence[str], parser: str, workers: int = 1) -> dict[str, MathSyntaxGraph]:
    """Graphs of the distinct ``texts`` (each parsed once)."""
    from mathgraph.parse import parse_problems

    distinct = list(dict.fromkeys(texts))
    return dict(zip(distinct, parse_problems(distinct, parser=parser, n_process=workers, show_progress=True)))


@torch.inference_mode()
def predict(model: TaskModel, examples: Sequence, graphs: dict[str, MathSyntaxGraph], batch_size: int = 32) -> list:
    """Predicted label names (KPC/QRC/QAM; QAM labels as ints) or score lists (SQR), in example order."""
    model.eval()
    device = next(model.parameters()).device
    collate = TaskCollator(model.encoder, model.config, graphs)
    outputs: list = []
    for start in range(0, len(examples), batch_size):
        chunk = examples[start:start + batch_size]
        result = model(collate(chunk, with_labels=False).to(device))
        if model.config.task == "sqr":
            outputs.extend(row[: len(e.candidates)].tolist() for row, e in zip(result["scores"].float().cpu(), chunk))
        else:
            names = [model.config.labels[i] for i in result["logits"].argmax(-1).tolist()]
            outputs.extend(int(n) if model.config.task == "qam" else n for n in names)
    return outputs


def evaluate_examples(model: TaskModel, examples: Sequence, graphs: dict, batch_size: int = 32) -> dict:
    """Accuracy and macro-F1 (KPC/QRC/QAM) or HR/NDCG at 1, 3, 5 (SQR), with the number of examples."""
    from tasks.metrics import classification_metrics, ranking_metrics

    predictions = predict(model, examples, graphs, batch_size)
    if model.config.task == "sqr":
        return ranking_metrics(predictions, [e.relevant for e in examples])
    return classification_metrics([e.label for e in examples], predictions)


def label_names(task: str, examples: Sequence) -> list[str]:
    """Label names in a deterministic order (QAM: ``["0", "1"]``)."""
    if task == "sqr":
        return []
    return sorted({str(e.label) for e in examples})


def train_task(
    config: TaskConfig,
    train_path: str,
    output_dir: str,
    dev_path: str | None = None,
    model: str = "default",
    epochs: int = 3,
    batch_size: int = 16,
    learning_rate: float = 3e-5,
    seed: int = 0,
    resume: bool = False,
    workers: int = 1,
    mixed_precision: str = "no",
    skip_bad: bool = False,
) -> dict:
    """Fine-tune ``model`` on a task file and save the best (by dev metric) model to ``output_dir``.

    The dev metric is accuracy (KPC, QRC, QAM) or NDCG@3 (SQR); without a dev
    file the last epoch is kept. Returns the training history and dev metrics.
    """
    from safetensors.torch import load_model

    from tasks.trainer import BEST_CHECKPOINT, LAST_CHECKPOINT, WEIGHTS_NAME, Trainer, TrainingConfig

    train = load_examples(config, train_path, skip_bad)
    dev = load_examples(config, dev_path, skip_bad) if dev_path else []
    if not train:
        raise ValueError(f"{train_path}: no training examples")
    config.labels = label_names(config.task, train)
    encoder = MathEncoder.from_pretrained(model, device="cpu")
    graphs = parse_texts([t for e in [*train, *dev] for t in example_texts(e)], encoder.parser, workers)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)  # the head's initial weights depend on the seed only
        task_model = TaskModel(encoder, config)
    loader = torch.utils.data.DataLoader(train, batch_size=batch_size, shuffle=True,
                                         generator=torch.Generator().manual_seed(seed),
                                         collate_fn=TaskCollator(encoder, config, graphs))
    metric = "ndcg@3" if config.task == "sqr" else "accuracy"
    trainer = Trainer(
        task_model, loader, output_dir,
        TrainingConfig(epochs=epochs, learning_rate=learning_rate, seed=seed, mixed_precision=mixed_precision),
        evaluate=(lambda m: evaluate_examples(m, dev, graphs, batch_size)) if dev else None, metric_name=metric,
    )
    state = trainer.train(resume=resume)
    if trainer.accelerator.is_main_process:
        kept = Path(output_dir) / (BEST_CHECKPOINT if dev else LAST_CHECKPOINT)
        load_model(task_model, str(kept / WEIGHTS_NAME))
        task_model.save_pretrained(output_dir)
    return {"history": state.history, "best_dev": state.best_metric, "metric": metric}


def evaluate_directory(task: str, model_dir: str, data_path: str, text_field: str | None = None,
                       label_field: str | None = None, batch_size: int = 32, workers: int = 1) -> dict:
    """Metrics of a trained model directory (a task model, a multi-task model or a TF-IDF baseline) on a task file."""
    from tasks.baselines import is_tfidf_directory, evaluate_tfidf, load_tfidf
    from tasks.multitask import MultiTaskModel, is_multitask_directory

    if is_tfidf_directory(model_dir):
        config = TaskConfig(task, text_field=text_field or "problem", label_field=label_field or "subject")
        rows = [example_row(e, config) for e in load_examples(config, data_path)]
        return evaluate_tfidf(task, load_tfidf(model_dir), rows, text_field=config.text_field,
                              label_field=config.label_field)
    if is_multitask_directory(model_dir):
        model = MultiTaskModel.from_pretrained(model_dir).for_task(task)
    else:
        model = TaskModel.from_pretrained(model_dir)
        if model.config.task != task:
            raise ValueError(f"{model_dir} was trained for {model.config.task}, not {task}")
    model.config.text_field = text_field or model.config.text_field
    model.config.label_field = label_field or model.config.label_field
    examples = load_examples(model.config, data_path)
    graphs = parse_texts([t for e in examples for t in example_texts(e)], model.encoder.parser, workers)
    return evaluate_examples(model, examples, graphs, batch_size)


def example_row(example, config: TaskConfig) -> dict:
    """An example as the dict rows the TF-IDF baselines read."""
    if isinstance(example, KpcExample):
        return {config.text_field: example.text, config.label_field: example.label}
    row = asdict(example)
    if isinstance(example, SqrList):
        row["candidates"], row["relevant"] = list(example.candidates), list(example.relevant)
    return row


__all__ = ["TaskConfig", "TaskModel", "TaskCollator", "TaskBatch", "predict", "evaluate_examples", "parse_texts",
           "load_examples", "example_texts", "label_names", "train_task", "evaluate_directory", "example_row"]
