"""The code stays linted and formatted: ``ruff check`` and ``ruff format --check`` with the settings in
``pyproject.toml`` (run ``ruff format . && ruff check --fix .`` to fix)."""

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _ruff() -> str:
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is not installed: pip install -e '.[dev]'")
    return ruff


# --no-cache: no .ruff_cache appears in the repository while other tests (the benchmarks' smoke runs) check that
# nothing is written into it
@pytest.mark.parametrize(
    "command", [["check", "--no-cache", "."], ["format", "--check", "--no-cache", "."]], ids=["lint", "format"]
)
def test_ruff(command):
    done = subprocess.run([_ruff(), *command], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
