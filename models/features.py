"""Parse once, build tensors once: every distinct problem text of a run as ``ProblemFeatures``.

Graphs come from the graphs a caller passes in (``graphs``: a ``parsers.graph_cache.ParsedGraphs``, what a
prediction parsed), else from the on-disk graph cache (``parsers.graph_cache``), so a second run over the
same corpus parses nothing; a text-only model (``with_graphs=False``, the ``bert`` rows) parses nothing at
all. Each problem's token ids and graph tensors are then built once, and a batch is only padding and
concatenation.

A store also carries the alignment rows of its pairs (``alignment_rows``: a
``models.alignment_features.AlignmentRows``), those a pack holds or a prediction computed, for the
heads that read alignment features.

A key may also be a pair ``(text_a, text_b)``: a cross-encoder reads the two
problems as one input (``models.batching.pair_features``), built from the
stored features of each.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mathgraph.models.batching import ProblemBatch, ProblemCollator, ProblemFeatures, pair_features
from mathgraph.parsers.graph_cache import ParsedGraphs, parse_cached

PROGRESS_MIN_TEXTS = 128  # FeatureStore shows a parsing bar by default for more new texts than this

if TYPE_CHECKING:
    from mathgraph.models.alignment_features import AlignmentRows
    from mathgraph.models.encoder import MathEncoder


def graph_cache_option(value: str | None):
    """``--graph-cache`` (``default``, ``none`` or a file) as ``parse_cached``'s ``cache`` argument."""
    if value in (None, "none"):
        return False
    return True if value == "default" else value


class FeatureStore:
    """The ``ProblemFeatures`` of distinct problem texts (or ``(text_a, text_b)`` pairs read as one
    input); ``batch(texts)`` collates some of them.

    Args:
        collator: the encoder's ``ProblemCollator`` (tokenizer, vocabularies, max length).
        texts: the problems (duplicates are stored once).
        parser: dependency back end of the model's graphs.
        with_graphs: parse and build graph tensors (False: tokens only).
        graph_cache: ``parse_cached``'s ``cache`` argument.
        parse_workers: parser processes for the graphs not yet cached.
        show_progress: a parsing bar; None (the default) shows one for more than ``PROGRESS_MIN_TEXTS``.
        graphs: the graphs to build from (``ParsedGraphs``: those it keeps are taken as they are, the others
            parsed through its own cache, and ``graph_cache`` and ``parse_workers`` are not used); None: parse
            through ``graph_cache``.
        alignment_rows: the alignment rows of the store's pairs (``models.alignment_features.AlignmentRows``);
            None: ``TRAINING_ROWS``, the rows of this process's training run.
    """

    def __init__(
        self,
        collator: ProblemCollator,
        texts: Iterable[str],
        parser: str = "auto",
        with_graphs: bool = True,
        graph_cache=True,
        parse_workers: int = 1,
        show_progress: bool | None = None,
        graphs: ParsedGraphs | None = None,
        alignment_rows: AlignmentRows | None = None,
    ):
        self.collator, self.parser, self.with_graphs = collator, parser, with_graphs
        self.graph_cache, self.parse_workers, self.graphs = graph_cache, parse_workers, graphs
        self._alignment_rows = alignment_rows  # TRAINING_ROWS when first asked for (a KPC store never asks)
        self.index: dict[str | tuple[str, str], int] = {}
        self.features: list[ProblemFeatures] = []
        self.add(texts, show_progress)

    @property
    def alignment_rows(self) -> AlignmentRows:
        """The alignment rows of the store's pairs: those given, else ``TRAINING_ROWS``. Resolved when first
        asked for, so that a store of single problems never imports the alignment code."""
        self._alignment_rows = _rows_or_training(self._alignment_rows)
        return self._alignment_rows

    @classmethod
    def for_run(cls, encoder: MathEncoder, texts: Iterable[str], args, with_graphs: bool = True) -> FeatureStore:
        """The store of a training run: ``encoder``'s collator and parser, the run's graph cache and
        parser processes (``args.graph_cache``, ``args.parse_workers`` of a
        ``tasks.training.trainer.TrainingArguments``); with ``args.packed_features``, the problems packed
        there (``models.packed_features``), and nothing is parsed. Its alignment rows are ``TRAINING_ROWS``
        (``models.alignment_features``): an epoch after the first, or the dev pass, aligns nothing again."""
        from mathgraph.models.alignment_features import TRAINING_ROWS

        if getattr(args, "packed_features", None):
            return PackedFeatureStore(
                args.packed_features, encoder.collator, texts, with_graphs=with_graphs, alignment_rows=TRAINING_ROWS
            )
        return cls(
            encoder.collator,
            texts,
            parser=encoder.parser,
            with_graphs=with_graphs,
            graph_cache=graph_cache_option(args.graph_cache),
            parse_workers=args.parse_workers,
            alignment_rows=TRAINING_ROWS,
        )

    def add(self, texts: Iterable[str | tuple[str, str]], show_progress: bool | None = False) -> None:
        """Build the features of the texts (and pairs) not stored yet."""
        new = [t for t in dict.fromkeys(texts) if t not in self.index]
        pairs = [t for t in new if isinstance(t, tuple)]
        texts_needed = [t for t in new if isinstance(t, str)] + [x for pair in pairs for x in pair]
        self._add_texts([t for t in dict.fromkeys(texts_needed) if t not in self.index], show_progress)
        self.index.update((pair, len(self.features) + i) for i, pair in enumerate(pairs))
        self.features.extend(
            pair_features(self.features[self.index[a]], self.features[self.index[b]]) for a, b in pairs
        )

    def _add_texts(self, new: list[str], show_progress: bool | None) -> None:
        if not new:
            return
        if show_progress is None:  # a bar for the parsing of a training set, not for a handful of inputs
            show_progress = len(new) > PROGRESS_MIN_TEXTS
        if self.with_graphs and self.graphs is not None:
            built = self.collator.features(self.graphs.parse(new, parser=self.parser, show_progress=show_progress))
        elif self.with_graphs:
            graphs = parse_cached(
                new,
                parser=self.parser,
                cache=self.graph_cache,
                n_process=self.parse_workers,
                show_progress=show_progress,
            )
            built = self.collator.features(graphs)
        else:
            built = self.collator.text_features(new)
        self.index.update((text, len(self.features) + i) for i, text in enumerate(new))
        self.features.extend(built)

    def __len__(self) -> int:
        return len(self.features)

    def length(self, text: str | tuple[str, str]) -> int:
        """Tokens of a stored problem (or pair)."""
        return self.features[self.index[text]].length

    def batch(self, texts: Sequence[str | tuple[str, str]]) -> ProblemBatch:
        """A ``ProblemBatch`` of stored problems or pairs (``problem_ids`` = their positions in the store)."""
        ids = [self.index[t] for t in texts]
        return self.collator.collate([self.features[i] for i in ids], problem_ids=ids)


def _rows_or_training(rows: AlignmentRows | None) -> AlignmentRows:
    """``rows``, or ``TRAINING_ROWS`` (``models.alignment_features``) where none are given."""
    if rows is not None:
        return rows
    from mathgraph.models.alignment_features import TRAINING_ROWS

    return TRAINING_ROWS


class PackedFeatureStore(FeatureStore):
    """A ``FeatureStore`` read from a pack (``pack_features``): nothing is parsed or tokenized.

    ``add`` accepts the texts the pack holds (and pairs of them, built as ``FeatureStore`` builds them); any
    other text raises ``PackError``. Loading also puts the pack's alignment rows in ``alignment_rows``, so the
    pair heads read them without parsing.

    Args:
        directory: the pack.
        collator: the collator of the model that trains (its tokenizer and graph vocabularies must be the
            pack's: checked by fingerprint).
        texts: texts the run needs (checked now, so a missing one fails before training starts).
        with_graphs: ``False`` keeps the token ids only, as ``FeatureStore`` does for a text-only model.
        alignment_rows: where the pack's alignment rows go (None: ``TRAINING_ROWS``, as ``FeatureStore``).
    """

    def __init__(
        self,
        directory: str | Path,
        collator: ProblemCollator,
        texts: Iterable = (),
        with_graphs: bool = True,
        alignment_rows: AlignmentRows | None = None,
    ):
        from mathgraph.models.packed_features import read_alignment_rows, read_manifest, read_packed_problems

        self.directory = Path(directory)
        manifest = read_manifest(self.directory)
        self._check_fits(manifest, collator, with_graphs)
        self.collator, self.with_graphs, self.parser = collator, with_graphs, manifest["parser"]
        self.graph_cache, self.parse_workers, self.graphs = False, 1, None
        packed_texts, features = read_packed_problems(self.directory)
        if not with_graphs:
            features = [ProblemFeatures(f.input_ids) for f in features]
        self.index = {text: i for i, text in enumerate(packed_texts)}
        self.features = features
        self._alignment_rows = _rows_or_training(alignment_rows)
        self._alignment_rows.put_many(read_alignment_rows(self.directory))
        self.add(texts)

    def _check_fits(self, manifest: dict, collator: ProblemCollator, with_graphs: bool) -> None:
        from mathgraph.models.packed_features import PackError, tokenizer_fingerprint, vocabulary_fingerprint

        if manifest["tokenizer"] != tokenizer_fingerprint(collator.tokenizer):
            raise PackError(
                f"{self.directory}: packed with another tokenizer than this model's; pack the data again with "
                "this model (`mathgraph kit build --model ...`)"
            )
        if with_graphs and not manifest["with_graphs"]:
            raise PackError(f"{self.directory}: packed without graphs, and this model reads them")
        if with_graphs and manifest["graph_vocabulary"] != vocabulary_fingerprint(collator.vocab):
            raise PackError(f"{self.directory}: packed with other graph vocabularies than this model's")
        if manifest["max_length"] != collator.max_length:
            raise PackError(
                f"{self.directory}: packed for {manifest['max_length']} tokens, this model reads {collator.max_length}"
            )

    def _add_texts(self, new: list[str], show_progress: bool | None) -> None:
        from mathgraph.models.packed_features import PackError

        if new:
            shown = ", ".join(repr(t[:60]) for t in new[:3])
            raise PackError(
                f"{len(new)} text(s) are not in the pack {self.directory} (such as {shown}): pack the run's "
                "data with `mathgraph kit build`; a pack is never parsed into"
            )
