"""mathgraph's batch jobs on Ray Data (``--engine ray``): the jobs of ``mathgraph.batch_jobs``, on a cluster.

    result = run_job_on_ray(job, address="auto", workers=8)     # the same output as batch_jobs.run_job(job)

Ray is an optional extra (``pip install "mathgraph[ray]"``); nothing else in mathgraph imports this module.
The pipeline, from the job's plan (``batch_jobs.JobRun``: the same planning pass, manifest and ``--resume``):

1. read: one block per pending shard; a Ray task reads the shard's records from its start (a byte offset or
   a row), so the input must be at the same path on every node (a shared file system, or a copy on each);
2. the job's CPU stages (parsing) in Ray tasks of one CPU, ``chunk_rows`` items per call; with no model
   stage after them, ``workers`` of them at a time;
3. its model stages (encoding, predicting) in a pool of ``workers`` actors, each loading the model once, with
   ``cpus_per_worker`` CPUs (torch threads) and ``gpus_per_worker`` GPUs (default: 1 where the cluster has
   GPUs, else 0); a parse stage is kept out of the actors, so the GPUs never wait on spaCy;
4. the driver collects each shard's items and writes them with the job's writer, the local engine's code:
   the output is the local engine's (the same graphs and predictions; vectors equal to rounding, as
   batches form differently), and the output directory need only be reachable from the driver.

Items travel between the stages pickled, one per row of a binary column, so they keep their Python types
(ids of any type, tuples, graphs, vectors). A user error in a task (a bad row, a malformed graph) comes
back as the same one-line error the local engine gives, not a Ray traceback.
"""

from __future__ import annotations

import dataclasses
import logging
import pickle
from collections import defaultdict
from typing import IO

import numpy as np

from mathgraph.batch_jobs import Job, JobResult, JobRun, Progress, RowError, read_shard
from mathgraph.errors import UserError

PARSE_TASK_MEMORY = 512 * 2**20  # bytes a parse task reserves: spaCy's English model and a chunk of graphs
ERROR_SHARD = -1  # the shard number of a row that carries a user error instead of an item
USER_ERRORS = (UserError, OSError)  # what the commands report in one line (bad rows, missing files)


def ray_available() -> bool:
    """Whether Ray Data can be imported (``pip install "mathgraph[ray]"``)."""
    try:
        import ray.data  # noqa: F401
    except ImportError:
        return False
    return True


def require_ray() -> None:
    """A clear error where Ray is not installed."""
    if not ray_available():
        raise ValueError('--engine ray needs Ray Data: pip install "mathgraph[ray]"')


def run_job_on_ray(
    job: Job,
    resume: bool = False,
    address: str | None = None,
    workers: int | None = None,
    cpus_per_worker: float = 1.0,
    gpus_per_worker: float | None = None,
    show_progress: bool = False,
    out: IO[str] | None = None,
    verbose: bool = False,
) -> JobResult:
    """Run ``job`` as a Ray Data pipeline (see the module docstring) on the cluster at ``address`` (None: the
    Ray this process is connected to, else ``RAY_ADDRESS``, else a new local one, shut down at the end).

    ``workers``: model actors (default: the cluster's GPUs, else its CPUs but one, left to parsing), or for a
    job without a model stage, CPU tasks at a time (default: the cluster's CPUs). ``show_progress``: mathgraph's
    one bar over the rows. A Ray started here starts quietly, and Ray Data keeps its progress and notes to itself,
    unless ``verbose`` (``mathgraph -v``): see ``ray_start_options``."""
    require_ray()
    import ray

    run = JobRun(job, resume, out)  # plans and checks the input before Ray starts
    started = False
    try:
        if not ray.is_initialized():
            ray.init(address=address, **ray_start_options(verbose))
            started = True
        _quiet_ray_data(verbose)
        for spec in [s for s in run.pending if s.rows == 0]:
            run.write_shard(spec, [])  # nothing to read: every record of the shard was bad
        pending = [s for s in run.pending if s.rows > 0]
        if pending:
            dataset = _pipeline(job, pending, workers, cpus_per_worker, gpus_per_worker)
            _collect(dataset, run, {spec.index: spec for spec in pending}, show_progress)
        return run.finish()
    except BaseException:
        run.close_unfinished()
        raise
    finally:
        if started:
            ray.shutdown()


def _pipeline(job: Job, pending: list, workers: int | None, cpus: float, gpus: float | None):
    """The Ray Data dataset of the pending shards' finished items."""
    import ray
    import ray.data

    resources = ray.cluster_resources()
    cluster_cpus, cluster_gpus = int(resources.get("CPU", 1)), int(resources.get("GPU", 0))
    cpu_stages = [s for s in job.stages if s.kind == "cpu"]
    model_stages = [s for s in job.stages if s.kind == "model"]
    gpus = (1.0 if cluster_gpus else 0.0) if gpus is None else gpus
    if model_stages:
        workers = workers or (max(1, int(cluster_gpus / gpus)) if gpus else max(1, cluster_cpus - 1))
        _check_fits(workers, cpus, gpus, cluster_cpus, cluster_gpus, parsing=bool(cpu_stages))
    else:
        workers = workers or cluster_cpus

    specs = {spec.index: spec for spec in pending}
    # the last step prepares the items as their shards keep them (job.writer.prepare): only that travels back
    last = len(job.stages) - 1
    dataset = ray.data.from_items([{"shard": spec.index} for spec in pending], override_num_blocks=len(pending))
    dataset = dataset.map_batches(
        _read_shards,
        batch_size=1,
        fn_kwargs={"job": job, "specs": specs, "writer": job.writer if last < 0 else None},
    )
    for position, stage in enumerate(job.stages):
        writer = job.writer if position == last else None
        if stage.kind == "cpu":
            dataset = dataset.map_batches(
                _run_cpu_stage,
                batch_size=job.chunk_rows,
                fn_kwargs={"stage": _one_process(stage), "writer": writer},
                compute=ray.data.TaskPoolStrategy(size=None if model_stages else workers),
                num_cpus=1,
                # what a parse task holds (spaCy, a chunk's graphs); and an option the actors do not have, so
                # that Ray Data does not fuse this stage into them (it fuses a task stage into the actor stage
                # after it when their options agree): parsing runs in tasks of its own on the free CPUs, and a
                # GPU actor never waits on spaCy
                memory=PARSE_TASK_MEMORY,
            )
        else:
            device = getattr(stage, "device", None) or ("cuda" if gpus else "cpu")
            if dataclasses.is_dataclass(stage) and hasattr(stage, "device"):
                stage = dataclasses.replace(stage, device=device)
            dataset = dataset.map_batches(
                _ModelActor,
                batch_size=job.chunk_rows,
                fn_constructor_kwargs={"stage": stage, "threads": max(1, int(cpus)), "writer": writer},
                compute=ray.data.ActorPoolStrategy(size=workers),
                num_cpus=cpus,
                num_gpus=gpus,
            )
    return dataset


def _check_fits(workers: int, cpus: float, gpus: float, cluster_cpus: int, cluster_gpus: int, parsing: bool) -> None:
    """A clear error for actors the cluster cannot hold: Ray would wait for them for ever."""
    if gpus and workers * gpus > cluster_gpus:
        raise ValueError(f"{workers} workers of {gpus:g} GPUs need more than the cluster's {cluster_gpus} GPUs")
    free = cluster_cpus - workers * cpus
    if free < (1 if parsing else 0):
        raise ValueError(
            f"{workers} workers of {cpus:g} CPUs leave {max(free, 0):g} of the cluster's {cluster_cpus} CPUs "
            "for parsing: give fewer --workers or a smaller --cpus-per-worker"
        )


def _one_process(stage):
    """A CPU stage as one process runs it: Ray's tasks are the parallelism, not a pool inside each."""
    if dataclasses.is_dataclass(stage) and getattr(stage, "workers", 1) != 1:
        return dataclasses.replace(stage, workers=1)
    return stage


def _collect(dataset, run: JobRun, specs: dict, show_progress: bool) -> None:
    """Write each shard as soon as all its items are in (shards finish in any order)."""
    buffers: dict[int, list[dict]] = defaultdict(list)
    with Progress(run, show_progress) as progress:
        for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
            for shard, blob in zip(batch["shard"], batch["item"]):
                item = pickle.loads(blob)
                if int(shard) == ERROR_SHARD:
                    raise _user_error(run.job, item)
                buffers[int(shard)].append(item)
            progress.advance(len(batch["item"]))
            for index in [i for i, items in buffers.items() if len(items) == specs[i].rows]:
                items = sorted(buffers.pop(index), key=lambda item: item["record"])
                run.write_shard(specs[index], items)


def _user_error(job: Job, error: dict) -> Exception:
    """The error a task sent back, as the local engine raises it."""
    if error["row"]:
        return UserError(f"{', '.join(map(str, job.reader.files))}: {error['message']}")
    kind = error["type"]
    return kind(error["message"]) if issubclass(kind, OSError) else UserError(error["message"])


def _pack(items: list[dict], writer=None) -> dict[str, np.ndarray]:
    """Items as a batch of pickled rows (``writer``: prepared as their shards keep them first)."""
    if writer is not None:
        items = [writer.prepare(item) for item in items]
    blobs = np.empty(len(items), dtype=object)
    blobs[:] = [pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL) for item in items]
    return {"shard": np.array([item["shard"] for item in items], dtype=np.int64), "item": blobs}


def _unpack(batch: dict[str, np.ndarray]) -> tuple[list[dict], list[bytes]]:
    """The items of a batch, and the error rows it carries (passed on untouched)."""
    items, errors = [], []
    for shard, blob in zip(batch["shard"], batch["item"]):
        if int(shard) == ERROR_SHARD:
            errors.append(blob)
        else:
            items.append(pickle.loads(blob))
    return items, errors


def _with_errors(packed: dict[str, np.ndarray], errors: list[bytes]) -> dict[str, np.ndarray]:
    if not errors:
        return packed
    blobs = np.empty(len(packed["item"]) + len(errors), dtype=object)
    blobs[:] = [*packed["item"], *errors]
    return {"shard": np.concatenate([packed["shard"], np.full(len(errors), ERROR_SHARD)]), "item": blobs}


def _error_row(err: Exception) -> dict[str, np.ndarray]:
    """A user error as a row the driver raises (Ray would otherwise wrap it in its own traceback)."""
    error = {"type": type(err), "message": str(err), "row": isinstance(err, RowError)}
    blobs = np.empty(1, dtype=object)
    blobs[0] = pickle.dumps(error)
    return {"shard": np.array([ERROR_SHARD], dtype=np.int64), "item": blobs}


def _read_shards(batch: dict[str, np.ndarray], job: Job, specs: dict, writer=None) -> dict[str, np.ndarray]:
    try:
        return _pack([item for index in batch["shard"] for item in read_shard(job, specs[int(index)])], writer)
    except USER_ERRORS as err:
        return _error_row(err)


def _run_cpu_stage(batch: dict[str, np.ndarray], stage, writer=None) -> dict[str, np.ndarray]:
    items, errors = _unpack(batch)
    try:
        stage.load()
        packed = _pack(stage(items), writer)
    except USER_ERRORS as err:
        return _error_row(err)
    finally:
        if hasattr(stage, "close"):
            stage.close()
    return _with_errors(packed, errors)


class _ModelActor:
    """A Ray actor holding one loaded model stage."""

    def __init__(self, stage, threads: int = 1, writer=None):
        self.stage, self.writer = stage, writer
        self.stage.load()
        import sys

        if "torch" in sys.modules:  # Ray sets the thread variables, but torch read them at import
            sys.modules["torch"].set_num_threads(threads)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        items, errors = _unpack(batch)
        try:
            packed = _pack(self.stage(items), self.writer)
        except USER_ERRORS as err:
            return _error_row(err)
        return _with_errors(packed, errors)


def ray_start_options(verbose: bool = False) -> dict:
    """``ray.init``'s options for a Ray that a job starts. Without ``verbose``, quiet: no dashboard; the workers'
    output not copied to the driver's stderr (a worker's user error comes back as the job's one-line error, and
    Ray still reports a worker that dies); Ray's own log lines from ERROR (its start-up notices, such as the
    token authentication it turns on, say nothing a user of the command can act on; about 20 lines a run).
    With ``verbose``, Ray's defaults but the dashboard."""
    if verbose:
        return {"include_dashboard": False}
    return {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.ERROR,
        "configure_logging": True,
    }


def _quiet_ray_data(verbose: bool) -> None:
    """Ray Data's own progress (on a redirected stderr, a block of log lines every few seconds) and its notes
    (execution plans) only with ``verbose``: mathgraph's bar over the rows is the progress; errors still show."""
    import ray.data

    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = verbose
    context.print_on_execution_start = verbose
    logging.getLogger("ray.data").setLevel(logging.INFO if verbose else logging.ERROR)


__all__ = ["run_job_on_ray", "ray_available", "require_ray", "ray_start_options"]
