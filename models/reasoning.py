"""ReasonFormer reasoning modules (Zhong et al., 2023, Sections 3.1-3.3) on top of a math encoder.

The text encoder is cut in two. Its lower layers, with COMUS fusion where the
model has it, are the **representation module** (System 1): they give the token
states ``H^0``. Its top ``layers`` layers become the **reasoning modules**
(System 2), one copy per skill, applied for up to ``depth`` reasoning steps:

    S^i    = softmax(FFN(T_i(H^{i-1})[CLS]))          skill router of step i (Eq. 3): one Transformer layer,
                                                       an FFN, a softmax; one decision per problem
    H^i    = sum over the top-k skills j of w_j R_j(H^{i-1}),  w = S^i_topk / sum(S^i_topk)    (Eq. 2)
    g^i    = sigmoid(FFN(H^i[CLS]))                    stop gate of step i, one value per problem
    H~^i   = H~^{i-1} + g^i (H^i - H~^{i-1})           residual gating (Eq. 4); H~^0 = H^0

and the encoder's output is ``H~^depth``. Choices where the paper leaves room:

- **Eq. 4 as an interpolation.** The paper writes ``H~^i = H^{i-1} + G(H^i)``;
  adding a whole layer output to its input would double the scale of the states
  the next (pre-trained, LayerNorm-ed) layer expects at every step. Gating the
  step's *update* keeps them at scale: ``g = 0`` stops (the states pass on
  unchanged, so a gate at 0 after step 1 gives exactly the depth-1 output) and
  ``g = 1`` is plain stacking. The gate's last bias starts at 0, so every gate
  starts undecided at 0.5.
- **Weights over the activated modules sum to one** (top-k, renormalised), so
  the output stays a convex mix of module outputs. While the modules are still
  identical copies the mix does not depend on the weights and the task loss
  gives the router no gradient: the modules must first differ, which is what
  skill pre-training (below) does.
- **Shared modules** (the default, the paper's better variant): one module per
  skill for every step, with a step-specific Houlsby adapter after each FFN
  (``z + up(gelu(down(z)))``, between the FFN's output projection and the
  residual LayerNorm; ``up`` starts at zero, so an adapter starts as the
  identity). **Private modules**: a module per skill and step, no adapters.
- The router's Transformer layer starts as a copy of the same top layer; the
  router decides per problem from that layer's ``[CLS]`` state (instance-level
  routing, unlike MoE's token routing).

**Skill routing loss** (Section 3.3): in reasoning pre-training an instance of
skill ``s`` should activate ``{s, general}``. With ``A`` those skills, the loss
is the cross-entropy of the router against the uniform distribution over ``A``,

    L_r = mean over steps i and problems b of  -(1/|A_b|) sum_{j in A_b} log S^i_j(b)

(``skill_routing_loss``), which is smallest when the weight is split evenly
over ``A``, making ``A`` the top-2. Problems with no target skill are left out.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint

from mathgraph.models.comus import additive_attention_mask
from mathgraph.models.moe import host_sizes

GENERAL_SKILL = "general"
# A skill and the pre-training objective or task that teaches it (tasks.training.reasoning_pretraining). DTC has no
# skill: its loss is on the graph encoder's node states, computed in the representation module below the
# reasoning modules, so a "formula" module trained by DTC would never receive a gradient.
SKILL_SOURCES = {"language": "mlm", "alignment": "tgcl", "knowledge": "kpc", "relation": "qrc"}
SKILLS = (GENERAL_SKILL, *SKILL_SOURCES)
MODULE_SHARING = ("shared", "private")
# The name of the submodules that start as copies of pre-trained layers (tasks.training.trainer trains them at the
# pre-trained learning rate; the step adapters inside them declare themselves fresh: FRESH_PARAMETERS).
PRETRAINED_LAYERS_NAME = "pretrained_layers"


@dataclass
class ReasoningConfig:
    """How the reasoning modules are laid out.

    ``skills``: one reasoning module per skill (``SKILLS`` by default; ``general``
    is the always-on module every pre-training instance activates); ``layers``:
    Transformer layers per module, the text encoder's top ``layers``; ``depth``:
    maximum reasoning steps; ``top_k``: modules activated per step (0 = all);
    ``sharing``: ``shared`` (one module per skill for all steps, step adapters)
    or ``private`` (one per skill and step); ``adapter_dim``: the adapters' bottleneck;
    ``checkpointing``: in training, keep only each module call's inputs and run it again in the backward
    pass (``torch.utils.checkpoint``; the same numbers, dropout included, for about a third more time):
    the modules' activations are most of a ReasonFormer step's memory.
    """

    skills: tuple[str, ...] = SKILLS
    layers: int = 1
    depth: int = 3
    top_k: int = 2
    sharing: str = "shared"
    adapter_dim: int = 64
    checkpointing: bool = False

    def __post_init__(self) -> None:
        self.skills = tuple(self.skills)
        if len(self.skills) < 1 or len(set(self.skills)) != len(self.skills):
            raise ValueError(f"need one or more distinct skills, got {list(self.skills)}")
        if self.layers < 1 or self.depth < 1 or self.adapter_dim < 1:
            raise ValueError(
                f"layers, depth and adapter_dim must be >= 1, got {self.layers}, {self.depth}, {self.adapter_dim}"
            )
        if not 0 <= self.top_k <= len(self.skills):
            raise ValueError(f"top_k must be in 0..{len(self.skills)} (0 = all skills), got {self.top_k}")
        if self.sharing not in MODULE_SHARING:
            raise ValueError(f"unknown module sharing {self.sharing!r}; choose one of {MODULE_SHARING}")

    @property
    def active(self) -> int:
        """Modules activated per step."""
        return self.top_k or len(self.skills)


@dataclass
class ReasoningTrace:
    """What the reasoning modules did in their last forward, per step ``i`` and problem ``b``.

    ``probabilities[i]: [B, n]`` router probabilities over all skills (with gradient: the skill routing
    loss is computed from them); ``chosen[i]: [B, k]`` activated skills; ``weights[i]: [B, k]`` their
    weights (summing to one); ``stop_gates[i]: [B]`` the stop gate's value after step ``i``.
    """

    probabilities: list[torch.Tensor] = field(default_factory=list)
    chosen: list[torch.Tensor] = field(default_factory=list)
    weights: list[torch.Tensor] = field(default_factory=list)
    stop_gates: list[torch.Tensor] = field(default_factory=list)


class StepAdapter(nn.Module):
    """Houlsby adapter ``z + up(gelu(down(z)))``; ``up`` starts at zero, so the adapter starts as the identity."""

    def __init__(self, hidden: int, bottleneck: int):
        super().__init__()
        self.down, self.up = nn.Linear(hidden, bottleneck), nn.Linear(bottleneck, hidden)
        nn.init.normal_(self.down.weight, std=0.02)
        nn.init.zeros_(self.down.bias)
        nn.init.zeros_(self.up.weight)
        nn.init.zeros_(self.up.bias)

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        return states + self.up(F.gelu(self.down(states)))


class AdaptedOutput(nn.Module):
    """A BERT layer's FFN output block, ``LayerNorm(dropout(dense(x)) + h)``, with the adapter of the current
    step after the FFN: ``LayerNorm(adapter_step(dropout(dense(x))) + h)``. Keeps the original ``dense``,
    ``dropout`` and ``LayerNorm`` modules, so a shared module's steps share them; ``step`` picks the adapter."""

    # the step adapters start fresh inside copied pre-trained layers (tasks.training.trainer.parameter_groups)
    FRESH_PARAMETERS = ("adapters",)

    def __init__(self, output: nn.Module, depth: int, bottleneck: int):
        super().__init__()
        self.dense, self.dropout, self.LayerNorm = output.dense, output.dropout, output.LayerNorm
        hidden = output.dense.out_features
        self.adapters = nn.ModuleList(StepAdapter(hidden, bottleneck) for _ in range(depth))
        self.step = 0

    def forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        update = self.adapters[self.step](self.dropout(self.dense(hidden_states)))
        return self.LayerNorm(update + input_tensor)


class ReasoningModule(nn.Module):
    """One skill's module: copies of the text encoder's top layers (with step adapters when shared)."""

    def __init__(self, layers: Sequence[nn.Module], depth: int | None, bottleneck: int):
        super().__init__()
        copies = [copy.deepcopy(layer) for layer in layers]
        if depth is not None:  # shared across steps: the step adapters after each FFN
            for layer in copies:
                layer.output = AdaptedOutput(layer.output, depth, bottleneck)
        setattr(self, PRETRAINED_LAYERS_NAME, nn.ModuleList(copies))

    @property
    def layers(self) -> nn.ModuleList:
        """The module's Transformer layers, in order."""
        return getattr(self, PRETRAINED_LAYERS_NAME)

    def forward(self, states: torch.Tensor, additive_mask: torch.Tensor, step: int) -> torch.Tensor:
        for layer in self.layers:
            if isinstance(layer.output, AdaptedOutput):
                layer.output.step = step
            output = layer(states, attention_mask=additive_mask)
            states = output[0] if isinstance(output, tuple) else output  # transformers 4.x: a tuple
        return states


class SkillRouter(nn.Module):
    """Eq. 3: a Transformer layer (a copy of ``layer``), then an FFN and a softmax over the skills, read at
    ``[CLS]``: one distribution per problem."""

    def __init__(self, layer: nn.Module, hidden: int, skills: int):
        super().__init__()
        setattr(self, PRETRAINED_LAYERS_NAME, copy.deepcopy(layer))
        self.scores = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, skills))

    def forward(self, states: torch.Tensor, additive_mask: torch.Tensor) -> torch.Tensor:
        cls = cls_through_layer(getattr(self, PRETRAINED_LAYERS_NAME), states, additive_mask)
        return self.scores(cls).float().softmax(-1)


def cls_through_layer(layer: nn.Module, states: torch.Tensor, additive_mask: torch.Tensor) -> torch.Tensor:
    """``layer(states)[:, 0]`` for a BERT layer, ``[B, d]``, computing the ``[CLS]`` position only.

    A position's output depends on its own query alone (keys and values come from every position), so
    the router, which reads ``[CLS]``, needs one query row, one attention row and one FFN row per
    problem instead of ``L``: at the lengths here that is most of a layer's time and, in training, of
    the activations it keeps for the backward pass.
    """
    attention = layer.attention.self
    batch, length, hidden = states.shape
    heads, size = attention.num_attention_heads, attention.attention_head_size
    split = lambda x: x.view(batch, -1, heads, size).transpose(1, 2)  # noqa: E731
    query = split(attention.query(states[:, :1]))
    context = F.scaled_dot_product_attention(
        query,
        split(attention.key(states)),
        split(attention.value(states)),
        attn_mask=additive_mask.to(query.dtype),
        dropout_p=attention.dropout.p if attention.training else 0.0,
    )
    attended = layer.attention.output(context.transpose(1, 2).reshape(batch, 1, hidden), states[:, :1])
    return layer.output(layer.intermediate(attended), attended)[:, 0]


class StopGate(nn.Module):
    """``g = sigmoid(FFN(H[CLS]))``, one value in (0, 1) per problem; starts at 0.5 (last bias 0)."""

    def __init__(self, hidden: int):
        super().__init__()
        self.ffn = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, 1))
        nn.init.zeros_(self.ffn[-1].bias)

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.ffn(states[:, 0]).float())[:, 0]


class ReasoningModules(nn.Module):
    """Skill routers, reasoning modules and stop gates over the representation module's token states.

    Build with ``ReasoningModules.take_top_layers(text_encoder, config)``, which moves the text encoder's
    top ``config.layers`` layers out of it (the representation module keeps the rest).
    """

    def __init__(self, top_layers: Sequence[nn.Module], hidden: int, config: ReasoningConfig):
        super().__init__()
        self.config = config
        n, depth = len(config.skills), config.depth
        if config.sharing == "shared":
            self.skill_modules = nn.ModuleList(ReasoningModule(top_layers, depth, config.adapter_dim) for _ in range(n))
        else:
            self.skill_modules = nn.ModuleList(
                ReasoningModule(top_layers, None, config.adapter_dim) for _ in range(depth * n)
            )
        self.routers = nn.ModuleList(SkillRouter(top_layers[-1], hidden, n) for _ in range(depth))
        self.stop_gates = nn.ModuleList(StopGate(hidden) for _ in range(depth))
        self.forced_stop: dict[int, float] = {}  # step -> gate value, to study depth (see ``force_stop_gate``)
        self.last_trace = ReasoningTrace()

    @classmethod
    def take_top_layers(cls, text_encoder: nn.Module, config: ReasoningConfig, keep: int = 0) -> ReasoningModules:
        """Reasoning modules copied from the top ``config.layers`` layers of a Hugging Face BERT-style
        ``text_encoder``, which are removed from it; ``keep``: layers the representation module needs at
        least (COMUS's fusion layers)."""
        layers = text_encoder.encoder.layer
        if len(layers) - config.layers < max(keep, 1):
            raise ValueError(
                f"the text encoder has {len(layers)} layers: {config.layers} for the reasoning "
                f"modules leave {len(layers) - config.layers}, fewer than the "
                f"{max(keep, 1)} the representation module needs"
            )
        top = list(layers[len(layers) - config.layers :])
        text_encoder.encoder.layer = nn.ModuleList(layers[: len(layers) - config.layers])
        return cls(top, text_encoder.config.hidden_size, config)

    def module(self, step: int, skill: int) -> ReasoningModule:
        """The module of ``skill`` at reasoning step ``step`` (the same one at every step when shared)."""
        n = len(self.config.skills)
        return self.skill_modules[skill if self.config.sharing == "shared" else step * n + skill]

    def forward(self, states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """``[B, L, d]`` token states of the representation module -> ``[B, L, d]`` after reasoning; the
        routing is kept in ``last_trace``."""
        additive_mask = additive_attention_mask(attention_mask, states)
        trace = ReasoningTrace()
        for step in range(self.config.depth):
            probabilities = self.routers[step](states, additive_mask)
            top = probabilities.topk(self.config.active, dim=-1)
            weights = top.values / top.values.sum(-1, keepdim=True)
            update = self._mix(states, additive_mask, step, top.indices, weights)
            gate = self.stop_gates[step](update)
            if step in self.forced_stop:
                gate = torch.full_like(gate, self.forced_stop[step])
            states = states + gate[:, None, None].to(states.dtype) * (update - states)
            trace.probabilities.append(probabilities)
            trace.chosen.append(top.indices)
            trace.weights.append(weights)
            trace.stop_gates.append(gate)
        self.last_trace = trace
        return states

    def _mix(self, states, additive_mask, step, chosen, weights) -> torch.Tensor:
        """Eq. 2: each problem's activated modules, weighted; a module runs only on the problems that chose it."""
        num_skills, batch = len(self.config.skills), states.shape[0]
        picked = torch.zeros(batch, num_skills, dtype=weights.dtype, device=weights.device).scatter_(
            1, chosen, weights
        )  # [B, n]: each problem's weight for each module, 0 where not chosen
        chose = (picked > 0).T.reshape(-1)  # [n B], module-major
        # One host sync per step, for the number of problems of each module; the (module, problem) pairs are
        # then found by a stable sort, not by a nonzero per module.
        counts = host_sizes((picked > 0).sum(0), total=chosen.numel())
        pairs = torch.argsort((~chose).to(torch.uint8), stable=True)[: sum(counts)].split(counts)
        mixed = torch.zeros_like(states)
        for skill, pair in enumerate(pairs):
            if not counts[skill]:
                continue
            rows = pair - skill * batch
            weight = picked[rows, skill].to(states.dtype)
            module = self.module(step, skill)
            if self.config.checkpointing and torch.is_grad_enabled():
                output = checkpoint(module, states[rows], additive_mask[rows], step, use_reentrant=False)
            else:
                output = module(states[rows], additive_mask[rows], step)
            mixed = mixed.index_add(0, rows, weight[:, None, None] * output)
        return mixed

    def force_stop_gate(self, step: int, value: float | None) -> None:
        """Fix the stop gate after ``step`` (0-based) at ``value`` for every problem (``None``: learned again)."""
        if value is None:
            self.forced_stop.pop(step, None)
        else:
            self.forced_stop[step] = float(value)

    def skill_targets(self, skills: Sequence[str | None]) -> torch.Tensor:
        """``[B, n]`` multi-hot routing targets: each problem's skill and ``general`` (when the model has it);
        ``None`` gives an empty row (no routing loss for that problem)."""
        names = self.config.skills
        targets = torch.zeros(len(skills), len(names))
        for row, skill in enumerate(skills):
            if skill is None:
                continue
            if skill not in names:
                raise ValueError(f"unknown skill {skill!r}; this model has {list(names)}")
            targets[row, names.index(skill)] = 1.0
            if GENERAL_SKILL in names:
                targets[row, names.index(GENERAL_SKILL)] = 1.0
        return targets


def skill_routing_loss(probabilities: Sequence[torch.Tensor], targets: torch.Tensor) -> torch.Tensor:
    """The skill routing loss ``L_r`` (module docstring) of the routers' ``probabilities`` (one ``[B, n]`` per
    step) against multi-hot ``targets: [B, n]``; problems whose row of ``targets`` is empty are left out."""
    targets = targets.to(probabilities[0].device, torch.float32)
    counts = targets.sum(-1)
    # Unlabelled rows are weighted out, not selected away (no host sync); with none labelled the loss is 0.
    labelled = (counts > 0).float()
    target = targets / counts.clamp(min=1)[:, None]
    losses = [
        (-(target * p.clamp_min(1e-9).log()).sum(-1) * labelled).sum() / labelled.sum().clamp(min=1)
        for p in probabilities
    ]
    return torch.stack(losses).mean()


__all__ = [
    "ReasoningConfig",
    "ReasoningModules",
    "ReasoningModule",
    "ReasoningTrace",
    "SkillRouter",
    "StopGate",
    "StepAdapter",
    "AdaptedOutput",
    "skill_routing_loss",
    "SKILLS",
    "SKILL_SOURCES",
    "GENERAL_SKILL",
    "MODULE_SHARING",
]
