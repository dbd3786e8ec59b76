"""Pictures of which expert each token goes to, per MoE layer (JiuZhang 2.0, Table 6), as HTML or PNG.

    routes = MultiTaskModel.from_pretrained(DIR).token_routes("Find $x$ if $2x = 6$.", task="kpc")
    save_routes(routes, "routes.html")   # or routes.png

The routes come from the model that owns them (``tasks.multitask.MultiTaskModel.token_routes``);
this module only draws them.
"""

from __future__ import annotations

import html
from pathlib import Path

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tasks.multitask import TokenRoutes

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
    legend = " ".join(f'<span style="background:{EXPERT_COLOURS[e % len(EXPERT_COLOURS)]};padding:2px 6px">'
                      f"expert {e}</span>" for e in experts_used)
    return (f"<!doctype html><meta charset=utf-8><title>expert routes</title><body style='font-family:monospace'>"
            f"<p>task <b>{html.escape(routes.task)}</b>: {html.escape(routes.text)}</p><p>{legend}</p>"
            + "".join(rows) + "</body>")


def draw_routes(routes: TokenRoutes, max_tokens_per_line: int = 16):
    """A matplotlib figure: per MoE layer, the tokens in boxes coloured by expert."""
    import matplotlib.pyplot as plt
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
            axes.text((i % max_tokens_per_line) * 1.0, y, token.replace("$", r"\$"), va="center", fontsize=8,
                      bbox={"facecolor": EXPERT_COLOURS[expert % len(EXPERT_COLOURS)], "edgecolor": "none",
                            "boxstyle": "round,pad=0.2"})
        y -= 1.2
    axes.set_xlim(-0.5, max_tokens_per_line)
    axes.set_ylim(y, 1)
    experts = sorted({e for layer in routes.experts for e in layer})
    axes.legend(handles=[Patch(color=EXPERT_COLOURS[e % len(EXPERT_COLOURS)], label=f"expert {e}") for e in experts],
                loc="upper right", fontsize=8, ncol=len(experts))
    axes.set_title(f"expert per token ({routes.task})", fontsize=10)
    return figure


def save_routes(routes: TokenRoutes, path: str | Path) -> Path:
    """Write ``routes`` as ``.html`` or ``.png`` (by the file's suffix)."""
    path = Path(path)
    if path.suffix.lower() in (".html", ".htm"):
        path.write_text(routes_html(routes), encoding="utf-8")
    elif path.suffix.lower() == ".png":
        figure = draw_routes(routes)
        figure.savefig(path, dpi=120, bbox_inches="tight")
        import matplotlib.pyplot as plt

        plt.close(figure)
    else:
        raise ValueError(f"{path}: write routes to a .html or .png file")
    return path


__all__ = ["routes_html", "draw_routes", "save_routes", "EXPERT_COLOURS"]
