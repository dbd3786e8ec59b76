"""The ``mathgraph`` entry point: the top-level parser, the command groups under it, and error handling."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from collections.abc import Sequence

from mathgraph.cli import (
    check,
    compare,
    data,
    dedupe,
    encode,
    kit,
    parse,
    predict,
    refine,
    release,
    routes,
    search,
    serve,
    training,
)
from mathgraph.errors import UserError
from mathgraph.extras import EXTRAS, install_hint
from mathgraph.quiet import plain_warnings

# What a user can put right (an option, an input, a name): one line, the traceback only with -v.
USER_ERRORS = (UserError, FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError)

# What `pip install "mathgraph[train]"` adds: a command that needs one of them says so in one line.
TRAINING_LIBRARIES = frozenset(
    {"torch", "torch_geometric", "transformers", "accelerate", "stanza", "datasets", "sklearn", "scipy"}
)


def _extra_of(library: str) -> str | None:
    """The extra that installs ``library`` (an import name), or None where none does."""
    if library in TRAINING_LIBRARIES:
        return "train"
    return next((extra for extra, (module, _) in EXTRAS.items() if module == library), None)


# In the order `mathgraph --help` lists them.
COMMAND_GROUPS = (
    parse,
    encode,
    data,
    training,
    predict,
    compare,
    check,
    search,
    dedupe,
    refine,
    routes,
    serve,
    release,
    kit,
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mathgraph`` console script; returns the exit status (argparse's for ``--help``
    and usage errors, whose message it has printed; 2 for a user's mistake, a ``UserError`` or a file that is
    missing, in the way or of the wrong kind, printed as ``mathgraph: error: ...``, with its traceback before it
    under ``-v``; 1, silently, when the reader of its output closed the pipe). Any other exception is a bug in
    mathgraph: its traceback shows, ``-v`` or not."""
    try:
        args = build_argument_parser().parse_args(argv)
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else 2
    configure_output(args.quiet, args.verbose)
    if args.quiet:
        _quiet_libraries()
    try:
        return args.run(args)
    except USER_ERRORS as err:
        if args.verbose:
            traceback.print_exc()
        print(f"mathgraph: error: {err}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as err:
        extra = _extra_of((err.name or "").split(".")[0])
        if extra is None:
            raise
        if args.verbose:
            traceback.print_exc()
        print(
            f"mathgraph: error: {args.command} needs {err.name}, which comes with the {extra} extra: "
            f"{install_hint(extra)}",
            file=sys.stderr,
        )
        return 2
    except BrokenPipeError:
        # the reader of stdout left early (`mathgraph samples | head`): stop quietly, as Unix tools do; point
        # stdout at /dev/null so that Python's flush at exit does not raise again (the Python docs' recipe)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def build_argument_parser() -> argparse.ArgumentParser:
    """The ``mathgraph`` parser with every command group's commands (no model code is imported)."""
    parser = argparse.ArgumentParser(prog="mathgraph", description="Math problem understanding: parse, encode, train.")
    parser.add_argument("--version", action=_PrintVersion)
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on stderr")
    loudness.add_argument(
        "-v", "--verbose", action="store_true", help="also mathgraph's notes on stderr (graph cache hits, parser used)"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.register(commands)
    return parser


def configure_output(quiet: bool = False, verbose: bool = False) -> None:
    """What reaches stderr: mathgraph's own messages at INFO (``-q``: WARNING; ``-v``: DEBUG, its notes
    too), other libraries' from WARNING only (their INFO lines, such as matplotlib's "generated new
    fontManager" on a first run, are theirs to log, not ours to show), and Python warnings as one line
    ``mathgraph: warning: ...`` without the path of the file inside the package that raised them."""
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    logging.getLogger("mathgraph").setLevel(logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO)
    plain_warnings()


def _quiet_libraries() -> None:
    """``-q`` for the libraries too: transformers' notices and progress bars, and the progress bars of tqdm.

    Environment variables reach the libraries a command imports later (they read them on import);
    transformers, if already imported, is told directly."""
    os.environ["TRANSFORMERS_VERBOSITY"] = "error"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ["TQDM_DISABLE"] = "1"
    if "transformers" in sys.modules:
        from transformers.utils import logging as transformers_logging

        transformers_logging.set_verbosity_error()
        transformers_logging.disable_progress_bar()


class _PrintVersion(argparse.Action):
    """``--version``: print ``mathgraph VERSION`` (``mathgraph.__version__``) and exit."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help="print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from mathgraph import __version__

        print(f"mathgraph {__version__}")
        parser.exit()
