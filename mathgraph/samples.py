"""Real sample problems shipped with the package (MATH, GSM8K, GSM-Plus; see data/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

SAMPLE_PATH = Path(__file__).parent / "data" / "sample_problems.jsonl"


def sample_problems() -> list[dict]:
    """The bundled sample problems as dicts with ``id``, ``source``, ``problem`` and more."""
    with open(SAMPLE_PATH, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
