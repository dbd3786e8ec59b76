"""JiuZhang 2.0 iterative refinement with a fake LLM that records prompts, then one real run with SmolLM2."""

import hashlib
import json
import time
from pathlib import Path

import numpy as np
import pytest

from mathgraph.tasks.refine.refinement import (
    SOLVE_TEMPLATE,
    STAGES,
    RefineConfig,
    build_prompt,
    call_llm,
    refine_file,
    refine_solution,
)
from mathgraph.tasks.search.index import SearchIndex


class HashingEncoder:
    """Deterministic bag-of-words vectors (no model): texts that share words are close."""

    def encode(self, texts, batch_size=32):
        out = np.zeros((len(texts), 32), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, hashlib.sha256(word.encode()).digest()[0] % 32] += 1.0
        return out

    def identity(self):
        return {"kind": "test.HashingEncoder", "weights_sha256": "0", "mode": "bow", "dimension": 32}


class RecordingLLM:
    """Returns "refined <n>: ... The answer is <answer>" and keeps every prompt; fails when told to."""

    name = "recording"

    def __init__(self, answer="72", fail_times=0, fail_when=None):
        self.prompts, self.answer, self.fail_times, self.fail_when = [], answer, fail_times, fail_when

    def generate(self, prompt, max_new_tokens=256):
        self.prompts.append(prompt)
        if self.fail_times > 0:
            self.fail_times -= 1
            raise ConnectionError("server went away")
        if self.fail_when and self.fail_when in prompt:
            raise TimeoutError("too slow")
        return f"refined {len(self.prompts)}: so the total is {self.answer}. The answer is {self.answer}."


# Real GSM8K training problems and solutions.
CORPUS = [
    {
        "id": "g1",
        "problem": "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips "
        "in May. How many clips did Natalia sell altogether in April and May?",
        "solution": "Natalia sold 48/2 = 24 clips in May.\nNatalia sold 48+24 = 72 clips altogether.\n#### 72",
    },
    {
        "id": "g2",
        "problem": "Weng earns $12 an hour for babysitting. Yesterday, she just did 50 minutes of "
        "babysitting. How much did she earn?",
        "solution": "Weng earns 12/60 = $0.2 per minute.\nWorking 50 minutes, she earned 0.2 x 50 = $10.\n#### 10",
    },
    {
        "id": "g3",
        "problem": "Betty is saving money for a new wallet which costs $100. Betty has only half of the "
        "money she needs. Her parents decided to give her $15 for that purpose, and her "
        "grandparents twice as much as her parents. How much more money does Betty need to "
        "buy the wallet?",
        "solution": "Betty has 100 / 2 = $50. Her grandparents give 15 * 2 = $30. She needs 100 - 50 - 30 - 15 = $5.\n"
        "#### 5",
    },
    {
        "id": "g4",
        "problem": "James writes a 3-page letter to 2 different friends twice a week. How many pages does "
        "he write a year?",
        "solution": "He writes 3*2 = 6 pages each time, so 6*2 = 12 pages a week, and 12*52 = 624 pages a year.\n"
        "#### 624",
    },
    {
        "id": "g5",
        "problem": "Albert buys 2 large pizzas and 2 small pizzas. A large pizza has 16 slices and a small "
        "pizza has 8 slices. If he eats it all, how many pieces does he eat that day?",
        "solution": "He eats 2*16 = 32 large slices and 2*8 = 16 small slices, 32+16 = 48 pieces.\n#### 48",
    },
]
PROBLEM = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
    "How many clips did Natalia sell altogether in April and May?"
)
DRAFT = "Natalia sold 48/2 = 24 clips in May. Natalia sold 48+24 = 70 clips. The answer is 70."

FAST = {"retry_wait": 0.0}


@pytest.fixture(scope="module")
def index():
    return SearchIndex.build(CORPUS, HashingEncoder(), text_field="problem")


def test_stage_order_queries_exemplars_and_instructions(index):
    llm = RecordingLLM()
    record = refine_solution(PROBLEM, DRAFT, index, llm, RefineConfig(exemplars=2, **FAST), reference="72")
    steps = record["steps"]
    assert [s["stage"] for s in steps] == [1, 2, 3] and len(llm.prompts) == 3
    assert [s["stage_name"] for s in steps] == ["overall logic", "deduction process", "language and calculation"]
    # Stage queries: the problem; the problem + the current draft; the current draft alone.
    assert steps[0]["query"] == PROBLEM
    assert steps[1]["query"] == PROBLEM + "\n" + steps[0]["output"]
    assert steps[2]["query"] == steps[1]["output"]
    # Each output is the next step's draft, and the last is the final solution.
    assert steps[0]["input_draft"] == DRAFT
    assert [s["input_draft"] for s in steps[1:]] == [s["output"] for s in steps[:-1]]
    assert record["final_solution"] == steps[-1]["output"]
    for step, prompt, stage in zip(steps, llm.prompts, STAGES):
        assert step["prompt"] == prompt and step["status"] == "ok" and step["attempts"] == 1
        assert len(step["exemplar_ids"]) == 2 and len(step["exemplar_scores"]) == 2
        assert "g1" not in step["exemplar_ids"]  # the problem itself is never its own exemplar
        assert prompt.count("Similar problem ") == 2
        # [q; a_hat; C; I]: in this order.
        positions = [
            prompt.index(PROBLEM),
            prompt.index(step["input_draft"]),
            prompt.index("Similar problems:"),
            prompt.index(stage.instruction),
        ]
        assert positions == sorted(positions)
        others = [s.instruction for s in STAGES if s is not stage]
        assert not any(other in prompt for other in others)
    assert record["draft_answer"] == "70" and record["draft_correct"] is False
    assert record["final_answer"] == "72" and record["correct"] is True and record["status"] == "ok"
    json.dumps(record)  # the record is JSON-able as written to the output file


def test_instructions_are_table_9():
    assert STAGES[0].instruction == (
        "According to similar problems above, choose the correct idea to solve this "
        "problem and fix mistakes in the reference solution."
    )
    assert STAGES[1].instruction == (
        "According to similar problems above, correct the reasoning errors and logical "
        "errors in the reference solution, determine the reasoning logic of this "
        "question and get the correct solution."
    )
    assert STAGES[2].instruction == (
        "According to similar problems above, correct the calculation errors and "
        "transcription errors in the reference solution, determine the final answer "
        "and get the correct solution."
    )
    assert [s.query for s in STAGES] == ["problem", "problem+draft", "draft"]


def test_chinese_instructions(index):
    llm = RecordingLLM()
    refine_solution(PROBLEM, DRAFT, index, llm, RefineConfig(exemplars=1, language="zh", **FAST))
    assert "修改本题参考解答中的错误" in llm.prompts[0] and "推理错误和逻辑错误" in llm.prompts[1]
    assert "计算错误和抄写错误" in llm.prompts[2]


@pytest.mark.parametrize("iterations", [1, 2, 3])
def test_t_iterations_per_stage(index, iterations):
    llm = RecordingLLM()
    record = refine_solution(PROBLEM, DRAFT, index, llm, RefineConfig(iterations=iterations, exemplars=1, **FAST))
    assert len(llm.prompts) == 3 * iterations
    assert [(s["stage"], s["iteration"]) for s in record["steps"]] == [
        (stage, t) for stage in (1, 2, 3) for t in range(1, iterations + 1)
    ]
    assert [s["step"] for s in record["steps"]] == list(range(1, 3 * iterations + 1))


def test_chosen_stages_and_exemplar_counts(index):
    llm = RecordingLLM()
    record = refine_solution(PROBLEM, DRAFT, index, llm, RefineConfig(stages=(1, 3), exemplars=0, **FAST))
    assert [s["stage"] for s in record["steps"]] == [1, 3]
    assert all(s["exemplar_ids"] == [] for s in record["steps"]) and "Similar problems" not in llm.prompts[0]
    record = refine_solution(PROBLEM, DRAFT, index, RecordingLLM(), RefineConfig(stages=1, exemplars=10, **FAST))
    assert len(record["steps"][0]["exemplar_ids"]) == len(CORPUS) - 1  # all but the problem itself


def test_retries_then_success(index):
    llm = RecordingLLM(fail_times=2)
    record = refine_solution(PROBLEM, DRAFT, index, llm, RefineConfig(stages=1, exemplars=1, retries=2, **FAST))
    step = record["steps"][0]
    assert step["status"] == "ok" and step["attempts"] == 3 and len(step["errors"]) == 2
    assert "ConnectionError: server went away" in step["errors"][0]


def test_failed_step_is_recorded_and_keeps_the_draft(index):
    llm = RecordingLLM(fail_times=3)  # the first step fails all of its 1 + 2 attempts
    record = refine_solution(PROBLEM, DRAFT, index, llm, RefineConfig(exemplars=1, retries=2, **FAST))
    first, second, third = record["steps"]
    assert first["status"] == "failed" and first["attempts"] == 3 and first["output"] is None
    assert len(first["errors"]) == 3 and first["prompt"]  # the prompt is kept to show what failed
    assert second["input_draft"] == DRAFT  # unchanged after the failure
    assert second["status"] == third["status"] == "ok"
    assert record["status"] == "partial" and len(llm.prompts) == 5


def test_empty_replies_count_as_failures(index):
    class Silent:
        def generate(self, prompt, max_new_tokens=256):
            return "   "

    result = call_llm(Silent(), "p", 8, retries=1, retry_wait=0)
    assert result.status == "failed" and result.attempts == 2 and "empty reply" in result.errors[0]


def test_a_bug_in_the_model_wrapper_raises_instead_of_failing_the_step(index):
    class Broken:
        def generate(self, prompt, max_new_tokens=256):
            return {"text": "72"}["choices"]  # a KeyError: a bug, not a model that failed

    with pytest.raises(KeyError, match="choices"):
        call_llm(Broken(), "p", 8, retries=2, retry_wait=0)


def test_drafts_from_the_llm(index):
    llm = RecordingLLM()
    record = refine_solution(PROBLEM, None, index, llm, RefineConfig(exemplars=1, **FAST), reference="72")
    assert llm.prompts[0] == SOLVE_TEMPLATE.format(problem=PROBLEM) and len(llm.prompts) == 4
    assert record["draft"]["source"] == "llm" and record["draft"]["text"].startswith("refined 1")
    assert record["steps"][0]["input_draft"] == record["draft"]["text"]


def test_failed_llm_draft_skips_the_stages(index):
    record = refine_solution(PROBLEM, None, index, RecordingLLM(fail_times=99), RefineConfig(**FAST))
    assert record["draft"]["status"] == "failed" and record["status"] == "failed"
    assert [s["status"] for s in record["steps"]] == ["skipped"] * 3 and record["final_solution"] is None


def test_bad_settings_are_named(index):
    with pytest.raises(ValueError, match="stages must be 1, 2 or 3"):
        refine_solution(PROBLEM, DRAFT, index, RecordingLLM(), RefineConfig(stages=4))
    with pytest.raises(ValueError, match="iterations"):
        refine_solution(PROBLEM, DRAFT, index, RecordingLLM(), RefineConfig(iterations=0))
    with pytest.raises(ValueError, match="no field 'worked'"):
        refine_solution(PROBLEM, DRAFT, index, RecordingLLM(), RefineConfig(solution_field="worked"))
    with pytest.raises(ValueError, match="problem text is empty"):
        refine_solution(" ", DRAFT, index, RecordingLLM(), RefineConfig())


def test_build_prompt_layout():
    prompt = build_prompt("Q?", "draft A", [{"problem": "P1", "solution": "S1"}], "Fix it.")
    assert prompt == (
        "Problem: Q?\n\nReference solution: draft A\n\nSimilar problems:\n\n"
        "Similar problem 1: P1\nSolution 1: S1\n\nFix it.\n\nCorrected solution:"
    )


PROBLEMS = [
    {"id": "a", "question": CORPUS[0]["problem"], "answer": CORPUS[0]["solution"]},
    {"id": "b", "question": "A slow problem that times out on every call", "answer": "#### 3"},
    {"id": "c", "question": CORPUS[3]["problem"], "answer": "#### 624"},
]


def test_refine_file_keeps_every_problem(index, tmp_path, write):
    problems = write(tmp_path / "problems.jsonl", PROBLEMS)
    drafts = write(
        tmp_path / "drafts.jsonl",
        [
            {"id": "c", "draft": "3*2*2*52 = 624. The answer is 624."},
            {"id": "b", "draft": "The answer is 3."},
            {"id": "a", "draft": DRAFT},
        ],
    )
    llm = RecordingLLM(fail_when="times out")
    summary = refine_file(
        problems,
        index,
        llm,
        tmp_path / "out.jsonl",
        drafts_path=drafts,
        exemplars=2,
        retries=1,
        retry_wait=0,
        show_progress=False,
    )
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == ["a", "b", "c"] and [r["line"] for r in records] == [1, 2, 3]
    assert [r["status"] for r in records] == ["ok", "failed", "ok"]
    assert records[0]["steps"][0]["input_draft"] == DRAFT  # matched by id, not by line
    assert all(s["attempts"] == 2 and s["status"] == "failed" for s in records[1]["steps"])
    assert records[1]["final_solution"] == "The answer is 3." and records[1]["correct"] is True
    assert records[0]["reference_answer"] == "72" and records[0]["correct"] is True
    assert records[2]["correct"] is False  # the fake LLM says 72
    assert all(r["llm"] == "recording" and r["seconds"] >= 0 for r in records)
    assert summary["problems"] == 3 and summary["failed"] == 1 and summary["with_reference"] == 3
    assert summary["draft_accuracy"] == pytest.approx(2 / 3) and summary["final_accuracy"] == pytest.approx(2 / 3)
    assert summary["config"]["stages"] == (1, 2, 3)


def test_an_exception_outside_the_llm_does_not_stop_the_others(index, tmp_path, write):
    class BrokenIndex:
        """Retrieval fails for one problem only."""

        rows, text_field = index.rows, "problem"

        def __len__(self):
            return len(index)

        def search(self, queries, k=5):
            if "slow problem" in queries[0]:
                raise RuntimeError("encoder crashed")
            return index.search(queries, k=k)

    problems = write(tmp_path / "problems.jsonl", PROBLEMS)
    summary = refine_file(
        problems, BrokenIndex(), RecordingLLM(), tmp_path / "out.jsonl", exemplars=1, retry_wait=0, show_progress=False
    )
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["status"] for r in records] == ["ok", "error", "ok"]
    assert "RuntimeError: encoder crashed" in records[1]["error"] and records[1]["correct"] is False
    assert records[0]["draft"]["source"] == "llm"  # no drafts file: the LLM wrote them
    assert summary["errors"] == 1 and summary["problems"] == 3


def test_a_bug_outside_the_llm_stops_the_run(index, tmp_path, write):
    class BuggyIndex:
        rows, text_field = index.rows, "problem"

        def __len__(self):
            return len(index)

        def search(self, queries, k=5):
            return index.search(queries, k=k)[0].hits  # an AttributeError: a bug, not a bad problem

    problems = write(tmp_path / "problems.jsonl", PROBLEMS)
    with pytest.raises(AttributeError, match="hits"):
        refine_file(problems, BuggyIndex(), RecordingLLM(), tmp_path / "out.jsonl", exemplars=1, show_progress=False)


def test_an_interrupted_run_keeps_the_finished_problems(index, tmp_path, write):
    class InterruptedLLM(RecordingLLM):
        def generate(self, prompt, max_new_tokens=256):
            if "slow problem" in prompt:
                raise KeyboardInterrupt
            return super().generate(prompt, max_new_tokens)

    problems = write(tmp_path / "problems.jsonl", PROBLEMS)
    with pytest.raises(KeyboardInterrupt):
        refine_file(problems, index, InterruptedLLM(), tmp_path / "out.jsonl", exemplars=1, show_progress=False)
    assert not (tmp_path / "out.jsonl").exists()
    kept = [json.loads(line) for line in (tmp_path / "out.jsonl.partial").read_text().splitlines()]
    assert [r["id"] for r in kept] == ["a"] and kept[0]["status"] == "ok"


def test_drafts_by_line_and_missing_drafts(index, tmp_path, write):
    rows = [{k: v for k, v in row.items() if k != "id"} for row in PROBLEMS]
    problems = write(tmp_path / "problems.jsonl", rows)
    drafts = write(tmp_path / "drafts.jsonl", [{"draft": f"draft {i}"} for i in range(3)])
    llm = RecordingLLM()
    refine_file(
        problems,
        index,
        llm,
        tmp_path / "out.jsonl",
        drafts_path=drafts,
        stages=1,
        exemplars=0,
        retry_wait=0,
        show_progress=False,
    )
    assert "Reference solution: draft 0" in llm.prompts[0] and "Reference solution: draft 2" in llm.prompts[2]
    short = write(tmp_path / "short.jsonl", [{"draft": "only one"}])
    with pytest.raises(ValueError, match="1 drafts for 3 problems"):
        refine_file(problems, index, llm, tmp_path / "out2.jsonl", drafts_path=short, show_progress=False)
    by_id = write(tmp_path / "by_id.jsonl", [{"id": "a", "draft": "x"}])
    problems_with_ids = write(tmp_path / "p_ids.jsonl", PROBLEMS)
    with pytest.raises(ValueError, match="no draft for 2 problem"):
        refine_file(problems_with_ids, index, llm, tmp_path / "out3.jsonl", drafts_path=by_id, show_progress=False)
    assert not (tmp_path / "out2.jsonl").exists() and not (tmp_path / "out3.jsonl").exists()


def test_bad_problem_files_are_named(index, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"text": "no problem field"}) + "\n")
    with pytest.raises(ValueError, match="no problem field"):
        refine_file(bad, index, RecordingLLM(), tmp_path / "out.jsonl", show_progress=False)
    bad.write_text(json.dumps({"problem": "ok"}) + "\n" + json.dumps({"problem": ""}) + "\n")
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        refine_file(bad, index, RecordingLLM(), tmp_path / "out.jsonl", show_progress=False)


@pytest.fixture
def one_torch_thread():
    """One intra-op thread for the real model: on a busy 2-core machine, two OpenMP threads that wait for each
    other make small matrix products ~10x slower; decoding a 135M model is memory-bound, so one thread loses little."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.slow
def test_real_run_with_the_packaged_smollm2(index, tmp_path, one_torch_thread, write):
    """Two GSM8K-style problems through the packaged SmolLM2: three stages each, one exemplar, short replies."""
    from mathgraph.tasks.refine.llm import load_llm

    start = time.perf_counter()
    llm = load_llm("smollm2", device="cpu")  # fails (not skips) when the packaged model cannot be loaded
    loaded = time.perf_counter() - start
    _check_the_kept_copy(llm)
    problems = write(
        tmp_path / "problems.jsonl",
        [
            {
                "id": "t1",
                "question": "Tom has 3 apples and buys 4 more. How many apples does he have?",
                "answer": "#### 7",
            },
            {"id": "t2", "question": "A pen costs $2. How much do 5 pens cost?", "answer": "#### 10"},
        ],
    )
    drafts = write(
        tmp_path / "drafts.jsonl",
        [
            {"id": "t1", "draft": "Tom has 3 + 4 = 7 apples. The answer is 7."},
            {"id": "t2", "draft": "5 pens cost 5 + 2 = 7 dollars. The answer is 7."},
        ],
    )
    summary = refine_file(
        problems,
        index,
        llm,
        tmp_path / "out.jsonl",
        drafts_path=drafts,
        exemplars=1,
        max_new_tokens=32,
        retries=0,
        retry_wait=0,
        show_progress=False,
    )
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(records) == 2 and summary["problems"] == 2 and summary["errors"] == 0
    assert [r["draft_correct"] for r in records] == [True, False]
    for record in records:
        assert [s["stage"] for s in record["steps"]] == [1, 2, 3]
        assert all(s["status"] == "ok" and s["output"] for s in record["steps"]), record["steps"]
        assert isinstance(record["correct"], bool) and record["final_solution"] == record["steps"][-1]["output"]
    print(
        f"\nSmolLM2: load {loaded:.1f} s, {summary['seconds_per_problem']:.1f} s per problem (3 calls of <= 32 "
        f"tokens), draft accuracy {summary['draft_accuracy']}, final accuracy {summary['final_accuracy']}"
    )


def _check_the_kept_copy(llm):
    """The first load of a GGUF model keeps it dequantised in the cache; the copy holds what the GGUF file
    holds (a Q4_1 tensor dequantised by the gguf package equals the kept weight), and a second load reads it
    back as the same model."""
    import gguf
    import torch
    from safetensors.numpy import load_file

    from mathgraph.tasks.refine.llm import converted_gguf_folder, load_llm, packaged_smollm2

    folder = converted_gguf_folder(Path(llm.name))
    kept = load_file(folder / "model.safetensors")
    tensor = next(t for t in gguf.GGUFReader(llm.name).tensors if t.name == "blk.0.ffn_down.weight")
    weight = kept["model.layers.0.mlp.down_proj.weight"]
    assert np.array_equal(weight, gguf.quants.dequantize(tensor.data, tensor.tensor_type).reshape(weight.shape))
    again = load_llm("smollm2", device="cpu")
    assert again.name == llm.name == str(Path(*packaged_smollm2()))
    first, second = llm.model.state_dict(), again.model.state_dict()
    assert first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)


def test_a_kept_gguf_copy_is_named_by_the_file_it_came_from(tmp_path, monkeypatch):
    """The kept copy's folder is under the mathgraph cache and changes when the GGUF file changes."""
    from mathgraph.tasks.refine.llm import converted_gguf_folder

    monkeypatch.setenv("MATHGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + bytes(60))
    folder = converted_gguf_folder(model)
    assert folder.parent == tmp_path / "cache" / "gguf" and folder.name.startswith("tiny-64-")
    model.write_bytes(b"GGUF" + bytes(61))
    assert converted_gguf_folder(model) != folder


def test_a_kept_copy_already_in_place_is_left_as_it_is(tmp_path):
    """Where another process kept the copy first, the second one's copy is thrown away whole: the folder keeps
    the first copy's files and no half-written folder is left beside it."""
    import torch

    from mathgraph.tasks.refine.llm import _keep_converted

    class Config:
        def to_dict(self):
            return {"model_type": "tiny", "quantization_config": {"quant_method": "gguf"}}

    class Tokenizer:
        def save_pretrained(self, folder):
            (Path(folder) / "tokenizer.json").write_text("{}")

    model = torch.nn.Linear(2, 2)
    model.config = Config()
    folder = tmp_path / "gguf" / "tiny-64-1"
    _keep_converted(model, Tokenizer(), folder)
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors", "tokenizer.json"]
    assert json.loads((folder / "config.json").read_text()) == {"model_type": "tiny"}  # no GGUF entry
    (folder / "config.json").write_text('{"first": true}')
    _keep_converted(model, Tokenizer(), folder)  # the rename fails: folder is there already
    assert json.loads((folder / "config.json").read_text()) == {"first": True}
    assert [p.name for p in folder.parent.iterdir()] == ["tiny-64-1"]
