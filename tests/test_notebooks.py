"""Every notebook runs top to bottom, so none of them rots."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path):
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    errors = [o for cell in notebook.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    images = [o for cell in notebook.cells for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
    assert images, "the notebook should draw at least one graph"


def _store_outputs():
    """``notebooks/store_outputs.py``, the script that runs the notebooks and stores their outputs cleaned."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "notebooks" / "store_outputs.py"
    spec = importlib.util.spec_from_file_location("store_outputs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_stored_outputs_are_clean_and_complete(path):
    # every code cell ran, and a reader sees no local path (the developer's clone, virtual environment or
    # temporary folders), no progress bar, no ANSI codes: `python notebooks/store_outputs.py` stores them so
    store_outputs = _store_outputs()
    assert store_outputs.problems(nbformat.read(path, as_version=4)) == []


def test_the_checks_of_stored_outputs_catch_paths_and_progress_bars():
    store_outputs = _store_outputs()
    cell = nbformat.v4.new_code_cell("x", execution_count=1)
    cell.outputs = [
        nbformat.v4.new_output(
            "stream", name="stderr", text="\rLoading weights:  50%|█████     | 1/2 [00:00<?, ?it/s]"
        ),
        nbformat.v4.new_output("stream", name="stdout", text="loaded /work/main/.venv/x.gguf\n"),
    ]
    notebook = nbformat.v4.new_notebook(cells=[cell, nbformat.v4.new_code_cell("y")])
    found = store_outputs.problems(notebook)
    assert any("local path" in p for p in found) and any("progress bar" in p for p in found)
    assert any("has not run" in p for p in found)
    cleaned = store_outputs.clean_outputs(cell.outputs)
    assert [o["name"] for o in cleaned] == ["stdout"]
