"""Every script in ``benchmarks/`` runs in its smoke mode (``--smoke``: the same code on a few problems,
tiny models where it trains; ``benchmarks/smoke.py``), so that a change that breaks a benchmark fails
here and not months later. Each run must exit cleanly, print the lines of its table checked below, and
write nothing into the repository (committed results, the packaged data, the shipped model)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TMP = "{tmp}"  # replaced by the test's temporary directory
# script -> (arguments after --smoke, lines its output must hold); the ones that load the packaged models
# or train are marked slow (still run in CI)
SCRIPTS = {
    "alignment_scaling": (
        [],
        ["| characters | sentences | quantities a / b |", "| 1041 | 47 | 47 / 48 |", "`_strip_latex`"],
    ),
    "bank_search": (
        ["--work", TMP],
        [
            "## GSM8K bank, GSM-Plus dev seeds",
            "## MATH bank, hand-written rewrites",
            "| tfidf | all | 6 |",
            "| default | all | 4 |",
        ],
    ),
    "cli_startup": (["--work", TMP], ["| mathgraph search, 1 query |", "3 queries / 1 query:"]),
    "dedupe_fresh": (
        ["--work", TMP, "--split", "test", "--end-to-end"],
        ["## Dedupe on fresh GSM8K families: test (2 families)", "| --strict |", "gives the same groups: True"],
    ),
    "dedupe_templates": (
        ["--work", TMP, "--split", "dev"],
        ["## Dedupe on template variants: dev (2 seeds)", "| renamed ~ seed |", "their numbers, grouped with another"],
    ),
    "dedupe_quality": (
        ["--work", TMP],
        ["### Dev: the grid", "| precision | ", "| recall | ", "| paraphrase | ", "same groups as the grid's: True"],
    ),
    "encode_benchmark": (
        [],
        [
            "| COMUS k=2 |",
            "| **total COMUS k=2** |",
            "| MiniLM alone |",
            "## GSM-Plus sanity figure (shipped model): 3 seeds, 24 variants",
        ],
    ),
    "gpu_kit": (
        ["--work", TMP],
        ["| comus | 1763 | 1908.5 | 9.23 | 206.8x |", "| COMUS minus DAPT-BERT (GPU), paired |"],
    ),
    "gpu_kpc_ensemble": (
        ["--work", TMP],
        [
            "| ensemble of 6 | 0.7973 [0.7671-0.8246] | 0.8013 [0.7713-0.8283] |",
            "| ensemble of 6 + TF-IDF, late fusion (w = 0.7 on dev) | 0.8107 [0.7811-0.8371] | 0.8147 [0.7853-0.8408] |",
        ],
    ),
    "host_syncs": ([], ["| trainer loop (comus) |", "| multitask reasonformer |"]),
    "index_scale": (
        ["--work", TMP],
        ["| flat | ", "| ivf-flat | ", "| ivf-pq | ", "| hnsw | ", "Target recall@10 >= 0.95 at p50 <= 10 ms met by:"],
    ),
    "kpc_study": (
        ["--work", TMP],
        [
            "| dapt-bert |",
            "| comus-pt@seed1 |",
            "| tfidf@40% |",
            "| comus@step1 |",
            "Headline (test):",
            "- comus-pt minus comus-pt-no-memory: ",
        ],
    ),
    "latex_coverage": ([], ["| ours (`parsers.latex`) | 40 |", "| SymPy `parse_latex`"]),
    "make_kpc_sample": (["--output", f"{TMP}/kpc_sample.jsonl"], ["wrote 21 rows to", "{'train': 14, 'dev': 7}"]),
    "moe_step_time": ([], ["| MoE all |", "tokens per expert in the last step"]),
    "multitask_results": (["--work", TMP], ["| single |", "| moe+prompts |", "| cgc-lora |"]),
    "parse_throughput": ([], ["| 1 | 32 |", "| 2 | 32 |"]),
    "pooling_probe": (["--data", TMP], ['"kpc": {', '"qrc": {', '"cls": ']),
    "process_errors": (
        ["--data", "benchmarks/data/smoke", "--rules-only"],
        ["## math, rules:", "| half | n wrong | n right | error acc | correct acc | F1 |"],
    ),
    "qam_number_swap_cv": (
        ["--work", TMP],
        ["| structure+steps+tfidf |", "### Accuracy per perturbation type", "written:"],
    ),
    "quantity_drift": ([], ["| problems | read the same | read differently | seconds |", "| 12 | "]),
    "quantity_extraction": ([], ["3 problems from", "| all |"]),
    "reasoning_step_time": (["--work", TMP], ["| dense |", "| ReasonFormer shared, top-2, checkpointing |"]),
    "release_model": (
        ["--work", TMP],
        ['search {"dev": {"TF-IDF"', "qam head refit: dev accuracy", 'search {"dev": {"structure"', "sample {"],
    ),
    "results": (["--work", TMP], ["### KPC test", "### SQR test", "| comus |", "| tfidf |"]),
    "scale": (
        ["--work", TMP],
        [
            "| parse | local, 1 process | 24 |",
            "| encode | local, 1 process | 8 |",
            "| index build | local, 1 process | 8 |",
            "| encode | 40 |",
            "| predict kpc | 40 |",
            "| parse | 6 | 1 |",
            "| encode | 6 | 1 |",
        ],
    ),
    "runtime": (
        ["--work", TMP],
        [
            "| encode | onnx |",
            "| predict kpc | onnx-int8 |",
            "| text layers at that rate, problems/s |",
            "| kpc | onnx |",
            "predict kpc TEXT (onnx) / import torch:",
        ],
    ),
    "search_and_refine": (
        ["--work", TMP],
        ["| SimCSE encoder (2 steps, joint) |", "| problems | draft accuracy | final accuracy |"],
    ),
    "serve_load": (
        ["--work", TMP],
        [
            "| search k=5 | 2 | 3 |",
            "| compare | 2 | 3 |",
            "one search query: server",
            "| small compare | 4 maximal compares | 3 |",
            "| small predict kpc | idle | 3 |",
        ],
    ),
    "shipped_model": ([], ["| **total** |", "| multi-task model + TF-IDF (ModelPackage) |"]),
    "skill_routes_by_task": (["--work", TMP], ["sqr {", "skills_by_task.png"]),
    "solution_errors": ([], ["| annotated: miscopied number | 3 |", "| plain | 4 |", "checking / parsing:"]),
    "solution_graph": ([], ["6 solutions from", "| gsm8k | 12 | 12 / 12 |", "| math | 3 |"]),
    "step_scorer": (
        ["--data", "benchmarks/data/smoke", "--work", TMP],
        [
            "prepared 8 solutions, 14 lines read (6 first wrong)",
            "| verifier + neural | math | 3 | 1 |",
            "paired bootstrap 95%:",
        ],
    ),
    "step_verifier_transfer": (
        ["--work", TMP],
        ["## math test half: 4 solutions", "| chosen |", "F1 chosen - shipped, paired bootstrap 95%:"],
    ),
    "structure_results": (["--work", TMP], ["### QRC test (accuracy)", "### SQR test (ndcg@3)", "align a pair:"]),
    "tfidf_baselines": ([], ["| QAM |", "## SQR: TF-IDF cosine ranking"]),
    "train_throughput": ([], ["| comus-freeze4 |", "ratio comus/bert-only:"]),
}
FAST = {
    "gpu_kit",
    "gpu_kpc_ensemble",
    "alignment_scaling",
    "latex_coverage",
    "make_kpc_sample",
    "parse_throughput",
    "quantity_drift",
    "quantity_extraction",
    "solution_errors",
    "solution_graph",
    "tfidf_baselines",
}
# what a smoke run must leave alone (a full run writes some of it on purpose)
GUARDED = ("benchmarks/results", "benchmarks/data", "mathgraph/data")


def test_every_benchmark_has_a_smoke_test():
    # smoke.py and bank_search_templates.py are modules the scripts import, not scripts (the templates have their
    # own tests in tests/benchmarks/test_bank_search_templates.py)
    scripts = {path.stem for path in (REPO / "benchmarks").glob("*.py")} - {"smoke", "bank_search_templates"}
    assert scripts <= set(SCRIPTS), f"give these a --smoke run in SCRIPTS: {sorted(scripts - set(SCRIPTS))}"
    assert set(SCRIPTS) <= scripts, f"no such scripts: {sorted(set(SCRIPTS) - scripts)}"


@pytest.mark.parametrize(
    "script", [name if name in FAST else pytest.param(name, marks=pytest.mark.slow) for name in sorted(SCRIPTS)]
)
def test_smoke_run(script, tmp_path):
    arguments, expected = SCRIPTS[script]
    before = _snapshot()
    # the scripts call the `mathgraph` command: the one next to this interpreter, activated or not
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(
        [sys.executable, f"benchmarks/{script}.py", "--smoke", *(a.replace(TMP, str(tmp_path)) for a in arguments)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=_one_core,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    for line in expected:
        assert line in result.stdout, f"{line!r} not in the output of {script}:\n{result.stdout[-4000:]}"
    assert _snapshot() == before, "the smoke run wrote into the repository"


def _one_core() -> None:
    """Run the script on one core, so torch uses one thread (``tasks.training.trainer.available_cores``): the tiny
    smoke models gain nothing from a second, and where other jobs load the CPU, a second thread waiting on
    a busy core made these runs 3 to 4 times slower (release_model: 76 s on 2 cores, 18 s on 1)."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def _snapshot() -> dict:
    """Size and modification time of every file under ``GUARDED``, and the names at the repository's top."""
    files = {
        str(p): (p.stat().st_size, p.stat().st_mtime_ns) for d in GUARDED for p in (REPO / d).rglob("*") if p.is_file()
    }
    return {"files": files, "top": sorted(p.name for p in REPO.iterdir())}
