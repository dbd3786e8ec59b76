"""Pictures of a multi-task model's routing, as HTML or PNG.

- MoE: which expert each token goes to, per MoE layer (JiuZhang 2.0, Table 6);
- ReasonFormer: which skills fire at each reasoning step, and the stop gate after each step (the
  paper's modularity analysis), for one problem or the mean over several.

    model = MultiTaskModel.from_pretrained(DIR)
    save_routes(model.token_routes("Find $x$ if $2x = 6$.", task="kpc"), "routes.html")   # or .png
    save_routes(model.skill_routes(["Find $x$ if $2x = 6$."], task="kpc"), "skills.png")

The routes come from the model that owns them (``models.multitask.MultiTaskModel.token_routes`` and
``skill_routes``); this module only draws them.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

from mathgraph.draw import require_matplotlib

if TYPE_CHECKING:
    from mathgraph.models.multitask import SkillRoutes, TokenRoutes

# Colour-blind-safe palette (Okabe-Ito), cycled when there are more experts.
EXPERT_COLOURS = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#999999")


def routes_html(routes: TokenRoutes) -> str:
    """A standalone HTML page: one line of tokens per MoE layer, each token on its expert's colour."""
    rows = []
    for layer, experts, probs in zip(routes.layers, routes.experts, routes.probabilities):
        spans = "".join(
            f'<span title="expert {e}, p={p:.2f}" style="background:{EXPERT_COLOURS[e % len(EXPERT_COLOURS)]};'
            f'padding:2px 3px;margin:1px;border-radius:3px;display:inline-block">{html.escape(token)}</span>'
            for token, e, p in zip(routes.tokens, experts, probs)
        )
        rows.append(f"<p><b>layer {layer}</b><br>{spans}</p>")
    experts_used = sorted({e for layer in routes.experts for e in layer})
    legend = " ".join(
        f'<span style="background:{EXPERT_COLOURS[e % len(EXPERT_COLOURS)]};padding:2px 6px">expert {e}</span>'
        for e in experts_used
    )
    return (
        f"<!doctype html><meta charset=utf-8><title>expert routes</title><body style='font-family:monospace'>"
        f"<p>task <b>{html.escape(routes.task)}</b>: {html.escape(routes.text)}</p><p>{legend}</p>"
        + "".join(rows)
        + "</body>"
    )


def draw_routes(routes: TokenRoutes, max_tokens_per_line: int = 16):
    """A matplotlib figure: per MoE layer, the tokens in boxes coloured by expert."""
    plt = require_matplotlib("drawing routes")
    from matplotlib.patches import Patch

    lines_per_layer = -(-len(routes.tokens) // max_tokens_per_line)
    height = 0.5 + 0.45 * len(routes.layers) * (lines_per_layer + 1)
    figure, axes = plt.subplots(figsize=(max_tokens_per_line * 0.9, height))
    axes.set_axis_off()
    y = 0.0
    for layer, experts in zip(routes.layers, routes.experts):
        axes.text(0, y, f"layer {layer}", fontweight="bold", va="center")
        y -= 1
        for i, (token, expert) in enumerate(zip(routes.tokens, experts)):
            if i and i % max_tokens_per_line == 0:
                y -= 1
            axes.text(
                (i % max_tokens_per_line) * 1.0,
                y,
                token.replace("$", r"\$"),
                va="center",
                fontsize=8,
                bbox={
                    "facecolor": EXPERT_COLOURS[expert % len(EXPERT_COLOURS)],
                    "edgecolor": "none",
                    "boxstyle": "round,pad=0.2",
                },
            )
        y -= 1.2
    axes.set_xlim(-0.5, max_tokens_per_line)
    axes.set_ylim(y, 1)
    experts = sorted({e for layer in routes.experts for e in layer})
    axes.legend(
        handles=[Patch(color=EXPERT_COLOURS[e % len(EXPERT_COLOURS)], label=f"expert {e}") for e in experts],
        loc="upper right",
        fontsize=8,
        ncol=len(experts),
    )
    axes.set_title(f"expert per token ({routes.task})", fontsize=10)
    return figure


def skill_routes_html(routes: SkillRoutes) -> str:
    """A standalone HTML page: a table of the mean weight of each skill at each step (darker = more), with
    the share of problems that activated it and the mean stop gate per step."""
    weights, rates, gates = routes.mean_weights(), routes.activation_rates(), routes.mean_stop_gates()
    header = "".join(f"<th>{html.escape(skill)}</th>" for skill in routes.skills)
    rows = []
    for step, (step_weights, step_rates) in enumerate(zip(weights, rates)):
        cells = "".join(
            f'<td title="activated for {r:.0%} of the problems" style="background:rgba(0,114,178,{w:.2f});'
            f'color:{"white" if w > 0.5 else "black"}">{w:.2f}</td>'
            for w, r in zip(step_weights, step_rates)
        )
        rows.append(f"<tr><th>step {step + 1}</th>{cells}<td>{gates[step]:.2f}</td></tr>")
    problems = html.escape(routes.texts[0]) if len(routes.texts) == 1 else f"mean over {len(routes.texts)} problems"
    return (
        f"<!doctype html><meta charset=utf-8><title>skill routes</title><body style='font-family:sans-serif'>"
        f"<p>task <b>{html.escape(routes.task)}</b>: {problems}</p>"
        f"<table style='border-collapse:collapse;text-align:center' cellpadding=6><tr><th></th>{header}"
        f"<th>stop gate</th></tr>{''.join(rows)}</table>"
        "<p>cells: router weight of the skill (0 where not activated); stop gate: how much of the step's "
        "update is kept (1 = all, 0 = reasoning stops)</p></body>"
    )


def draw_skill_routes(routes: SkillRoutes, axes=None):
    """A heat map of the mean weight of each skill (columns) at each reasoning step (rows), the mean stop
    gate written after each row; on ``axes`` if given (one panel of a bigger figure), else a new figure."""
    plt = require_matplotlib("drawing routes")

    weights, gates = routes.mean_weights(), routes.mean_stop_gates()
    figure = None
    if axes is None:
        figure, axes = plt.subplots(figsize=(1.1 * len(routes.skills) + 1.5, 0.6 * routes.depth + 1.2))
    axes.imshow(weights, cmap="Blues", vmin=0, vmax=1, aspect="auto")
    for step, row in enumerate(weights):
        for skill, weight in enumerate(row):
            axes.text(
                skill,
                step,
                f"{weight:.2f}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if weight > 0.5 else "black",
            )
        axes.text(len(row) - 0.4, step, f"stop {gates[step]:.2f}", va="center", fontsize=8)
    axes.set_xticks(range(len(routes.skills)), routes.skills, rotation=30, ha="right", fontsize=8)
    axes.set_yticks(range(routes.depth), [f"step {i + 1}" for i in range(routes.depth)], fontsize=8)
    axes.set_title(f"{routes.task} ({len(routes.texts)} problem{'s' if len(routes.texts) > 1 else ''})", fontsize=9)
    return figure if figure is not None else axes.figure


def save_routes(routes: TokenRoutes | SkillRoutes, path: str | Path) -> Path:
    """Write token routes (MoE) or skill routes (ReasonFormer) as ``.html`` or ``.png`` (by the suffix)."""
    path = Path(path)
    skills = hasattr(routes, "stop_gates")
    if path.suffix.lower() in (".html", ".htm"):
        path.write_text(skill_routes_html(routes) if skills else routes_html(routes), encoding="utf-8")
    elif path.suffix.lower() == ".png":
        figure = draw_skill_routes(routes) if skills else draw_routes(routes)
        figure.savefig(path, dpi=120, bbox_inches="tight")
        import matplotlib.pyplot as plt

        plt.close(figure)
    else:
        raise ValueError(f"{path}: write routes to a .html or .png file")
    return path


__all__ = ["routes_html", "draw_routes", "skill_routes_html", "draw_skill_routes", "save_routes", "EXPERT_COLOURS"]
