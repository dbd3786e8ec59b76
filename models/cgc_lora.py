"""CGC-LoRA (Song et al., 2024, Eq. 3-8): LoRA split into task-common and task-specific experts.

A frozen linear ``W0`` gets ``N = N_C + N_T`` LoRA experts of rank ``r_i = r // N``
each (``N_C`` shared by all tasks, one specific expert per task, ``N_T`` tasks),
so the experts together have the parameters of one rank-``N r_i`` LoRA. For an
input of task ``j`` only the common experts and task ``j``'s own expert act:

    h_j = W0 x + (alpha / r) [w_j^S B_j^S A_j^S + sum_i w_ji^C B_i^C A_i^C] x     (Eq. 4)
    w_j = softmax([W_T^C e_j ; W_T^S e_j])  in R^(N_C + 1)                          (Eq. 5-7)

with ``r = N r_i`` the total rank. The task-motivated gate reads the task
embedding ``e_j`` only, never the input, and one ``TaskGate`` is shared by all
layers (the paper's single-gate setup, better than one gate per layer in its
Table V). Because the gate is input-free, the layer for task ``j`` is the plain
linear ``W0 + (alpha / r) Delta W_j`` (Eq. 8): ``merge(task)`` folds it in for
inference and ``unmerge()`` restores ``W0`` exactly.

As in LoRA, ``A`` starts Kaiming-uniform and ``B`` at zero, so a fresh layer
equals its base layer; with ``N_C = 0`` and one task it is plain LoRA. There
is no dropout on the LoRA input (the paper does not use one).

New token embeddings: ``apply_cgc_lora`` freezes the whole text encoder, but
the rows of the word-embedding matrix for tokens added after pre-training
(the LaTeX commands of ``models.text_encoder.add_latex_tokens``, appended at the
end) start random and have to train. With ``new_token_start = n`` (the number
of pre-trained rows), ``word_embeddings`` becomes a ``PartlyTrainableEmbedding``
holding two parameters: the ``n`` pre-trained rows, frozen, and the new rows,
trainable. A single trainable matrix with a gradient mask on the old rows
would not do: AdamW's decoupled weight decay shrinks every row of a parameter
it holds, zero gradient or not, so the pre-trained rows would drift unless the
optimizer excluded them. Two parameters keep them out of the optimizer
altogether. The module still reads and writes one ``weight`` entry in the
state dict (the two parts concatenated), so checkpoints keep the layout of a
plain ``nn.Embedding``.

The task of the current batch is set on the gate, ``gate.current_task = j``
(an int, or a ``[B]`` tensor of task ids for a batch mixing tasks); every
wrapped linear reads it from there. The gate is not registered as a submodule
of each linear (it would appear once per layer in the state dict): the caller
owns it, keeps it in its model and moves it to the device with it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F

from mathgraph.models.precision import full_precision


class TaskGate(nn.Module):
    """The task-motivated gate (Eq. 5-7), shared by every ``CGCLoRALinear`` of a model.

    Args:
        num_tasks: ``N_T``.
        num_common: ``N_C``.
        task_dim: ``d_T``, the size of the task embeddings ``E``.

    ``forward(tasks: [B] long) -> [B, N_C + 1]``: softmax weights of the common
    experts then the task's own expert; each row sums to one.
    """

    def __init__(self, num_tasks: int, num_common: int, task_dim: int = 16):
        super().__init__()
        if num_tasks < 1 or num_common < 0:
            raise ValueError(f"need num_tasks >= 1 and num_common >= 0, got {num_tasks}, {num_common}")
        self.num_tasks, self.num_common = num_tasks, num_common
        self.task_embedding = nn.Embedding(num_tasks, task_dim)  # E
        bound = task_dim**-0.5  # nn.Linear's init; by hand, as N_C = 0 gives an empty matrix
        self.common = nn.Parameter(torch.empty(num_common, task_dim).uniform_(-bound, bound))  # W_T^C
        self.specific = nn.Parameter(torch.empty(1, task_dim).uniform_(-bound, bound))  # W_T^S
        self.current_task: int | torch.Tensor | None = None

    def forward(self, tasks: torch.Tensor) -> torch.Tensor:
        e = self.task_embedding(tasks)
        with full_precision(e.device.type):
            logits = e.float() @ torch.cat([self.common, self.specific]).float().T
        return logits.softmax(dim=-1)

    def current_tasks(self) -> torch.Tensor:
        """``current_task`` as a long tensor ``[B]`` (``[1]`` for an int) on the gate's device."""
        if self.current_task is None:
            raise RuntimeError("set gate.current_task to the task id(s) of the batch before the forward")
        tasks = torch.as_tensor(self.current_task, dtype=torch.long, device=self.task_embedding.weight.device)
        return tasks.reshape(-1)


class CGCLoRALinear(nn.Module):
    """A frozen ``nn.Linear`` plus ``N_C`` common and ``N_T`` task-specific LoRA experts.

    Args:
        base: the linear layer to adapt (its parameters are frozen here).
        gate: the shared ``TaskGate`` (gives ``N_C``, ``N_T`` and the current task).
        rank: total LoRA rank ``r``; every expert gets ``r // (N_C + N_T)`` (at least 1).
        alpha: LoRA scale numerator; the update is scaled by ``alpha / (N r_i)``.

    ``forward(x: [B, ..., d_in]) -> [B, ..., d_out]`` for the task(s) in
    ``gate.current_task``: an int for the whole batch, or a ``[B]`` tensor
    (example ``b`` uses task ``current_task[b]``).
    """

    # starts fresh inside the pre-trained text encoder (tasks.training.trainer.parameter_groups)
    FRESH_PARAMETERS = ("common_A", "common_B", "specific_A", "specific_B")

    def __init__(self, base: nn.Linear, gate: TaskGate, rank: int = 8, alpha: float = 16.0):
        super().__init__()
        num_experts = gate.num_common + gate.num_tasks
        expert_rank = rank // num_experts
        if expert_rank < 1:
            raise ValueError(f"rank {rank} is smaller than the number of experts {num_experts}")
        self.base = base
        base.requires_grad_(False)
        self._gate = (gate,)  # a tuple, so the shared gate is not registered once per layer
        self.expert_rank = expert_rank
        self.scaling = alpha / (num_experts * expert_rank)
        d_in, d_out = base.in_features, base.out_features
        factory = {"device": base.weight.device, "dtype": base.weight.dtype}
        self.common_A = nn.Parameter(torch.empty(gate.num_common, expert_rank, d_in, **factory))
        self.common_B = nn.Parameter(torch.zeros(gate.num_common, d_out, expert_rank, **factory))
        self.specific_A = nn.Parameter(torch.empty(gate.num_tasks, expert_rank, d_in, **factory))
        self.specific_B = nn.Parameter(torch.zeros(gate.num_tasks, d_out, expert_rank, **factory))
        for A in (*self.common_A, *self.specific_A):
            nn.init.kaiming_uniform_(A, a=math.sqrt(5))  # LoRA's (and nn.Linear's) init, per expert
        self.merged_task: int | None = None
        self._base_weight: torch.Tensor | None = None

    @property
    def gate(self) -> TaskGate:
        """The shared task gate."""
        return self._gate[0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.merged_task is not None:
            current = self.gate.current_task
            if current is not None and not bool((torch.as_tensor(current) == self.merged_task).all()):
                raise RuntimeError(f"merged for task {self.merged_task}, called for task {current}; unmerge first")
            return self.base(x)
        tasks = self.gate.current_tasks()
        if tasks.shape[0] not in (1, x.shape[0]):
            raise ValueError(f"{tasks.shape[0]} task ids for a batch of {x.shape[0]}")
        tasks = tasks.expand(x.shape[0])
        weights = self.gate(tasks).to(x.dtype)  # [B, N_C + 1]
        # Per-example factors shaped [B, 1, ..., 1, n] broadcast over x's middle dims.
        view = (x.shape[0],) + (1,) * (x.dim() - 2)
        common = torch.einsum("...i,cri->...cr", x, self.common_A) * weights[:, :-1].reshape(*view, -1, 1)
        delta = torch.einsum("...cr,cor->...o", common, self.common_B)
        # Each example gathers only its own task's expert, so other tasks' experts get exactly zero gradient.
        specific = torch.einsum("b...i,bri->b...r", x, self.specific_A[tasks])
        specific = torch.einsum("b...r,bor->b...o", specific, self.specific_B[tasks])
        delta = delta + specific * weights[:, -1].reshape(*view, 1)
        return self.base(x) + self.scaling * delta

    def delta_weight(self, task: int) -> torch.Tensor:
        """``(alpha / r) Delta W_task``, ``[d_out, d_in]`` (Eq. 8)."""
        weights = self.gate(torch.tensor([task], device=self.common_A.device))[0].to(self.common_A.dtype)
        common = torch.einsum("c,cor,cri->oi", weights[:-1], self.common_B, self.common_A)
        return self.scaling * (common + weights[-1] * self.specific_B[task] @ self.specific_A[task])

    @torch.no_grad()
    def merge(self, task: int) -> None:
        """Fold task ``task``'s update into the base weight: the layer becomes a plain linear."""
        if self.merged_task is not None:
            raise RuntimeError(f"already merged for task {self.merged_task}")
        self._base_weight = self.base.weight.detach().clone()
        self.base.weight.add_(self.delta_weight(task).to(self.base.weight.dtype))
        self.merged_task = task

    @torch.no_grad()
    def unmerge(self) -> None:
        """Restore the original base weight (copied back, so exactly)."""
        if self.merged_task is None:
            return
        self.base.weight.copy_(self._base_weight)
        self._base_weight, self.merged_task = None, None


class PartlyTrainableEmbedding(nn.Module):
    """An ``nn.Embedding`` whose first ``num_frozen`` rows are frozen and whose other rows train.

    Args:
        embedding: the embedding to split (its weight is copied into the two parts).
        num_frozen: rows ``0 .. num_frozen - 1`` (the pre-trained vocabulary) stay fixed;
            rows from ``num_frozen`` on (tokens added later) train.

    ``forward(ids: [*] long) -> [*, d]`` looks each id up in its part. The parameters
    are ``frozen`` (``requires_grad=False``, so no optimizer holds it and weight decay
    cannot move it) and ``new``; ``weight`` is their concatenation, read-only, and is
    also what the state dict holds, under the plain embedding's ``weight`` key.
    """

    # starts fresh inside the pre-trained text encoder (tasks.training.trainer.parameter_groups)
    FRESH_PARAMETERS = ("new",)

    def __init__(self, embedding: nn.Embedding, num_frozen: int):
        super().__init__()
        rows = embedding.num_embeddings
        if not 0 < num_frozen < rows:
            raise ValueError(f"num_frozen must be in 1..{rows - 1} for {rows} rows, got {num_frozen}")
        if embedding.max_norm is not None or embedding.scale_grad_by_freq or embedding.sparse:
            raise ValueError(
                "PartlyTrainableEmbedding supports plain embeddings only (no max_norm, scale_grad_by_freq or sparse)"
            )
        weight = embedding.weight.detach()
        self.num_embeddings, self.embedding_dim, self.num_frozen = rows, embedding.embedding_dim, num_frozen
        self.padding_idx = embedding.padding_idx
        self.frozen = nn.Parameter(weight[:num_frozen].clone(), requires_grad=False)
        self.new = nn.Parameter(weight[num_frozen:].clone())

    @property
    def weight(self) -> torch.Tensor:
        """The whole matrix ``[num_embeddings, d]`` (a new tensor: writing to it changes nothing)."""
        return torch.cat([self.frozen, self.new])

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """``ids: [*]`` -> ``[*, d]``, each id looked up in the part that holds its row."""
        # Two small lookups instead of one in torch.cat([frozen, new]): concatenating would copy the
        # whole vocabulary each step and give it a dense [V, d] gradient buffer in the backward.
        is_new = (ids >= self.num_frozen).unsqueeze(-1)
        old = F.embedding(ids.clamp(max=self.num_frozen - 1), self.frozen)
        new = F.embedding((ids - self.num_frozen).clamp(min=0), self.new)
        return torch.where(is_new, new, old)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # One ``weight`` entry, as an nn.Embedding has: checkpoints keep their layout either way.
        destination[prefix + "weight"] = self.weight.detach()

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        key = prefix + "weight"
        if key in state_dict:
            weight = state_dict.pop(key)
            if tuple(weight.shape) != (self.num_embeddings, self.embedding_dim):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {tuple(weight.shape)}, "
                    f"the current model has {(self.num_embeddings, self.embedding_dim)}"
                )
                return
            state_dict[prefix + "frozen"] = weight[: self.num_frozen]
            state_dict[prefix + "new"] = weight[self.num_frozen :]
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, num_frozen={self.num_frozen}"


def apply_cgc_lora(
    text_model: nn.Module,
    num_tasks: int,
    num_common: int = 2,
    rank: int = 8,
    alpha: float = 16.0,
    targets: Sequence[str] = ("query", "key", "value", "dense"),
    task_dim: int = 16,
    new_token_start: int | None = None,
) -> TaskGate:
    """Freeze ``text_model`` and wrap every ``nn.Linear`` named in ``targets`` inside
    ``text_model.encoder.layer`` (BERT: Q, K, V and the three dense layers) in a
    ``CGCLoRALinear``, in place. Returns the shared ``TaskGate`` (on the model's device),
    which the caller must keep and train.

    ``new_token_start``: the number of pre-trained word-embedding rows. The rows after
    them (tokens added to the tokenizer after pre-training, e.g. LaTeX commands) start
    random, so they keep training: ``embeddings.word_embeddings`` becomes a
    ``PartlyTrainableEmbedding``. ``None``, or no row after it, freezes every row.
    """
    text_model.requires_grad_(False)
    device = next(text_model.parameters()).device
    gate = TaskGate(num_tasks, num_common, task_dim).to(device)
    for layer in text_model.encoder.layer:
        for parent in list(layer.modules()):
            for name, child in list(parent.named_children()):
                if name in targets and isinstance(child, nn.Linear):
                    setattr(parent, name, CGCLoRALinear(child, gate, rank=rank, alpha=alpha))
    embeddings = text_model.embeddings
    if new_token_start is not None and new_token_start < embeddings.word_embeddings.num_embeddings:
        embeddings.word_embeddings = PartlyTrainableEmbedding(embeddings.word_embeddings, new_token_start)
    return gate


def cgc_lora_layers(model: nn.Module) -> list[CGCLoRALinear]:
    """Every ``CGCLoRALinear`` inside ``model``, in module order."""
    return [m for m in model.modules() if isinstance(m, CGCLoRALinear)]


def merge_cgc_lora(model: nn.Module, task: int) -> None:
    """``merge(task)`` on every CGC-LoRA layer of ``model``."""
    for layer in cgc_lora_layers(model):
        layer.merge(task)


def unmerge_cgc_lora(model: nn.Module) -> None:
    """``unmerge()`` on every CGC-LoRA layer of ``model``."""
    for layer in cgc_lora_layers(model):
        layer.unmerge()
