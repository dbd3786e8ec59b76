"""The KPC study's statistics against hand computation (its smoke run is in ``test_smoke.py``)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import kpc_study  # noqa: E402


def test_paired_difference_is_the_mean_of_per_problem_differences():
    a, b = [[1, 1, 0, 1]], [[1, 0, 0, 0]]
    result = kpc_study.paired_difference(a, b)
    assert result["difference"] == 0.5 and result["seeds"] == [1, 1]
    # the per-problem differences are 0 or 1: every resample's mean lies in [0, 1]
    assert 0.0 <= result["ci95"][0] <= 0.5 <= result["ci95"][1] <= 1.0
    assert kpc_study.paired_difference(a, a) == {"difference": 0.0, "ci95": [0.0, 0.0], "seeds": [1, 1]}
    # over seeds, each problem's correctness is averaged first: (1 + 0) / 2 - 0 on problem 1
    assert kpc_study.paired_difference([[1, 0], [0, 0]], [[0, 0], [0, 0]])["difference"] == 0.25


def test_comparisons_pair_the_rows_that_ran():
    def row(correct: str) -> dict:
        return {"test": {"correct": correct}}

    study = {"rows": {"comus-pt": row("1101"), "tfidf": row("1001"), "dapt-bert@5%": row("0000")}}
    paired = kpc_study.comparisons(study)
    assert list(paired) == ["comus-pt minus tfidf"]  # comus-pt@5% has not run: its pairs are left out
    assert paired["comus-pt minus tfidf"]["difference"] == pytest.approx(0.25)
    # a second fine-tuning seed is averaged in per problem: (1, 1, 0.5, 1) - (1, 0, 0, 1)
    study["rows"]["comus-pt@seed1"] = row("1111")
    paired = kpc_study.comparisons(study)["comus-pt minus tfidf"]
    assert paired["difference"] == pytest.approx(0.375) and paired["seeds"] == [2, 1]


def test_a_resumed_pre_training_says_where_it_resumed(tmp_path):
    assert kpc_study._checkpoint_step(tmp_path) is None  # nothing to resume: a fresh run
    (tmp_path / "checkpoint-last").mkdir()
    (tmp_path / "checkpoint-last" / "trainer_state.json").write_text('{"state": {"epoch": 1, "step": 561}}')
    assert kpc_study._checkpoint_step(tmp_path) == 561


def test_any_fine_tuned_row_may_take_more_seeds():
    from types import SimpleNamespace

    args = SimpleNamespace(
        rows="comus-pt-no-memory@seed1,dapt-bert",
        steps=2000,
        save_every=1000,
        long_steps=4000,
        curve_until=4000,
        smoke=False,
    )
    assert kpc_study.planned_rows(args) == ["comus-pt-no-memory@seed1", "dapt-bert"]
    for row in ("tfidf@seed1", "comus-pt-no-gat"):  # TF-IDF has no seed; an unknown row stays an error
        with pytest.raises(SystemExit, match="unknown rows"):
            kpc_study.planned_rows(SimpleNamespace(**{**vars(args), "rows": row}))


def test_the_curve_plans_its_points_and_takes_the_budget_row_where_the_schedule_is_the_budgets():
    from types import SimpleNamespace

    args = SimpleNamespace(rows=None, jobs="curve", steps=2000, save_every=1000, long_steps=4000, smoke=False)
    assert kpc_study.planned_rows(SimpleNamespace(**vars(args), curve_until=2000)) == [
        "comus@step1000",
        "dapt-bert@step1000",
        "comus@step2000",
        "dapt-bert@step2000",
    ]
    # on the budget's own schedule the point at 2,000 steps is the budget row: not fine-tuned again
    same = SimpleNamespace(**{**vars(args), "long_steps": 2000}, curve_until=2000)
    assert kpc_study.planned_rows(same) == ["comus@step1000", "dapt-bert@step1000"]

    def row(dev: float) -> dict:
        return {"dev": {"accuracy": dev}}

    def accuracies(points):
        return [(step, dev["accuracy"]) for step, dev in points]

    study = {
        "rows": {"bert": row(0.7), "dapt-bert": row(0.8), "dapt-bert@step1000": row(0.75), "comus-pt": row(0.9)},
        "pretraining": {"dapt-long": {"steps": 2000}},  # comus-long has not run
    }
    points = kpc_study.curve_points(study, 2000)
    assert accuracies(points["dapt-bert"]) == [(0, 0.7), (1000, 0.75), (2000, 0.8)] and points["comus"] == []
    study["pretraining"]["dapt-long"]["steps"] = 4000  # another schedule: the budget row is not one of its points
    assert accuracies(kpc_study.curve_points(study, 2000)["dapt-bert"]) == [(0, 0.7), (1000, 0.75)]


def test_a_curve_point_past_where_its_long_run_stopped_is_a_clear_error(tmp_path):
    # the long run stopped at step 1,000 of its schedule: its checkpoint is mid-epoch, so it is not extended
    (tmp_path / "pretrain" / "dapt-long").mkdir(parents=True)
    (tmp_path / "pretrain" / "dapt-long" / "config.json").write_text("{}")
    study = {"rows": {}, "pretraining": {"dapt-long": {"steps": 2000, "step": 1000}}}
    assert kpc_study.pretrain("dapt-long", tmp_path, study, None, until=1000) == tmp_path / "pretrain" / "dapt-long"
    with pytest.raises(SystemExit, match="stopped at step 1000, before 2000"):
        kpc_study.pretrain("dapt-long", tmp_path, study, None, until=2000)


def test_curve_until_past_the_schedule_is_a_usage_error(tmp_path, monkeypatch, capsys):
    # the script's main in this process (a new one spent some 15 s importing torch before the usage error)
    monkeypatch.setattr(sys, "argv", [kpc_study.__file__, "--work", str(tmp_path), "--curve-until", "3000"])
    with pytest.raises(SystemExit) as done:
        kpc_study.main()
    assert (
        done.value.code == 2 and "--curve-until must lie in 1..--long-steps (2000), got 3000" in capsys.readouterr().err
    )
    assert not any(tmp_path.iterdir())  # refused before any work
