"""Continual pre-training of COMUS (Section 3.3): MLM, DTC and TGCL, each weighted and switchable.

Each objective is a small class (its head and its loss) in the ``OBJECTIVES`` registry.

``--tasks mlm`` with ``--architecture bert`` is DAPT-BERT (masked LM on the math
corpus, no graph); ``--tasks mlm,dtc,tgcl`` with ``--architecture comus`` is COMUS.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import torch
from torch import nn

from mathgraph.errors import UserError
from mathgraph.models.batching import DeviceBatch, ProblemBatch, ProblemCollator
from mathgraph.models.comus import ComusModel, ComusOutput
from mathgraph.models.heads import DtcHead, MlmHead, TgclHead, mlm_loss
from mathgraph.tasks.training.trainer import TrainingArguments, TrainingData, fit

PRETRAINING_ARCHITECTURES = ("comus", "bert", "bert+gat")  # bert+gat: no memory layers (an ablation)


def mask_tokens(
    input_ids: torch.Tensor,
    special_mask: torch.Tensor,
    mask_id: int,
    vocab_size: int,
    generator: torch.Generator,
    probability: float = 0.15,
    random_tokens: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT masking (Eq. 9): pick ``probability`` of the non-special tokens; of those 80 % become
    ``[MASK]``, 10 % a random token (of ``vocab_size``, or of the ids ``random_tokens`` when given), 10 % stay.
    Returns ``(masked ids, labels)`` with ``labels = -100`` where nothing is predicted."""
    chosen = (torch.rand(input_ids.shape, generator=generator) < probability) & ~special_mask
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    draw = torch.rand(input_ids.shape, generator=generator)
    masked = input_ids.clone()
    masked[chosen & (draw < 0.8)] = mask_id
    random_positions = chosen & (draw >= 0.8) & (draw < 0.9)
    if random_tokens is None:
        drawn = torch.randint(vocab_size, input_ids.shape, generator=generator)
    else:
        drawn = random_tokens[torch.randint(len(random_tokens), input_ids.shape, generator=generator)]
    masked[random_positions] = drawn[random_positions]
    return masked, labels


@dataclass
class PretrainingBatch(DeviceBatch):
    """A collated batch with MLM inputs: ``batch.input_ids`` are masked, ``mlm_labels: [B, L]`` (-100 where
    not masked), and ``mlm_positions: [M]`` the flat indices (into ``B * L``) of the masked tokens, found on
    the host when the batch is made, so the loss picks them without a device sync (default: from
    ``mlm_labels``)."""

    batch: ProblemBatch
    mlm_labels: torch.Tensor
    mlm_positions: torch.Tensor | None = None

    def __post_init__(self):
        if self.mlm_positions is None:
            self.mlm_positions = (self.mlm_labels.reshape(-1) != -100).nonzero()[:, 0]

    def __len__(self) -> int:
        return len(self.batch)


class PretrainingCollator:
    """Collates problems and masks 15 % of the tokens, reproducibly from ``seed``.

    ``to_batch(items) -> ProblemBatch`` collates the items (default: ``collator``
    itself, on parsed graphs; training passes ``FeatureStore.batch``, on texts).
    ``random_tokens``: the ids random replacements are drawn from (default: the whole vocabulary).
    """

    def __init__(
        self,
        collator: ProblemCollator,
        seed: int = 0,
        mask_probability: float = 0.15,
        to_batch: Callable[[Sequence], ProblemBatch] | None = None,
        random_tokens: Sequence[int] | None = None,
    ):
        tokenizer = collator.tokenizer
        if tokenizer.mask_token_id is None:
            raise ValueError("the tokenizer has no [MASK] token, so it cannot be used for MLM")
        self.to_batch, self.mask_probability = to_batch or collator, mask_probability
        self.special_ids = torch.tensor(sorted(set(tokenizer.all_special_ids)))
        self.mask_id, self.vocab_size = tokenizer.mask_token_id, len(tokenizer)
        self.generator = torch.Generator().manual_seed(seed)
        self.random_tokens = None if random_tokens is None else torch.as_tensor(random_tokens, dtype=torch.long)

    def __call__(self, items: Sequence) -> PretrainingBatch:
        batch = self.to_batch(items)
        special = torch.isin(batch.input_ids, self.special_ids) | ~batch.attention_mask.bool()
        batch.input_ids, labels = mask_tokens(
            batch.input_ids,
            special,
            self.mask_id,
            self.vocab_size,
            self.generator,
            self.mask_probability,
            self.random_tokens,
        )
        return PretrainingBatch(batch, labels)


# ---------------------------------------------------------------- objectives
class Objective(ABC):
    """A pre-training objective: its head on the encoder, and its loss on a batch's outputs."""

    name = ""
    needs_graph = True

    @abstractmethod
    def make_head(self, model: ComusModel, dtc_margin: float) -> nn.Module:
        """The objective's head on ``model`` (``dtc_margin``: DTC's TransE margin)."""

    @abstractmethod
    def loss(self, head: nn.Module, model: ComusModel, output: ComusOutput, item: PretrainingBatch) -> torch.Tensor:
        """The objective's scalar loss on a batch ``item`` encoded as ``output``."""


class MaskedLanguageModelling(Objective):
    """MLM (Eq. 9): predict the masked tokens; the decoder is tied to the input embeddings."""

    name, needs_graph = "mlm", False

    def make_head(self, model, dtc_margin):
        embeddings = model.text.get_input_embeddings()
        return MlmHead(model.config.text_hidden, embeddings.num_embeddings, tie_to=embeddings)

    def loss(self, head, model, output, item):
        # Decode the masked positions only: logits over the whole batch are [B, L, vocab], most of the step's time.
        positions = item.mlm_positions
        if positions.numel() == 0:  # a batch of very short texts can have no masked token
            return output.token_states.sum() * 0.0
        states = output.token_states.flatten(0, 1)[positions]
        return mlm_loss(head(states), item.mlm_labels.flatten()[positions])


class DependencyTripletCompletion(Objective):
    """DTC (Eq. 10): TransE margin loss on the graph's triplets against a sampled negative relation."""

    name = "dtc"

    def make_head(self, model, dtc_margin):
        return DtcHead(model.config.relation_dim, model.config.gat_hidden, margin=dtc_margin)

    def loss(self, head, model, output, item):
        # Every padded slot (pointing at node 0) with weight 0, not the real ones picked by a boolean mask:
        # no value-dependent shape, so no device sync.
        batch, nodes = item.batch, output.node_states
        if nodes.shape[0] == 0:  # no graph in the batch
            return nodes.sum() * 0.0
        return head(
            nodes[batch.slot_heads.flatten()],
            batch.slot_relations.flatten(),
            nodes[batch.slot_tails.flatten()],
            model.graph.relation_embedding.weight,
            weights=batch.slot_mask.flatten(),
        )


class TextGraphContrastive(Objective):
    """TGCL (Eq. 11): in-batch InfoNCE between a problem's ``[CLS]`` and its mean node vector."""

    name = "tgcl"

    def make_head(self, model, dtc_margin):
        return TgclHead(model.config.text_hidden, model.config.gat_hidden)

    def loss(self, head, model, output, item):
        return head(output.cls, output.mean_node)


OBJECTIVES: dict[str, Objective] = {
    o.name: o for o in (MaskedLanguageModelling(), DependencyTripletCompletion(), TextGraphContrastive())
}
PRETRAINING_TASKS = tuple(OBJECTIVES)


def check_pretraining_setup(tasks: Sequence[str], architecture: str) -> None:
    """Raise ``ValueError`` unless ``tasks`` and ``architecture`` make a valid pre-training run."""
    unknown = set(tasks) - set(OBJECTIVES)
    if unknown or not tasks:
        raise UserError(f"pre-training tasks must be a non-empty subset of {PRETRAINING_TASKS}, got {tuple(tasks)}")
    if architecture not in PRETRAINING_ARCHITECTURES:
        raise UserError(f"the architecture must be one of {PRETRAINING_ARCHITECTURES}, got {architecture!r}")
    if architecture == "bert" and any(OBJECTIVES[t].needs_graph for t in tasks):
        raise UserError("bert has no graph: only the mlm task applies (that is DAPT-BERT)")


@dataclass
class PretrainingWeights:
    """Which objectives run and their weights in the summed loss."""

    mlm: float = 1.0
    dtc: float = 1.0
    tgcl: float = 1.0
    enabled: tuple[str, ...] = field(default=PRETRAINING_TASKS)


class ComusPretrainer(nn.Module):
    """COMUS with the heads of its enabled objectives; ``forward(PretrainingBatch)`` returns the loss terms.

    With ``architecture="bert"`` only the text encoder runs (DAPT-BERT): objectives
    that need the graph are refused.
    """

    def __init__(
        self, model: ComusModel, weights: PretrainingWeights, architecture: str = "comus", dtc_margin: float = 1.0
    ):
        super().__init__()
        check_pretraining_setup(weights.enabled, architecture)
        self.model, self.weights, self.architecture = model, weights, architecture
        self.heads = nn.ModuleDict({name: OBJECTIVES[name].make_head(model, dtc_margin) for name in weights.enabled})

    def forward(self, item: PretrainingBatch) -> dict[str, torch.Tensor]:
        batch = item.batch
        if self.architecture == "bert":
            states, _ = self.model.run_text_layers(batch.input_ids, batch.attention_mask, batch.token_type_ids)
            output = ComusOutput(states, None, states[:, 0], None, None, [])
        else:
            output = self.model(**batch.as_model_inputs(), fuse=self.architecture == "comus")
        losses = {name: OBJECTIVES[name].loss(head, self.model, output, item) for name, head in self.heads.items()}
        losses["loss"] = sum(getattr(self.weights, name) * value for name, value in losses.items())
        return losses


def freeze_pretrained_vocabulary(model: ComusModel, tokenizer) -> None:
    """Keep the text encoder's pre-trained word embeddings fixed; only the LaTeX rows added to the vocabulary
    train (all rows are fixed where none was added). A model pre-trained so differs from its start only in
    its layers, graph side and new rows, which is what the shipped model stores (``tasks.release.package``)."""
    from mathgraph.models.cgc_lora import PartlyTrainableEmbedding
    from mathgraph.models.text_encoder import first_added_latex_row

    embeddings = model.text.embeddings
    start = first_added_latex_row(tokenizer)
    if start is None or start >= embeddings.word_embeddings.num_embeddings:
        embeddings.word_embeddings.weight.requires_grad_(False)
    else:
        embeddings.word_embeddings = PartlyTrainableEmbedding(embeddings.word_embeddings, start)


def run_pretraining(
    texts: Sequence[str],
    args: TrainingArguments,
    model: str = "untrained",
    tasks: Sequence[str] = PRETRAINING_TASKS,
    architecture: str = "comus",
    split_digits: bool | None = None,
    freeze_vocabulary: bool = False,
    random_tokens: Sequence[int] | None = None,
) -> dict:
    """Pre-train the encoder ``model`` on ``texts`` for ``args.max_steps`` steps; save it to ``args.output_dir``.

    Graphs come from the graph cache (none are parsed for ``architecture="bert"``);
    batches are length-bucketed. The result loads with
    ``MathEncoder.from_pretrained(args.output_dir)``; ``args.resume`` continues an
    interrupted run from ``checkpoint-last``. ``split_digits=True`` builds the new
    ``"untrained"`` model with a tokenizer that cuts numbers into single digits (kept in
    its config). ``freeze_vocabulary=True`` keeps the pre-trained word embeddings (and so the tied MLM
    decoder) fixed: see ``freeze_pretrained_vocabulary``. ``random_tokens``: the ids MLM's random replacements
    are drawn from (a kit's start encoder holds only the rows its texts use). Returns the trainer state as a dict.
    """
    from mathgraph.models.features import FeatureStore
    from mathgraph.tasks.training.bucketing import LengthBucketSampler
    from mathgraph.tasks.training.finetune import load_start_encoder

    check_pretraining_setup(tasks, architecture)
    if args.freeze_text_layers:
        raise UserError("--freeze-text-layers does not apply to pre-training: masked inputs change every step")
    texts = list(dict.fromkeys(texts))
    if not texts:
        raise UserError("no texts to pre-train on")
    math_encoder = load_start_encoder(model, split_digits=split_digits)
    store = FeatureStore.for_run(math_encoder, texts, args, with_graphs=architecture != "bert")
    if freeze_vocabulary:
        freeze_pretrained_vocabulary(math_encoder.model, math_encoder.tokenizer)
    pretrainer = ComusPretrainer(
        math_encoder.model, PretrainingWeights(enabled=tuple(tasks)), architecture=architecture
    )
    # In-batch negatives (TGCL) need two or more problems per batch: a short last batch is dropped.
    sampler = LengthBucketSampler(
        [store.length(t) for t in texts], args.batch_size, args.seed, drop_last=len(texts) > args.batch_size
    )
    collate = PretrainingCollator(
        math_encoder.collator, seed=args.seed, to_batch=store.batch, random_tokens=random_tokens
    )
    state = fit(
        pretrainer,
        TrainingData(texts, sampler, collate),
        args,
        save=lambda module, directory: math_encoder.save_pretrained(directory),
    )
    return asdict(state)
