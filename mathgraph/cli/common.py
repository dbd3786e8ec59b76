"""What several command groups share: reporting skipped lines, reading corpora, positionals after options."""

from __future__ import annotations

import argparse
import sys

from mathgraph.jsonl import read_corpora


def report_skipped(bad: list, limit: int = 20) -> None:
    """Tell stderr how many input lines ``--skip-bad`` left out, and the first ``limit`` of them."""
    if bad:
        print(f"skipped {len(bad)} bad lines:", file=sys.stderr)
        for error in bad[:limit]:
            print(f"  {error}", file=sys.stderr)
        if len(bad) > limit:
            print(f"  ... and {len(bad) - limit} more", file=sys.stderr)


def add_corpus_argument(parser: argparse.ArgumentParser, help: str) -> None:
    """``--corpus FILE[:FIELD]``, repeatable and required: the corpora ``corpus_texts`` reads."""
    parser.add_argument(
        "--corpus",
        action="append",
        required=True,
        metavar="FILE[:FIELD]",
        help=f"{help} (default field: problem); repeatable",
    )


def corpus_texts(specs: list[str]) -> list[str]:
    """The texts of every ``FILE[:FIELD]`` corpus (``mathgraph.jsonl.read_corpora``), saying on stderr how
    many each gave."""
    texts: list[str] = []
    for corpus in read_corpora(specs):
        texts.extend(corpus.texts)
        print(f"{corpus.path}: {len(corpus.records)} texts from field {corpus.field!r}", file=sys.stderr)
    return texts


class IntermixedArgumentParser(argparse.ArgumentParser):
    """A subcommand parser whose positionals may come after its options (``predict kpc --model DIR TEXT``):
    plain argparse gives a ``nargs="*"`` positional its share, none, where it meets the first positional."""

    def parse_known_args(self, args=None, namespace=None):
        if getattr(self, "_intermixing", False):  # parse_known_intermixed_args calls back here
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False
