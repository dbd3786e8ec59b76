"""Run notebooks top to bottom and store them with clean, complete outputs.

    python notebooks/store_outputs.py                      # every notebook here
    python notebooks/store_outputs.py notebooks/04_experts.ipynb

Each notebook runs in a fresh kernel in an empty temporary folder (as ``tests/test_notebooks.py`` runs it).
Stored outputs keep what a reader should see and drop what only this run's machine printed: progress bars
(tqdm writes them to stderr, one stream output per redraw), tqdm's "IProgress not found" notice (a kernel
without ipywidgets), ANSI colour codes, and execution timings. Consecutive stream outputs are merged. A
notebook whose outputs still show a local path (a home, a virtual environment, a temporary folder) is not
written: fix the cell that prints it. ``tests/test_notebooks.py`` checks the stored outputs.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PROGRESS_BAR = re.compile(r"\d+%\|.*\||it/s\]")
# tqdm.auto in a kernel without ipywidgets; the warning shows the path of tqdm's installed file
TQDM_NOTICE = re.compile(r"TqdmWarning: IProgress not found|from \.autonotebook import tqdm")
LOCAL_PATH = re.compile(r"/work/|/root/|/home/[^/\s]+/|/Users/[^/\s]+/|/tmp/|site-packages|\.venv/")


def is_noise(output: dict) -> bool:
    """A stderr stream output that is a progress bar's redraw or tqdm's notice on a missing ipywidgets."""
    if output.get("output_type") != "stream" or output.get("name") != "stderr":
        return False
    text = ANSI.sub("", output.get("text", ""))
    if TQDM_NOTICE.search(text):
        return True
    return "\r" in text or bool(PROGRESS_BAR.search(text)) or not text.strip()


def clean_outputs(outputs: list) -> list:
    """``outputs`` without noise (``is_noise``) or ANSI codes, consecutive streams of one name merged."""
    kept: list = []
    for output in outputs:
        if is_noise(output):
            continue
        if output.get("output_type") == "stream":
            output["text"] = ANSI.sub("", output["text"])
            if kept and kept[-1].get("output_type") == "stream" and kept[-1].get("name") == output.get("name"):
                kept[-1]["text"] += output["text"]
                continue
        elif output.get("output_type") == "error":
            output["traceback"] = [ANSI.sub("", line) for line in output.get("traceback", [])]
        kept.append(output)
    return kept


def output_text(output: dict) -> str:
    """The text a reader sees of one output (streams, plain-text and HTML results, errors)."""
    if output.get("output_type") == "stream":
        return output.get("text", "")
    if output.get("output_type") == "error":
        return "\n".join(output.get("traceback", []))
    data = output.get("data", {})
    return "\n".join(str(data.get(kind, "")) for kind in ("text/plain", "text/html", "text/markdown"))


def problems(notebook) -> list[str]:
    """What is wrong with a notebook's stored outputs: a code cell that did not run, an error, a local path,
    a progress bar or ANSI codes; empty when clean and complete."""
    found = []
    for number, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("execution_count") is None:
            found.append(f"cell {number} has not run")
        for output in cell.get("outputs", []):
            text = output_text(output)
            if output.get("output_type") == "error":
                found.append(f"cell {number} stops with {output.get('ename')}: {output.get('evalue')}")
            if match := LOCAL_PATH.search(text):
                found.append(f"cell {number} shows a local path ({match.group(0)!r} in {text[:80]!r}...)")
            if ANSI.search(text):
                found.append(f"cell {number} has ANSI colour codes")
            if output.get("name") == "stderr" and is_noise(output):
                found.append(f"cell {number} has a progress bar or tqdm notice on stderr")
    return found


def store(path: Path, timeout: int = 1200) -> list[str]:
    """Run the notebook at ``path`` and write it back cleaned; returns its problems (not written if any)."""
    notebook = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="notebook-run-") as folder:
        client = NotebookClient(
            notebook,
            timeout=timeout,
            kernel_name="python3",
            record_timing=False,
            resources={"metadata": {"path": folder}},
        )
        client.execute()
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = clean_outputs(cell.outputs)
            cell.metadata.pop("execution", None)
    notebook.metadata.pop("widgets", None)
    found = problems(notebook)
    if not found:
        nbformat.write(notebook, path)
    return found


def main(argv: list[str]) -> int:
    paths = [Path(arg) for arg in argv] or sorted(NOTEBOOKS.glob("*.ipynb"))
    status = 0
    for path in paths:
        found = store(path)
        print(f"{path.name}: {'stored' if not found else 'NOT stored'}", file=sys.stderr)
        for problem in found:
            print(f"  {problem}", file=sys.stderr)
        status = status or int(bool(found))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
