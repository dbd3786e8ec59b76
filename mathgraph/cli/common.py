"""What several command groups share: reporting skipped lines, reading corpora, positionals after options, counts
that must be positive, and the checks of model options and input files that run before any model code is
imported."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from mathgraph.errors import UserError
from mathgraph.jsonl import corpus_spec, read_corpora
from mathgraph.quiet import report
from mathgraph.registry import ENCODER_NAMES, resolve
from mathgraph.samples import input_path, missing_file_hint


def at_least_one(text: str) -> int:
    """An argparse ``type`` for a count that must be 1 or more (a batch size, ``-k``, workers): ``0`` and ``-1``
    are usage errors the parser reports, not a traceback from deep inside a job."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, plural unless the count is one: ``counted(1, "graph")`` is ``"1 graph"``,
    ``counted(1200, "query", "queries")`` is ``"1,200 queries"``."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def report_skipped(bad: list, limit: int = 20) -> None:
    """Tell stderr how many input lines ``--skip-bad`` left out, and the first ``limit`` of them (a warning: it
    stays under ``-q``)."""
    if bad:
        lines = [f"skipped {counted(len(bad), 'bad line')}:", *(f"  {error}" for error in bad[:limit])]
        if len(bad) > limit:
            lines.append(f"  ... and {len(bad) - limit} more")
        report("\n".join(lines), logging.WARNING)


def add_corpus_argument(parser: argparse.ArgumentParser, help: str) -> None:
    """``--corpus FILE[:FIELD]``, repeatable and required: the corpora ``corpus_texts`` reads."""
    parser.add_argument(
        "--corpus",
        action="append",
        required=True,
        type=corpus_input,
        metavar="FILE[:FIELD]",
        help=f"{help} (default field: problem); repeatable",
    )


def corpus_input(spec: str) -> str:
    """A ``FILE[:FIELD]`` corpus whose FILE may name a bundled file (``mathgraph.samples.input_path``)."""
    path, field = corpus_spec(spec)
    resolved = input_path(path)
    return spec if resolved == path else f"{resolved}:{field}"


def corpus_texts(specs: list[str]) -> list[str]:
    """The texts of every ``FILE[:FIELD]`` corpus (``mathgraph.jsonl.read_corpora``), saying on stderr how
    many each gave. A corpus file that is missing or empty is an error naming it (``check_corpus_files``)."""
    check_corpus_files(specs)
    texts: list[str] = []
    for corpus in read_corpora(specs):
        texts.extend(corpus.texts)
        report(f"{corpus.path}: {len(corpus.records)} texts from field {corpus.field!r}")
    return texts


def check_corpus_files(specs: list[str]) -> None:
    """``check_input_file`` for the file of every ``FILE[:FIELD]`` corpus: missing or empty is an error naming it."""
    for spec in specs:
        check_input_file(corpus_spec(spec)[0], "--corpus")


class IntermixedArgumentParser(argparse.ArgumentParser):
    """A subcommand parser whose positionals may come after its options (``predict kpc --model DIR TEXT``):
    plain argparse gives a ``nargs="*"`` positional its share, none, where it meets the first positional.

    What follows ``--`` is positional, whatever it looks like (``compare -- "-x" "y"``): Python 3.11's
    intermixed parsing drops the ``--`` between its two passes and then reads ``-x`` as an option, so those
    arguments go through as stand-ins that cannot look like options and are put back afterwards."""

    def parse_known_args(self, args=None, namespace=None):
        if getattr(self, "_intermixing", False):  # parse_known_intermixed_args calls back here
            return super().parse_known_args(args, namespace)
        args = list(sys.argv[1:] if args is None else args)
        after = args.index("--") + 1 if "--" in args else len(args)
        stand_ins = {f"\0positional{i}": arg for i, arg in enumerate(args[after:])}
        self._intermixing = True
        try:
            parsed, extras = self.parse_known_intermixed_args([*args[:after], *stand_ins], namespace)
        finally:
            self._intermixing = False
        put_back = lambda value: stand_ins.get(value, value) if isinstance(value, str) else value  # noqa: E731
        for name, value in vars(parsed).items():
            setattr(parsed, name, [put_back(v) for v in value] if isinstance(value, list) else put_back(value))
        return parsed, [put_back(extra) for extra in extras]


NAMED_MODELS = ENCODER_NAMES  # the names an encoder option takes besides a model directory


def check_model_argument(value: str | None, option: str = "--model", names: tuple[str, ...] = ()) -> None:
    """Fail fast, before torch loads, on a model option that names no model (``mathgraph.registry.resolve``:
    the same names and the same message as ``mathgraph.load`` and the server). ``None`` (the option's
    default), one of ``names`` and ``text:PATH`` (a text-only encoder) pass."""
    if value is None or value in names or value.startswith("text:"):
        return
    try:
        resolve(value)
    except (FileNotFoundError, NotADirectoryError) as err:
        raise type(err)(f"{option}: {err}") from None


def check_index_argument(value: str | None, option: str = "--index") -> None:
    """Fail fast, before torch loads, on an index option that names no search index
    (``mathgraph.registry.resolve_index``): a missing directory is "no such index", a directory of something else
    says what it holds."""
    if value is None:
        return
    from mathgraph.registry import resolve_index

    try:
        resolve_index(value, check_type=True)
    except (FileNotFoundError, NotADirectoryError, ValueError) as err:
        raise type(err)(f"{option}: {err}") from None


def check_input_file(path: str | None, option: str = "--input") -> None:
    """Fail fast on an input file that does not exist, is a directory or is empty (no non-blank line)."""
    if path is None:
        return
    file = Path(path)
    if not file.exists():
        raise FileNotFoundError(f"{option} {path}: no such file{missing_file_hint(path)}")
    if file.is_dir():
        raise IsADirectoryError(f"{option} {path} is a directory, not a file")
    with open(file, encoding="utf-8", errors="replace") as f:  # bad bytes: the reader names their line
        if not any(line.strip() for line in f):
            raise UserError(f"{option} {path} is empty: no input lines")


def read_input_rows(
    path: str, fields: tuple[str, ...], skip_bad: bool = False, option: str = "--input", format: str | None = None
) -> tuple[list[tuple[int, dict]], list]:
    """The ``(number, row)`` of an input bank's good rows and its bad ones (JSONL, CSV, Parquet or a datasets
    directory, by ``format`` or the name: ``mathgraph.bank_files.read_bank_rows``; a bad row raises
    ``JsonlError`` naming file and line unless ``skip_bad``), read before any model loads. A file that is
    missing or empty, or whose every row ``--skip-bad`` left out, is an error naming it."""
    from mathgraph.bank_files import check_bank_input, read_bank_rows

    check_bank_input(path, format, option)
    rows, bad = read_bank_rows(path, fields, format=format, skip_bad=skip_bad)
    if not rows:
        raise UserError(f"{option} {path}: no good input lines ({len(bad)} bad lines skipped)")
    return rows, bad


RUNTIMES = ("torch", "onnx", "onnx-int8")  # models.package.RUNTIMES, without importing the models


def add_runtime_argument(parser: argparse.ArgumentParser) -> None:
    """``--runtime``: which runtime a model package's networks run on (``models.package.ModelPackage``)."""
    parser.add_argument(
        "--runtime",
        choices=RUNTIMES,
        help="onnx: ONNX Runtime, float32, the default on the CPU for a package that carries ONNX graphs (the "
        "shipped one does); onnx-int8: the same quantized to int8 on first use (faster, less exact); torch: "
        "PyTorch, the default with --device cuda and for other models",
    )


def configure_inference_threads(threads: int | None, single_input: bool) -> int:
    """Set torch's CPU threads for a prediction (``mathgraph.api.set_threads``): ``threads`` when given, one
    for a single input (one TEXT, one QUERY), else every core this process may use; returns the number set."""
    from mathgraph.api import set_threads

    return set_threads(threads, single_input=single_input)
