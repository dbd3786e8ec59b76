"""What mathgraph lets through to its user's terminal: only what was asked for, and real warnings, once.

The helpers, scoped so that a user's own use of the libraries is left as it was:

* ``quiet_transformers()``, a context manager around the places where mathgraph
  has transformers load weights: inside it transformers says only errors and shows
  no progress bar of its own (the ``Loading weights`` bar of transformers 5, and
  its notices on what mathgraph does on purpose: a dropped pooler, new LaTeX token
  rows). The Hugging Face Hub's download bars are left alone: a download is real
  progress.
* ``warn(message)``, for mathgraph's own warnings: Python shows them at the user's
  line that called into mathgraph, not at a file inside the package, and once for
  that line;
* ``plain_warnings()``, for the ``mathgraph`` command: a Python warning prints as
  ``mathgraph: warning: MESSAGE``, without the source file and line that Python
  shows by default (a path inside the installed package means nothing to the
  user of a command);
* ``report(message)``, for what a command says it did ("wrote 5 graphs to
  out.jsonl"): a line on stderr when the ``mathgraph`` logger lets INFO through,
  which the command sets (``-q``: only warnings and errors);
* ``progress_bar(...)``, every progress bar of mathgraph: tqdm on stderr, drawn
  only when stderr is a terminal, so that a redirected stderr gets no bars.

Standard library and third-party imports only (the bottom layer of the packages).
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """Inside the block, only transformers' errors and none of its own progress bars; both settings are
    put back as they were on the way out (a no-op without transformers)."""
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:  # pragma: no cover - transformers is a dependency; keep the helper import-safe anyway
        yield
        return
    verbosity = transformers_logging.get_verbosity()
    bars = _transformers_bars(transformers_logging, False)
    transformers_logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers_logging.set_verbosity(verbosity)
        _transformers_bars(transformers_logging, bars)


def _transformers_bars(transformers_logging, enabled: bool) -> bool:
    """Turn transformers' own progress bars on or off; returns whether they were on. Its public switch
    (``disable_progress_bar``) also turns the Hub's download bars off for the whole process, and turning
    them on again warns when ``HF_HUB_DISABLE_PROGRESS_BARS`` is set: set transformers' flag alone when it is
    there (transformers 4.x and 5.x), else fall back to the public switch."""
    was = transformers_logging.is_progress_bar_enabled()
    if hasattr(transformers_logging, "_tqdm_active"):
        transformers_logging._tqdm_active = enabled
    elif enabled != was:  # pragma: no cover - a transformers without the flag
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (transformers_logging.enable_progress_bar if enabled else transformers_logging.disable_progress_bar)()
    return was


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` pointing at the user's line: the caller of the outermost mathgraph frame on the stack
    (a frame whose module is ``mathgraph`` or under it), whatever the depth of the call inside mathgraph, so
    that Python shows the user's file and line, not a path inside the package, and shows the warning once for
    that line. Without such a caller (a ``mathgraph`` command), the outermost frame."""
    frame, depth, outermost = sys._getframe(1), 1, 0
    while frame is not None:
        name = frame.f_globals.get("__name__") or ""
        if name == "mathgraph" or name.startswith("mathgraph."):
            outermost = depth
        frame, depth = frame.f_back, depth + 1
    # sys._getframe(d) is stacklevel d + 1 of a warnings.warn called here; the outermost frame's caller is d + 1
    warnings.warn(message, category, stacklevel=min(outermost + 2, depth))


def plain_warnings(prefix: str = "mathgraph") -> None:
    """Print each Python warning as ``PREFIX: warning: MESSAGE`` (a category other than ``UserWarning`` is
    named: ``PREFIX: warning (FutureWarning): MESSAGE``), with no file path or source line. For a
    command-line entry point: it replaces ``warnings.showwarning`` for the process. Python's filters still
    decide what shows and how often (by default each warning once per place that raises it)."""

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        stream = sys.stderr if file is None else file
        if stream is None:  # pythonw: nowhere to write
            return
        kind = "" if category is UserWarning else f" ({category.__name__})"
        try:
            stream.write(f"{prefix}: warning{kind}: {message}\n")
        except OSError:  # the stream went away (a closed pipe): a warning is not worth a crash
            pass

    warnings.showwarning = show


def report(message: str, level: int = logging.INFO) -> None:
    """Print ``message`` on stderr when the ``mathgraph`` logger is enabled for ``level``: what a command says it
    did (INFO, which ``mathgraph -q`` holds back), or a notice that stays under ``-q`` (WARNING). Printed as it
    is, with no logger name in front, on the stderr of the moment (a test's captured one too). A library user
    who has not configured logging sees only WARNING lines, as Python's logging does."""
    if logging.getLogger("mathgraph").isEnabledFor(level):
        print(message, file=sys.stderr, flush=True)


def progress_bar(iterable=None, *, show: bool = True, **options):
    """A tqdm bar on stderr, drawn only when stderr is a terminal (tqdm's ``disable=None``): a redirected stderr,
    a log file, gets no bars. ``show=False`` or ``TQDM_DISABLE`` (which ``mathgraph -q`` sets) hide it anyway:
    tqdm itself reads that variable only once, when it is imported, and only for an omitted ``disable``.
    ``options`` go to tqdm."""
    from tqdm import tqdm

    hidden = not show or os.environ.get("TQDM_DISABLE", "").strip().lower() not in ("", "0", "false")
    return tqdm(iterable, disable=True if hidden else None, **options)


__all__ = ["quiet_transformers", "warn", "plain_warnings", "report", "progress_bar"]
