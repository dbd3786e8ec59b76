"""JiuZhang 2.0 mixture-of-experts feed-forward layers (Zhao et al., KDD 2023, Section 3.2, Eq. 1-7).

The FFN of chosen BERT layers becomes K experts, each a copy of that FFN
(``intermediate.dense``, activation, ``output.dense``), and a token-wise router:

    R(h)   = softmax((W (h + p)) * eps)          (Eq. 1, 3, 7; p = task prompt or 0)
    MoE(h) = sum over the top-k experts i of g_i(h) * E_i(h)   (Eq. 2; g: R(h) through the gate below)
    L_U    = alpha * K * sum_i f_i * s_i          (Eq. 5, alpha = 1e-3)
    L_Z    = beta * mean over tokens of logsumexp(logits)^2   (Eq. 6, ST-MoE, beta = 1e-4)

``eps ~ U[1 - eta, 1 + eta]`` per token and expert, in training only; the paper
gives no eta, so it is 0.01, Switch Transformer's value. ``f_i`` is the share of
routing choices that went to expert i and ``s_i`` the mean router probability of
expert i, both over real tokens (padding excluded when a mask is given), so
``L_U = alpha`` under uniform routing and ``alpha * K`` when it collapses.

Gate weight: a straight-through estimator, so that a fresh MoE layer computes
exactly the FFN it was copied from while the task loss still trains the router.
With ``p`` the router probabilities of the k chosen experts of a token,

    gate = (p - p.detach()) + w,   w = p / sum(p) (detached; w = 1 for top-1)

Forward, ``p - p.detach()`` is exactly 0, so the gate is ``w``: the chosen
experts' weights sum to one, and as the experts start as exact copies of the
dense FFN (``copy.deepcopy``, no noise), the layer starts as that FFN for every
token, whatever the routing, jitter included (exactly for top-1, where
``w = 1``; up to float rounding of ``sum(w) = 1`` for top-k > 1). Backward, the
gate has the gradient of the raw probability ``p``: exactly Eq. 2's (and Switch
Transformer's) gradient for the router, while the experts get the gradient of
the output they really produced (scaled by ``w``).

Why not the alternatives: the raw probability as the gate (Eq. 2 as written)
starts every layer at about 1/K of the pre-trained FFN, which breaks the
pre-trained model; scaling it by K is only right on average. Plain
renormalisation (``p / sum(p)`` with its true gradient) gives the router no
task gradient at all with top-1 (the weight is the constant 1), and none at
initialisation with top-k > 1 either (identical experts and weights summing to
one make the output independent of the weights). The router breaks the
experts' symmetry (each trains on its own tokens), so the experts need no init
noise. Caveat: with top_k = K every expert is chosen and, while the experts are
still identical, the raw probabilities of the chosen experts sum to the
constant 1, so the router's first task gradient is zero there too (only the
auxiliary losses move it until the experts differ); routing over all experts
is not a sparse MoE anyway.

Capacity: there is no capacity limit, so no token is ever dropped; every token
is computed by exactly its top-k experts, each expert only on its own tokens:
the token copies are sorted by expert (a row permutation), each expert runs on
its contiguous block, and the inverse permutation puts the outputs back (both
permutations have a gather as backward; ``index_add`` was much slower on CPU).
Uneven loads cost time, not correctness; ``MoERouting.tokens_per_expert`` shows
them.

Insertion into a Hugging Face ``BertLayer`` (transformers 4.x and 5.x):
``feed_forward_chunk`` calls ``layer.intermediate(h)`` then
``layer.output(x, h)``. ``add_moe_layers`` sets ``layer.intermediate`` to a
``MoEFeedForward`` that returns the whole expert output ``[B, L, d]``, and
``layer.output`` to ``ResidualLayerNorm``, which keeps the original dropout and
LayerNorm modules (and their state-dict names) and computes
``LayerNorm(dropout(x) + h)``. BERT's forward is untouched.

Per-batch inputs the layer cannot see through BERT's call (the padding mask and
the task prompt) are set on the modules with ``moe_inputs(...)``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from mathgraph.models.precision import full_precision

DEFAULT_JITTER = 0.01
DEFAULT_BALANCE_COEF = 1e-3
DEFAULT_Z_COEF = 1e-4


@dataclass
class MoERouting:
    """The routing of a MoE layer's last forward.

    ``expert_index: [*, k]`` chosen experts per token (``*`` = the input's leading
    dims, e.g. ``[B, L]``); ``probs: [*, K]`` router probabilities (float32,
    detached); ``token_mask: [*]`` bool or None; ``tokens_per_expert: [K]``
    routing choices per expert over real tokens; ``balance_loss`` and ``z_loss``:
    scalars already multiplied by their coefficients, with gradient.
    """

    expert_index: torch.Tensor
    probs: torch.Tensor
    token_mask: torch.Tensor | None
    tokens_per_expert: torch.Tensor
    balance_loss: torch.Tensor
    z_loss: torch.Tensor

    @property
    def aux_loss(self) -> torch.Tensor:
        """``balance_loss + z_loss``, to add to the task loss."""
        return self.balance_loss + self.z_loss


class FeedForwardExpert(nn.Module):
    """One expert: ``dense_out(act(dense_in(h)))``, ``[N, d] -> [N, d]``."""

    def __init__(self, dense_in: nn.Linear, activation: nn.Module, dense_out: nn.Linear):
        super().__init__()
        self.dense_in, self.activation, self.dense_out = dense_in, activation, dense_out

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.dense_out(self.activation(self.dense_in(hidden)))


class MoEFeedForward(nn.Module):
    """K copies of a dense FFN behind a jittered top-k token router (see the module docstring).

    Args:
        dense_in: the FFN's first linear ``d -> d_ff`` (copied into every expert).
        activation: its activation (a module or a function).
        dense_out: its second linear ``d_ff -> d`` (copied into every expert).
        num_experts: K.
        top_k: experts per token.
        jitter: eta of the multiplicative router noise (training only; 0 turns it off).
        balance_coef: alpha of the load-balance loss (Eq. 5).
        z_coef: beta of the router z-loss (Eq. 6).
        router_init_std: std of the router's normal initialisation (BERT's 0.02).

    ``forward(hidden: [*, d]) -> [*, d]``: the gated expert output, before
    dropout, residual and LayerNorm. The routing is kept in ``last_routing``.
    """

    # starts fresh inside the pre-trained text encoder: trained at the head rate (tasks.training.trainer.parameter_groups)
    FRESH_PARAMETERS = ("router",)

    def __init__(
        self,
        dense_in: nn.Linear,
        activation,
        dense_out: nn.Linear,
        num_experts: int = 4,
        top_k: int = 1,
        jitter: float = DEFAULT_JITTER,
        balance_coef: float = DEFAULT_BALANCE_COEF,
        z_coef: float = DEFAULT_Z_COEF,
        router_init_std: float = 0.02,
    ):
        super().__init__()
        if not 1 <= top_k <= num_experts:
            raise ValueError(f"top_k must be in 1..num_experts={num_experts}, got {top_k}")
        if not 0 <= jitter < 1:
            raise ValueError(f"jitter must be in [0, 1), got {jitter}")
        self.num_experts, self.top_k = num_experts, top_k
        self.jitter, self.balance_coef, self.z_coef = jitter, balance_coef, z_coef
        if not isinstance(activation, nn.Module):
            activation = _Activation(activation)
        self.experts = nn.ModuleList(
            FeedForwardExpert(copy.deepcopy(dense_in), activation, copy.deepcopy(dense_out)) for _ in range(num_experts)
        )
        hidden_size = dense_in.in_features
        self.router = nn.Linear(hidden_size, num_experts, bias=False, device=dense_in.weight.device)
        nn.init.normal_(self.router.weight, std=router_init_std)
        self.token_mask: torch.Tensor | None = None
        self.task_prompt: torch.Tensor | None = None
        self.last_routing: MoERouting | None = None

    def __getstate__(self):
        # The per-batch inputs and the last routing hold non-leaf tensors, which cannot be deep-copied.
        state = super().__getstate__()
        return {**state, "token_mask": None, "task_prompt": None, "last_routing": None}

    @classmethod
    def from_bert_layer(cls, layer: nn.Module, **kwargs) -> MoEFeedForward:
        """Experts copied from a ``BertLayer``'s ``intermediate`` and ``output.dense``."""
        return cls(layer.intermediate.dense, layer.intermediate.intermediate_act_fn, layer.output.dense, **kwargs)

    def route(self, hidden: torch.Tensor, task_prompt: torch.Tensor | None = None) -> torch.Tensor:
        """Router logits ``[N, K]`` (float32, jittered in training) for ``hidden: [N, d]``.

        ``task_prompt: [N, d]`` or ``[d]`` is added to the router input only (Eq. 7).
        """
        router_input = hidden if task_prompt is None else hidden + task_prompt
        # Float32 even under autocast: small logit differences decide the routing.
        with full_precision(hidden.device.type):
            logits = F.linear(router_input.float(), self.router.weight.float())
        if self.training and self.jitter > 0:
            logits = logits * torch.empty_like(logits).uniform_(1 - self.jitter, 1 + self.jitter)
        return logits

    def forward(
        self, hidden: torch.Tensor, token_mask: torch.Tensor | None = None, task_prompt: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``hidden: [*, d]`` -> ``[*, d]``. ``token_mask: [*]`` (1 = real token) and
        ``task_prompt: [B, d]`` (per example, for ``hidden: [B, L, d]``) or ``[*, d]``
        default to the ``token_mask`` / ``task_prompt`` attributes set by ``moe_inputs``."""
        token_mask = self.token_mask if token_mask is None else token_mask
        task_prompt = self.task_prompt if task_prompt is None else task_prompt
        lead, d = hidden.shape[:-1], hidden.shape[-1]
        flat = hidden.reshape(-1, d)
        if token_mask is not None:
            if token_mask.shape != lead:
                raise ValueError(f"token_mask has shape {tuple(token_mask.shape)}, the hidden states {tuple(lead)}")
            token_mask = token_mask.reshape(-1).bool()
        if task_prompt is not None:
            if hidden.dim() == 3 and task_prompt.dim() == 2 and task_prompt.shape[0] == hidden.shape[0]:
                task_prompt = task_prompt[:, None, :]
            task_prompt = task_prompt.expand_as(hidden).reshape(-1, d)

        logits = self.route(flat, task_prompt)
        probs = logits.softmax(dim=-1)
        top_probs, expert_index = probs.topk(self.top_k, dim=-1)  # [N, k]
        output = self._dispatch(flat, straight_through_gate(top_probs), expert_index)

        balance_loss, z_loss, tokens_per_expert = self._aux_losses(logits, probs, expert_index, token_mask)
        self.last_routing = MoERouting(
            expert_index=expert_index.reshape(*lead, self.top_k),
            probs=probs.detach().reshape(*lead, -1),
            token_mask=None if token_mask is None else token_mask.reshape(lead),
            tokens_per_expert=tokens_per_expert,
            balance_loss=balance_loss,
            z_loss=z_loss,
        )
        return output.reshape(*lead, -1)

    def _dispatch(self, flat: torch.Tensor, gate: torch.Tensor, expert_index: torch.Tensor) -> torch.Tensor:
        # Sort the (token, choice) pairs by expert once, so each expert reads one contiguous block of
        # exactly its rows. The block sizes are read on the host (one sync per layer): dropless routing
        # gives each expert as many rows as chose it, and ``split`` needs those sizes.
        choices = expert_index.reshape(-1)  # [N k]
        order = choices.argsort(stable=True)
        inverse = order.argsort()
        per_expert = torch.zeros(self.num_experts, dtype=torch.long, device=choices.device).scatter_add_(
            0, choices, torch.ones_like(choices)
        )  # bincount, also on the meta device
        counts = host_sizes(per_expert, total=choices.numel())
        copies = flat if self.top_k == 1 else flat.repeat_interleave(self.top_k, dim=0)
        blocks = _PermuteRows.apply(copies, order, inverse).split(counts)
        weights = _PermuteRows.apply(gate.reshape(-1), order, inverse).split(counts)
        outputs = []
        for expert, block, block_weights in zip(self.experts, blocks, weights):
            if block.shape[0]:
                out = expert(block)
                outputs.append(out * block_weights.unsqueeze(-1).to(out.dtype))
        if not outputs:
            return flat.new_zeros(flat.shape)
        output = _PermuteRows.apply(torch.cat(outputs), inverse, order)  # back to token order
        return output if self.top_k == 1 else output.view(flat.shape[0], self.top_k, -1).sum(dim=1)

    def _aux_losses(self, logits, probs, expert_index, token_mask):
        # Padding is weighted out (weight 0), not selected away with a boolean mask: no value-dependent
        # shapes, so no host sync. With no real token every term is 0 and the graph (and device) is kept.
        weight = torch.ones_like(probs[:, 0]) if token_mask is None else token_mask.to(probs.dtype)  # [N]
        real = weight.sum().clamp(min=1)
        chosen = weight[:, None].expand_as(expert_index).reshape(-1)
        tokens_per_expert = torch.zeros(self.num_experts, dtype=torch.long, device=probs.device).scatter_add_(
            0, expert_index.reshape(-1), chosen.long()
        )
        dispatch_share = tokens_per_expert.to(probs.dtype) / (real * self.top_k)  # f_i, sums to 1
        mean_prob = (probs * weight[:, None]).sum(dim=0) / real  # s_i
        balance = self.balance_coef * self.num_experts * (dispatch_share * mean_prob).sum()
        z = self.z_coef * (torch.logsumexp(logits, dim=-1).pow(2) * weight).sum() / real
        return balance, z, tokens_per_expert


def host_sizes(counts: torch.Tensor, total: int) -> list[int]:
    """``counts.tolist()``, block sizes that sum to ``total``: the one host sync of routing each row to its
    own module. On the ``meta`` device (shape checks without values) an even split of ``total`` stands in."""
    if counts.device.type != "meta":
        return counts.tolist()
    share, rest = divmod(total, counts.numel())
    return [share + (i < rest) for i in range(counts.numel())]


def straight_through_gate(top_probs: torch.Tensor) -> torch.Tensor:
    """Gate weights ``[N, k]`` of the chosen experts from their router probabilities ``top_probs: [N, k]``.

    Forward value: ``top_probs`` renormalised to sum to one per token (exactly 1.0
    for ``k = 1``). Gradient: that of ``top_probs`` itself (straight-through), so the
    router learns from the task loss as with Eq. 2's raw-probability gate.
    """
    if top_probs.shape[-1] == 1:
        # Exactly 1, not p / p, so a fresh top-1 layer is bit-for-bit its expert.
        weights = torch.ones_like(top_probs)
    else:
        weights = (top_probs / top_probs.sum(dim=-1, keepdim=True)).detach()
    # ``p - p.detach()`` is exactly 0 forward (x - x == 0 in floating point), so adding it
    # leaves ``weights`` unchanged; it only carries p's gradient back to the router.
    return (top_probs - top_probs.detach()) + weights


class _PermuteRows(torch.autograd.Function):
    """``x[permutation]`` whose backward is the inverse permutation (a gather), not the
    ``index_add`` autograd would use for ``index_select``: several times faster on CPU."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, permutation: torch.Tensor, inverse: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(inverse)
        return x.index_select(0, permutation)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        (inverse,) = ctx.saved_tensors
        return grad.index_select(0, inverse), None, None


class _Activation(nn.Module):
    """A plain activation function (``config.hidden_act`` can be a callable) as a module."""

    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.function(x)


class ResidualLayerNorm(nn.Module):
    """What is left of ``BertOutput`` once its dense layer moved into the experts.

    ``forward(x: [B, L, d], input_tensor: [B, L, d]) -> LayerNorm(dropout(x) + input_tensor)``,
    with the original ``dropout`` and ``LayerNorm`` modules (same state-dict names).
    """

    def __init__(self, dropout: nn.Module, layer_norm: nn.LayerNorm):
        super().__init__()
        self.dropout, self.LayerNorm = dropout, layer_norm

    def forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dropout(hidden_states) + input_tensor)


def resolve_moe_layers(spec: Sequence[int] | str, num_layers: int) -> list[int]:
    """Layer indices from ``"all"``, ``"none"``, ``"last-N"``, ``"0,3,-1"`` or a list of ints
    (negative ints count from the end)."""
    if isinstance(spec, str):
        spec = spec.strip().lower()
        if spec == "all":
            return list(range(num_layers))
        if spec in ("", "none"):
            return []
        if spec.startswith("last-"):
            count = int(spec[len("last-") :])
            if not 0 <= count <= num_layers:
                raise ValueError(f"{spec!r}: the encoder has {num_layers} layers")
            return list(range(num_layers - count, num_layers))
        spec = [int(part) for part in spec.split(",")]
    indices = sorted({i + num_layers if i < 0 else i for i in spec})
    if any(not 0 <= i < num_layers for i in indices):
        raise ValueError(f"MoE layers {list(spec)} out of range for {num_layers} layers")
    return indices


def add_moe_layers(
    text_model: nn.Module, layers: Sequence[int] | str, num_experts: int = 4, top_k: int = 1, **kwargs
) -> list[MoEFeedForward]:
    """Swap the FFN of ``text_model.encoder.layer[i]`` for a ``MoEFeedForward``, in place.

    ``layers``: see ``resolve_moe_layers``; ``kwargs`` go to ``MoEFeedForward``
    (the router std defaults to the model's ``initializer_range``). Returns the
    new modules in layer order.
    """
    encoder_layers = text_model.encoder.layer
    config = getattr(text_model, "config", None)
    kwargs.setdefault("router_init_std", getattr(config, "initializer_range", 0.02))
    indices = resolve_moe_layers(layers, len(encoder_layers))
    done = [i for i in indices if isinstance(encoder_layers[i].intermediate, MoEFeedForward)]
    if done:
        raise ValueError(f"layers {done} already have a MoE feed-forward")
    modules = []
    for i in indices:
        layer = encoder_layers[i]
        if getattr(layer, "chunk_size_feed_forward", 0):
            # Chunking would route each chunk separately and keep only the last chunk's routing.
            raise ValueError("MoE layers need chunk_size_feed_forward = 0")
        moe = MoEFeedForward.from_bert_layer(layer, num_experts=num_experts, top_k=top_k, **kwargs)
        layer.output = ResidualLayerNorm(layer.output.dropout, layer.output.LayerNorm)
        layer.intermediate = moe
        modules.append(moe)
    return modules


def moe_modules(model: nn.Module) -> list[MoEFeedForward]:
    """Every ``MoEFeedForward`` inside ``model``, in module order."""
    return [m for m in model.modules() if isinstance(m, MoEFeedForward)]


@contextmanager
def moe_inputs(
    modules: Sequence[MoEFeedForward], token_mask: torch.Tensor | None = None, task_prompt: torch.Tensor | None = None
) -> Iterator[None]:
    """Within the block, every module routes with ``token_mask: [B, L]`` (padding left out of the
    statistics and auxiliary losses) and ``task_prompt: [B, d]`` (Eq. 7); both are cleared on exit
    so a later batch never sees stale ones."""
    for module in modules:
        module.token_mask, module.task_prompt = token_mask, task_prompt
    try:
        yield
    finally:
        for module in modules:
            module.token_mask, module.task_prompt = None, None


def moe_aux_loss(modules: Sequence[MoEFeedForward]) -> torch.Tensor:
    """Sum of the load-balance and z-losses of the modules' last forward (a scalar; 0 with no module)."""
    losses = [m.last_routing.aux_loss for m in modules if m.last_routing is not None]
    return torch.stack(losses).sum() if losses else torch.tensor(0.0)


def moe_load_stats(modules: Sequence[MoEFeedForward]) -> torch.Tensor:
    """Routing choices per expert over real tokens in the last forward: ``[num_modules, K]`` (long)."""
    if not modules:
        return torch.zeros(0, 0, dtype=torch.long)
    return torch.stack(
        [
            m.last_routing.tokens_per_expert
            if m.last_routing is not None
            else torch.zeros(m.num_experts, dtype=torch.long, device=m.router.weight.device)
            for m in modules
        ]
    )
