"""The README's Python examples run as written, and every relative link of README.md and docs/*.md resolves.

The ```python blocks of README.md run in order in one namespace, in a temporary working directory (so
``graph.png`` and the like land there). The blocks that load no model run in every test run; all of them
together, the shipped model's included, are marked ``slow``.
"""

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]

# What a block does that needs the shipped model (or another trained one) loaded.
MODEL_USE = re.compile(r"from_pretrained|mathgraph\.load\(|\bload\(|Predictor|SearchIndex|MathEncoder")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def python_blocks(path: Path = README) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.S | re.M)


def _run(blocks: list[str], directory: Path) -> None:
    namespace: dict = {"__name__": "__readme__"}
    cwd = os.getcwd()
    os.chdir(directory)
    try:
        for i, block in enumerate(blocks):
            exec(compile(block, f"README.md python block {i}", "exec"), namespace)
    finally:
        os.chdir(cwd)


def test_the_readme_has_python_examples():
    blocks = python_blocks()
    assert blocks, "README.md has no ```python block"
    assert any(not MODEL_USE.search(block) for block in blocks), "no README example runs without a model"


def test_readme_examples_without_a_model(tmp_path):
    _run([block for block in python_blocks() if not MODEL_USE.search(block)], tmp_path)
    assert (tmp_path / "graph.png").is_file()


@pytest.mark.slow
def test_readme_examples(tmp_path):
    _run(python_blocks(), tmp_path)


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of a Markdown file (lower case, punctuation dropped, spaces -> -)."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", text, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def _relative_links(path: Path) -> list[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    return [target for target in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", target)]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_relative_links_resolve(page):
    broken = []
    for target in _relative_links(page):
        file, _, anchor = target.partition("#")
        resolved = (page.parent / file).resolve() if file else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, f"{page.relative_to(REPO)}: " + "; ".join(broken)


def test_docs_pages_are_linked_from_the_readme():
    linked = {Path(target.partition("#")[0]).name for target in _relative_links(README)}
    missing = [page.name for page in PAGES[1:] if page.name not in linked]
    assert not missing, f"README.md's 'Where to read more' does not list {missing}"
