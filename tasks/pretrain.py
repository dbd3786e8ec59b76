"""Continual pre-training of COMUS (Section 3.3): MLM, DTC and TGCL, each weighted and switchable.

``--tasks mlm`` with ``--encoder bert`` is DAPT-BERT (masked LM on the math
corpus, no graph); ``--tasks mlm,dtc,tgcl`` with ``--encoder comus`` is COMUS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from mathgraph.batching import ProblemBatch, ProblemCollator
from mathgraph.graph import MathSyntaxGraph
from models.comus import ComusModel
from models.heads import DtcHead, MlmHead, TgclHead, mlm_loss

PRETRAINING_TASKS = ("mlm", "dtc", "tgcl")
ENCODERS = ("comus", "bert")


def mask_tokens(
    input_ids: torch.Tensor,
    special_mask: torch.Tensor,
    mask_id: int,
    vocab_size: int,
    generator: torch.Generator,
    probability: float = 0.15,
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT masking (Eq. 9): pick ``probability`` of the non-special tokens; of those 80 % become
    ``[MASK]``, 10 % a random token, 10 % stay. Returns ``(masked ids, labels)`` with
    ``labels = -100`` where nothing is predicted."""
    chosen = (torch.rand(input_ids.shape, generator=generator) < probability) & ~special_mask
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    draw = torch.rand(input_ids.shape, generator=generator)
    masked = input_ids.clone()
    masked[chosen & (draw < 0.8)] = mask_id
    random_positions = chosen & (draw >= 0.8) & (draw < 0.9)
    masked[random_positions] = torch.randint(vocab_size, input_ids.shape, generator=generator)[random_positions]
    return masked, labels


@dataclass
class PretrainingBatch:
    """A collated batch with MLM inputs: ``batch.input_ids`` are masked, ``mlm_labels: [B, L]``."""

    batch: ProblemBatch
    mlm_labels: torch.Tensor

    def __len__(self) -> int:
        return len(self.batch)


class PretrainingCollator:
    """Collates graphs and masks 15 % of the tokens, reproducibly from ``seed``."""

    def __init__(self, collator: ProblemCollator, seed: int = 0, mask_probability: float = 0.15):
        tokenizer = collator.tokenizer
        if tokenizer.mask_token_id is None:
            raise ValueError("the tokenizer has no [MASK] token, so it cannot be used for MLM")
        self.collator, self.mask_probability = collator, mask_probability
        self.special_ids = torch.tensor(sorted(set(tokenizer.all_special_ids)))
        self.mask_id, self.vocab_size = tokenizer.mask_token_id, len(tokenizer)
        self.generator = torch.Generator().manual_seed(seed)

    def __call__(self, graphs: Sequence[MathSyntaxGraph]) -> PretrainingBatch:
        batch = self.collator(graphs)
        special = torch.isin(batch.input_ids, self.special_ids) | ~batch.attention_mask.bool()
        batch.input_ids, labels = mask_tokens(batch.input_ids, special, self.mask_id, self.vocab_size,
                                              self.generator, self.mask_probability)
        return PretrainingBatch(batch, labels)


def check_pretraining_setup(tasks: Sequence[str], encoder: str) -> None:
    """Raise ``ValueError`` unless ``tasks`` and ``encoder`` make a valid pre-training run."""
    unknown = set(tasks) - set(PRETRAINING_TASKS)
    if unknown or not tasks:
        raise ValueError(f"pre-training tasks must be a non-empty subset of {PRETRAINING_TASKS}, got {tuple(tasks)}")
    if encoder not in ENCODERS:
        raise ValueError(f"encoder must be one of {ENCODERS}, got {encoder!r}")
    if encoder == "bert" and set(tasks) - {"mlm"}:
        raise ValueError("the bert encoder has no graph: only the mlm task applies (that is DAPT-BERT)")


@dataclass
class PretrainingWeights:
    """Which objectives run and their weights in the summed loss."""

    mlm: float = 1.0
    dtc: float = 1.0
    tgcl: float = 1.0
    enabled: tuple[str, ...] = field(default=PRETRAINING_TASKS)


class ComusPretrainer(nn.Module):
    """COMUS with its pre-training heads; ``forward(PretrainingBatch)`` returns the loss terms.

    With ``encoder="bert"`` only the text encoder runs (DAPT-BERT): DTC and TGCL
    need the graph and are refused.
    """

    def __init__(self, model: ComusModel, weights: PretrainingWeights, encoder: str = "comus", dtc_margin: float = 1.0):
        super().__init__()
        check_pretraining_setup(weights.enabled, encoder)
        config = model.config
        self.model, self.weights, self.encoder = model, weights, encoder
        embeddings = model.text.get_input_embeddings()
        self.mlm_head = MlmHead(config.text_hidden, embeddings.num_embeddings, tie_to=embeddings)
        self.dtc_head = DtcHead(config.relation_dim, config.gat_hidden, margin=dtc_margin)
        self.tgcl_head = TgclHead(config.text_hidden, config.gat_hidden)

    def forward(self, item: PretrainingBatch) -> dict[str, torch.Tensor]:
        batch, losses = item.batch, {}
        if self.encoder == "bert":
            token_states = self.model.text(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                                           token_type_ids=batch.token_type_ids).last_hidden_state
            losses["mlm"] = mlm_loss(self.mlm_head(token_states), item.mlm_labels)
        else:
            output = self.model(**batch.as_model_inputs())
            if "mlm" in self.weights.enabled:
                losses["mlm"] = mlm_loss(self.mlm_head(output.token_states), item.mlm_labels)
            if "dtc" in self.weights.enabled:
                mask = batch.slot_mask
                losses["dtc"] = self.dtc_head(
                    output.node_states[batch.slot_heads[mask]], batch.slot_relations[mask],
                    output.node_states[batch.slot_tails[mask]], self.model.graph.relation_embedding.weight,
                )
            if "tgcl" in self.weights.enabled:
                losses["tgcl"] = self.tgcl_head(output.cls, output.mean_node)
        losses["loss"] = sum(getattr(self.weights, name) * value for name, value in losses.items())
        return losses


def run_pretraining(
    texts: Sequence[str],
    output_dir: str,
    model: str = "default",
    tasks: Sequence[str] = PRETRAINING_TASKS,
    encoder: str = "comus",
    steps: int = 1000,
    batch_size: int = 32,
    learning_rate: float = 5e-5,
    seed: int = 0,
    resume: bool = False,
    workers: int = 1,
    mixed_precision: str = "no",
) -> dict:
    """Parse ``texts``, pre-train the encoder ``model`` for ``steps`` steps, save it to ``output_dir``.

    The result loads with ``MathEncoder.from_pretrained(output_dir)``; checkpoints
    (``checkpoint-last``) let ``resume=True`` continue an interrupted run.
    Returns the trainer state as a dict.
    """
    import math
    from dataclasses import asdict

    from mathgraph.encoder import MathEncoder
    from mathgraph.parse import parse_problems
    from tasks.trainer import Trainer, TrainingConfig

    math_encoder = MathEncoder.from_pretrained(model, device="cpu")
    graphs = list(parse_problems(texts, parser=math_encoder.parser, n_process=workers, show_progress=True))
    pretrainer = ComusPretrainer(math_encoder.model, PretrainingWeights(enabled=tuple(tasks)), encoder=encoder)
    loader = torch.utils.data.DataLoader(
        graphs, batch_size=batch_size, shuffle=True, generator=torch.Generator().manual_seed(seed),
        collate_fn=PretrainingCollator(math_encoder.collator, seed=seed), drop_last=len(graphs) > batch_size,
    )
    config = TrainingConfig(epochs=math.ceil(steps / len(loader)), max_steps=steps, learning_rate=learning_rate,
                            seed=seed, mixed_precision=mixed_precision)
    trainer = Trainer(pretrainer, loader, output_dir, config,
                      save=lambda module, directory: math_encoder.save_pretrained(directory))
    state = trainer.train(resume=resume)
    if trainer.accelerator.is_main_process:
        math_encoder.save_pretrained(output_dir)
    return asdict(state)
