"""A frozen prefix of the text encoder whose outputs are computed once per problem (``--freeze-text-layers N``).

The embeddings and the first ``N`` text layers stop training; the token states
they give for a problem are computed the first time the problem is seen and
kept in host (CPU) memory, whatever device trains: float32, unpadded, about
``tokens x hidden x 4`` bytes per problem (some 150 kB for a 100-token MATH
problem with MiniLM), up to ``max_mib`` (default 4096 MiB; problems seen after
that are computed again each time they come). Later epochs, and the dev
evaluation, run only the layers that train, the GAT and the memory; a batch's
cached states go to the device in one copy.

The trade-off: the frozen layers no longer adapt to the task, and they run
without dropout (always in eval mode, so the cached states are deterministic);
the new LaTeX token embeddings stay as they were initialised. Fine-tuning all
layers usually scores a little higher; freezing makes each epoch after the
first several times faster.

What the cache holds: the states the frozen layers give in eval mode at the
run's precision. In fp32 they equal what the unfrozen forward computes for the
problem in eval mode (padding never changes a real token's states). Under
bf16/fp16 autocast they are the autocast-rounded states (stored as float32), as
the unfrozen forward under the same autocast computes them.
"""

from __future__ import annotations

import torch
from torch import nn

from mathgraph.errors import UserError
from mathgraph.models.batching import ProblemBatch


class FrozenTextPrefix:
    """Freezes ``backbone.text``'s embeddings and first ``num_layers`` layers and caches their outputs.

    ``states(problems)`` gives ``[B, L, d_text]`` token states after the prefix for a
    ``ProblemBatch`` built from a ``FeatureStore`` (it keys the cache on ``problem_ids``).
    ``max_layers``: the most layers that may be frozen (below the fusion layers); ``max_mib``:
    the most host memory the cached states may take.
    """

    def __init__(self, backbone: nn.Module, num_layers: int, max_layers: int, max_mib: float = 4096.0):
        if not 1 <= num_layers <= max_layers:
            raise UserError(
                f"--freeze-text-layers must be in 1..{max_layers} for this model "
                f"(the layers above must train), got {num_layers}"
            )
        self.backbone, self.num_layers = backbone, num_layers
        self.frozen = [backbone.text.embeddings, *backbone.text.encoder.layer[:num_layers]]
        for module in self.frozen:
            module.requires_grad_(False)
        self.max_mib = max_mib
        self.cache: dict[int, torch.Tensor] = {}  # problem id -> [tokens, d_text] float32 on the CPU
        self._cached_bytes = 0

    @property
    def cached_mib(self) -> float:
        """Memory the cached states take, in MiB."""
        return self._cached_bytes / 2**20

    def states(self, problems: ProblemBatch) -> torch.Tensor:
        """Token states after the frozen layers, ``[B, L, d_text]`` float32 on the batch's device (zeros at
        padding)."""
        if problems.problem_ids is None or bool((problems.problem_ids < 0).any()):
            raise ValueError("the frozen-prefix cache needs batches built from a FeatureStore (problem_ids)")
        ids = problems.problem_ids.tolist()  # on the host (``ProblemBatch.HOST_FIELDS``): no sync
        missing = [row for row, problem in enumerate(ids) if problem not in self.cache]
        computed = self._compute(problems, missing, ids) if missing else {}
        device = problems.input_ids.device
        host = torch.zeros(
            *problems.input_ids.shape, self.backbone.config.text_hidden, pin_memory=device.type == "cuda"
        )  # pinned: the copy below runs asynchronously
        for row, problem in enumerate(ids):
            if row not in computed:
                host[row, : len(self.cache[problem])] = self.cache[problem]
        out = host.to(device, non_blocking=True)
        for row, states in computed.items():  # already on the device
            out[row, : len(states)] = states
        return out

    @torch.no_grad()
    def _compute(self, problems: ProblemBatch, rows: list[int], ids: list[int]) -> dict[int, torch.Tensor]:
        """The frozen layers' states of the problems in ``rows`` (on the batch's device, unpadded, by row), kept
        in the cache while it has room. Reading their lengths is a host sync: once per problem, while the
        cache fills."""
        select = torch.tensor(rows, device=problems.input_ids.device)
        lengths = dict(zip(rows, problems.attention_mask[select].sum(1).tolist()))
        width = max(lengths.values())
        modes = [m.training for m in self.frozen]
        for module in self.frozen:
            module.eval()  # no dropout: the cached states are the deterministic ones
        try:
            states, _ = self.backbone.run_text_layers(
                problems.input_ids[select, :width],
                problems.attention_mask[select, :width],
                problems.token_type_ids[select, :width],
                stop=self.num_layers,
            )
        finally:
            for module, mode in zip(self.frozen, modes):
                module.train(mode)
        computed = {}
        for i, row in enumerate(rows):
            computed[row] = states[i, : lengths[row]].float()
            size = computed[row].numel() * 4
            if ids[row] not in self.cache and self._cached_bytes + size <= self.max_mib * 2**20:
                self.cache[ids[row]] = computed[row].to("cpu", copy=True)
                self._cached_bytes += size
        return computed
