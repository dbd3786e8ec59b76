"""Resumable batch jobs over large banks: numbered output shards and a manifest, one shard at a time.

    job = Job(
        name="parse",
        reader=BankReader.open("bank.parquet", fields=("problem",)),   # mathgraph.bank_files
        to_input=FieldInput("problem"),          # what a stage gets from a row
        stages=[ParseStage(...)],                # mathgraph.tasks.jobs.stages: parse, encode, predict
        writer=GraphShards("jsonl"),             # mathgraph.job_outputs: what a shard's files are
        output=Path("graphs/"),                  # a directory of shards, or one file (.jsonl, .parquet, .npy)
        settings={"parser": "spacy"},            # what the output depends on: --resume refuses other settings
    )
    result = run_job(job, resume=True)           # this process; tasks.jobs.ray_engine.run_job_on_ray: on Ray

The API, for a command that wants to run as a job (``mathgraph index build`` builds its vectors this way):

- ``Job``: the input (a ``BankReader``), ``to_input`` (row -> the value stages read as ``item["input"]``), the
  ``stages``, the ``writer`` and the ``output``.
- A stage is an object with ``kind`` (``"cpu"``: parsing, run in Ray tasks; ``"model"``: run in Ray actors that
  load it once), ``load()`` (called once per process before its first items: the model loads here, not in
  ``__init__``, so a stage pickles small) and ``__call__(items) -> items`` (adds its keys to each item, keeps the
  order). An item is a dict: ``shard``, ``record`` (its index among the input's records), ``line`` (the input's
  line or row number), ``id`` (when the row has one) and ``input``; stages add ``graphs``, ``vector``,
  ``result``... ``RowError`` from a stage names the item's line.
- The writer (``mathgraph.job_outputs``): ``prepare(item)`` right after the stages (an item then keeps only
  what its shard writes, so a shard in memory is about its file's size), ``write`` per shard, ``merge`` into
  one file.
- ``run_job(job, resume=False)`` runs it here; ``JobRun`` is what an engine needs: the plan, the pending shards,
  ``read_shard`` and ``write_shard``, ``finish``.
- ``read_manifest(directory)`` and ``finished_files(directory)``: a finished job's shards, for whoever reads them
  (an index built from ``mathgraph encode --output DIR``'s vector shards: ``job_outputs.VectorShards``).

How it runs. Shard k holds the input's records ``[k * shard_size, (k + 1) * shard_size)``; a record is a
non-blank line or a row, a bad one included, so where a shard starts never depends on what was skipped. A
first pass over the input checks every record (a bad one stops the job, naming file and line, before any
model loads, unless ``skip_bad``) and notes where each shard starts, so each shard is read from there on its
own. Each shard's files are written under temporary names and renamed, and ``manifest.json`` is rewritten
(atomically) after each: a job killed at any moment leaves whole shards, which ``resume=True`` skips, and
the output is the one an uninterrupted run writes. A resumed job checks that the manifest's job, settings,
shard size, output format and input (file sizes, records per shard) are its own, and refuses otherwise.
Without ``resume``, a directory holding a job is refused rather than overwritten.

Output in one file (``output`` ends in ``.jsonl``, ``.parquet`` or ``.npy``): the shards go to
``OUTPUT.parts/`` and are merged into ``OUTPUT`` at the end, which removes the parts (killed, ``--resume``
continues them). ``output=None``: a temporary directory, merged into the ``out`` stream (stdout).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from os import PathLike
from pathlib import Path
from typing import IO, Any, Protocol

from mathgraph.bank_files import BankReader, Position
from mathgraph.errors import UserError
from mathgraph.job_outputs import atomic_path, output_target
from mathgraph.jsonl import JsonlError
from mathgraph.quiet import progress_bar

MANIFEST_FILE = "manifest.json"
MANIFEST_FORMAT = "mathgraph-batch-job"
MANIFEST_VERSION = 1
DEFAULT_SHARD_SIZE = 10_000
DEFAULT_CHUNK_ROWS = 256  # items a stage gets at once: batches form inside a chunk, and memory stays bounded
BAD_KEPT = 20  # bad records named in the manifest (all are counted)


class Stage(Protocol):
    """One step of a job (see the module docstring)."""

    kind: str

    def load(self) -> None:
        """Load what the stage needs (a model, a parser), once per process."""

    def __call__(self, items: list[dict]) -> list[dict]:
        """The items with this stage's keys added, in the same order."""


class RowError(UserError):
    """A stage's error about one item: the job names the item's line."""

    def __init__(self, item: dict, reason: str):
        super().__init__(f"line {item.get('line')}: {reason}")
        self.item, self.reason = item, reason


@dataclass(frozen=True)
class FieldInput:
    """``to_input`` of a job over one text field: the row's ``field``."""

    field: str

    def __call__(self, row: dict) -> Any:
        return row[self.field]


@dataclass
class Job:
    """A batch job (see the module docstring). ``line_field``: take an output row's line from this field of
    the input row when it has one (a graph file keeps the line of the problem it was parsed from);
    ``progress``: the progress bar's label (default: ``name``)."""

    name: str
    reader: BankReader
    to_input: Callable[[dict], Any]
    writer: Any
    output: Path | None
    stages: Sequence[Stage] = ()
    settings: dict = field(default_factory=dict)
    shard_size: int = DEFAULT_SHARD_SIZE
    chunk_rows: int = DEFAULT_CHUNK_ROWS
    skip_bad: bool = False
    line_field: str | None = None
    progress: str | None = None

    def __post_init__(self) -> None:
        if self.shard_size < 1 or self.chunk_rows < 1:
            raise UserError(f"shard size and chunk rows must be >= 1, got {self.shard_size} and {self.chunk_rows}")
        self.output = None if self.output is None else Path(self.output)


@dataclass(frozen=True)
class ShardSpec:
    """Shard ``index``: ``records`` input records from ``start`` (the first is record ``first_record``), of
    which ``rows`` are good, on lines (or rows) ``first_line`` to ``last_line``."""

    index: int
    start: Position
    first_record: int
    records: int
    rows: int
    first_line: int
    last_line: int


@dataclass
class Plan:
    """The shards of an input, and its bad records (counted; the first ``BAD_KEPT`` named)."""

    shards: list[ShardSpec]
    records: int
    rows: int
    bad_count: int = 0
    bad: list[str] = field(default_factory=list)


def plan_shards(reader: BankReader, shard_size: int, skip_bad: bool = False) -> Plan:
    """One pass over the input: where each shard starts, and how many good records each holds. A bad record
    raises its ``JsonlError`` (file and line) unless ``skip_bad``, when it is counted instead."""
    shards: list[ShardSpec] = []
    plan = Plan(shards, 0, 0)
    current: dict | None = None
    for record in reader.records():
        if current is None or current["records"] == shard_size:
            if current is not None:
                shards.append(ShardSpec(**current))
            current = {
                "index": len(shards),
                "start": record.position,
                "first_record": plan.records,
                "records": 0,
                "rows": 0,
                "first_line": record.number,
                "last_line": record.number,
            }
        current["records"] += 1
        current["last_line"] = record.number
        plan.records += 1
        if record.error is None:
            current["rows"] += 1
            plan.rows += 1
            continue
        if not skip_bad:
            raise reader.error(record)
        plan.bad_count += 1
        if len(plan.bad) < BAD_KEPT:
            plan.bad.append(str(reader.error(record)))
    if current is not None:
        shards.append(ShardSpec(**current))
    return plan


def read_shard(job: Job, spec: ShardSpec) -> list[dict]:
    """The items of shard ``spec``'s good records (see the module docstring)."""
    items = []
    reader = job.reader
    for offset, record in enumerate(islice(reader.records(spec.start), spec.records)):
        if record.error is not None:
            if job.skip_bad:
                continue
            raise reader.error(record)
        row = record.row
        try:
            value = job.to_input(row)
        except ValueError as err:
            raise JsonlError(reader.files[record.position.file], record.number, str(err)) from None
        line = row.get(job.line_field, record.number) if job.line_field else record.number
        item = {"shard": spec.index, "record": spec.first_record + offset, "line": line, "input": value}
        if reader.id_field and reader.id_field in row:
            item["id"] = row[reader.id_field]
        items.append(item)
    return items


def run_stages(stages: Sequence[Stage], items: list[dict]) -> list[dict]:
    """``items`` through every stage in turn."""
    for stage in stages:
        items = stage(items)
    return items


def chunked(items: Sequence, size: int) -> Iterator[Sequence]:
    """``items`` in consecutive slices of ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass
class JobResult:
    """What a job wrote: good rows, shards (those done by an earlier run among them), the bad records, where."""

    output: str
    rows: int
    shards: int
    shards_resumed: int
    bad_count: int
    bad: list[str]
    seconds: float
    dimension: int | None = None


class JobRun:
    """One run of a job: its plan, output directory and manifest, the shards still to do (``pending``), and
    the writing of each. An engine reads each pending shard (``read_shard``), runs the stages, and hands the
    items to ``write_shard``, in any order; ``finish`` merges a one-file output."""

    def __init__(self, job: Job, resume: bool = False, out: IO[str] | None = None):
        self.job, self.out, self.started = job, out, time.perf_counter()
        self.fresh = self.made_directory = False  # whether this run started the output (and made its directory)
        self.written = 0
        if job.output is None:
            if resume:
                raise UserError("--resume needs an --output to continue")
            self.directory, self.one_file, self.temporary = Path(tempfile.mkdtemp(prefix="mathgraph-job-")), True, True
        else:
            self.one_file = output_target(job.output)[0]
            self.directory = job.output.with_name(job.output.name + ".parts") if self.one_file else job.output
            self.temporary = False
        self.plan = plan_shards(job.reader, job.shard_size, job.skip_bad)
        if self.plan.rows == 0:
            files = ", ".join(map(str, job.reader.files))
            raise UserError(f"{files}: no good input rows ({self.plan.bad_count} bad rows skipped)")
        self.manifest = self._open_manifest(resume)
        done = {entry["index"] for entry in self.manifest["shards"] if entry.get("done")}
        self.pending = [spec for spec in self.plan.shards if spec.index not in done]
        self.resumed = len(self.plan.shards) - len(self.pending)

    # ----------------------------------------------------------------- manifest
    def _identity(self) -> dict:
        """What a resumed run must share with the run that started the output."""
        job = self.job
        return {
            "job": job.name,
            "settings": job.settings,
            "shard_size": job.shard_size,
            "skip_bad": job.skip_bad,
            "output": {"kind": job.writer.kind, "format": job.writer.format},
            "input": {
                "format": job.reader.format,
                "files": [{"path": str(p.resolve()), "bytes": _size(p)} for p in job.reader.files],
                "records": self.plan.records,
                "rows": self.plan.rows,
            },
        }

    def _open_manifest(self, resume: bool) -> dict:
        path = self.directory / MANIFEST_FILE
        identity = json.loads(json.dumps(self._identity()))  # as it reads back from JSON (tuples as lists)
        if path.exists():
            if not resume:
                raise UserError(
                    f"{self.directory} holds a job's output already: give --resume to finish it, or another --output"
                )
            manifest = read_manifest(self.directory)
            for key, value in identity.items():
                there = manifest.get(key)
                if key == "output" and isinstance(there, dict):
                    there = {name: there.get(name) for name in value}  # what the shards noted (the dimension) aside
                if there != value:
                    raise UserError(
                        f"cannot resume {self.directory}: its {key} differs ({json.dumps(there)} there, "
                        f"{json.dumps(value)} now)"
                    )
            for entry in manifest["shards"]:  # a shard whose files went missing is done again
                entry["done"] = entry.get("done", False) and all((self.directory / f).exists() for f in entry["files"])
            self._remove_temporaries()
            return manifest
        if self.directory.exists() and any(self.directory.iterdir()) and not self.temporary:
            raise UserError(f"{self.directory} exists and holds other files: give a new or empty --output directory")
        self.made_directory = not self.directory.exists()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.fresh = True
        manifest = {
            "format": MANIFEST_FORMAT,
            "format_version": MANIFEST_VERSION,
            **identity,
            "shards": [self._entry(spec) for spec in self.plan.shards],
            "bad": {"count": self.plan.bad_count, "first": self.plan.bad},
            "complete": False,
        }
        self._save(manifest)
        return manifest

    @staticmethod
    def _entry(spec: ShardSpec) -> dict:
        return {
            "index": spec.index,
            "records": spec.records,
            "rows": spec.rows,
            "lines": [spec.first_line, spec.last_line],
            "files": [],
            "done": False,
        }

    def _save(self, manifest: dict) -> None:
        with atomic_path(self.directory / MANIFEST_FILE) as temporary:
            temporary.write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")

    def _remove_temporaries(self) -> None:
        for leftover in self.directory.glob(".tmp-*"):  # a killed run's half-written files
            leftover.unlink()

    # ----------------------------------------------------------------- writing
    def write_shard(self, spec: ShardSpec, items: list[dict]) -> None:
        """Write shard ``spec``'s finished items (``job.writer.prepare``d, in record order) and mark it done in
        the manifest."""
        if len(items) != spec.rows:
            raise RuntimeError(f"shard {spec.index}: {len(items)} rows came back, {spec.rows} expected")
        files, notes = self.job.writer.write(self.directory, spec.index, items)
        entry = self.manifest["shards"][spec.index]
        entry.update(files=files, done=True, **notes)
        self.written += 1
        if "dimension" in notes:
            self.manifest["output"]["dimension"] = notes["dimension"]
        self._save(self.manifest)

    def finish(self) -> JobResult:
        """Mark the job complete, merge a one-file output, and say what was written."""
        missing = [entry["index"] for entry in self.manifest["shards"] if not entry["done"]]
        if missing:
            raise RuntimeError(f"shards {missing[:10]} were not written")
        self.manifest["complete"] = True
        self._save(self.manifest)
        target = str(self.directory)
        if self.one_file:
            files = [entry["files"] for entry in self.manifest["shards"]]
            output = None if self.temporary else self.job.output
            self.job.writer.merge(self.directory, files, output, out=self.out or sys.stdout)
            shutil.rmtree(self.directory)
            target = str(output) if output is not None else "stdout"
        return JobResult(
            output=target,
            rows=self.plan.rows,
            shards=len(self.plan.shards),
            shards_resumed=self.resumed,
            bad_count=self.plan.bad_count,
            bad=self.plan.bad,
            seconds=time.perf_counter() - self.started,
            dimension=self.manifest["output"].get("dimension"),
        )

    def close_unfinished(self) -> None:
        """After a failure: a temporary directory goes, and so does an output this run started and wrote no
        shard to (the model did not load, Ray had no room: nothing to resume); other outputs stay for
        ``--resume``."""
        if self.temporary or (self.fresh and self.written == 0):
            if self.made_directory or self.temporary:
                shutil.rmtree(self.directory, ignore_errors=True)
            else:
                (self.directory / MANIFEST_FILE).unlink(missing_ok=True)


def run_job(job: Job, resume: bool = False, show_progress: bool = False, out: IO[str] | None = None) -> JobResult:
    """Run ``job`` in this process (the local engine): each pending shard read, sent through the stages in
    chunks of ``job.chunk_rows`` items, and written; the stages load once, before the first pending shard."""
    run = JobRun(job, resume, out)
    try:
        if run.pending:
            for stage in job.stages:
                stage.load()
        with Progress(run, show_progress) as progress:
            for spec in run.pending:
                done = []
                for chunk in chunked(read_shard(job, spec), job.chunk_rows):
                    done.extend(job.writer.prepare(item) for item in run_stages(job.stages, list(chunk)))
                    progress.advance(len(chunk))
                run.write_shard(spec, done)
        return run.finish()
    except RowError as err:
        run.close_unfinished()
        raise UserError(f"{', '.join(map(str, job.reader.files))}: {err}") from None
    except BaseException:
        run.close_unfinished()
        raise
    finally:
        for stage in job.stages:
            if hasattr(stage, "close"):
                stage.close()


class Progress:
    """A progress bar over the rows of a run's pending shards (drawn only when ``show``), labelled with the
    job's ``progress`` word; it is drawn at N/N once, by ``close``, not once more by the last ``advance``."""

    def __init__(self, run: JobRun, show: bool):
        self.total = sum(spec.rows for spec in run.plan.shards)
        done = self.total - sum(spec.rows for spec in run.pending)
        label = run.job.progress or run.job.name
        self.bar = progress_bar(total=self.total, initial=done, unit="problem", desc=label, show=show)

    def advance(self, rows: int) -> None:
        """Count ``rows`` more rows done."""
        if self.bar.n + rows >= self.total:
            self.bar.n += rows
            self.bar.close()
        else:
            self.bar.update(rows)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.bar.close()


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


# --------------------------------------------------------------------- reading a job's output
def read_manifest(directory: str | PathLike) -> dict:
    """The manifest of a job's output directory; ``ValueError`` when there is none or it is another file's."""
    path = Path(directory) / MANIFEST_FILE
    if not path.exists():
        raise FileNotFoundError(f"{directory}: no {MANIFEST_FILE}; not the output directory of a mathgraph job")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise UserError(f"{path} is not valid JSON ({err.msg} at line {err.lineno})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise UserError(f"{path} is not a mathgraph job manifest")
    if manifest.get("format_version", 0) > MANIFEST_VERSION:
        raise UserError(f"{path} is of a newer format (version {manifest['format_version']}); upgrade mathgraph")
    return manifest


def is_job_directory(path: str | PathLike) -> bool:
    """Whether ``path`` is a directory holding a job manifest."""
    return (Path(path) / MANIFEST_FILE).is_file()


def finished_files(directory: str | PathLike, kind: str | None = None) -> list[list[Path]]:
    """The files of every shard of a finished job, in shard order (``job_outputs`` says what each is); a job
    not finished (or of another ``kind``) is a ``ValueError`` saying so."""
    manifest = read_manifest(directory)
    if kind is not None and manifest["output"]["kind"] != kind:
        raise UserError(f"{directory} holds {manifest['output']['kind']}, not {kind}")
    if not manifest.get("complete"):
        raise UserError(f"{directory} holds an unfinished {manifest['job']} job: run it again with --resume")
    return [[Path(directory) / name for name in entry["files"]] for entry in manifest["shards"]]


__all__ = [
    "Job",
    "Stage",
    "RowError",
    "FieldInput",
    "ShardSpec",
    "Plan",
    "JobRun",
    "JobResult",
    "plan_shards",
    "read_shard",
    "run_stages",
    "chunked",
    "run_job",
    "Progress",
    "read_manifest",
    "is_job_directory",
    "finished_files",
    "MANIFEST_FILE",
    "DEFAULT_SHARD_SIZE",
]
