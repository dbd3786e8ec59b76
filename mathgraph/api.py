"""The front door: ``load`` any model mathgraph writes, and ``Predictor``, the one prediction pipeline.

    import mathgraph
    kpc = mathgraph.Predictor.from_pretrained("shipped", task="kpc")
    kpc.predict(["Find $x$ if $2x + 3 = 7$."])      # [{"label": ..., "probabilities": {...}}]
    package = mathgraph.load("shipped")              # the shipped ModelPackage: .encode(...), .predictor(task)
    model = mathgraph.load("runs/kpc")               # whatever the directory holds: a TaskModel here

A name is ``"shipped"`` (alias ``"default"``), a local directory, or a Hugging Face Hub id ``org/name``
(``mathgraph.registry.resolve``); what a directory holds is its ``config.json``'s ``model_type``
(``mathgraph.registry``).

Every prediction goes through ``Predictor`` (the pattern of transformers pipelines), in three steps:

1. ``preprocess``: each input checked once against the task (``check_inputs``), its problems parsed (or their
   graphs taken as passed in), and, for a model that reads them, the alignment features of its pairs;
2. ``forward``: the model's networks (a package's neural model and, fused in late, its TF-IDF model, each
   predicting apart), given the graphs and rows step 1 made as arguments (``predict(inputs, batch_size,
   graphs=ParsedGraphs, rows=AlignmentRows)``);
3. ``postprocess``: late fusion (``models.late_fusion``) and the label names (``mathgraph.labels``: QAM's 1/0
   as "matches"/"does not match").

``mathgraph predict``, ``evaluate``, ``compare``, the batch jobs (``tasks.jobs.stages.PredictStage``, locally
and in Ray actors) and the server predict through it, and nothing below it; so every entry point accepts and
refuses the same names and inputs with the same message. Nothing is cached behind a caller's back: a
``Predictor`` reads and writes the graph cache it is given (``graph_cache``: ``None``, a ``GraphCache``, a
path or ``True`` for the default file), one prediction's graphs and alignment rows live as long as it does and
reach the model as arguments, never through a variable of the module or the thread.

The imports of models and parsers stay inside the functions: importing this module loads no model code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import IO, TYPE_CHECKING

from mathgraph.labels import with_label_names
from mathgraph.registry import CheckpointError, describe, load, loader_of, model_type, resolve
from mathgraph.task_specs import check_candidates, task_spec

if TYPE_CHECKING:
    from mathgraph.batch_jobs import Job, JobResult

# what predicts a task, by model_type (a search index or an encoder predicts no task)
PREDICTING_TYPES = ("package", "task-model", "multi-task-model", "tfidf", "structure")


# ----------------------------------------------------------------------------- loading a task's model
def _predicting_model(name_or_dir: str | PathLike, hybrid: bool | None, device, runtime=None) -> tuple[str, object]:
    """``(model_type, loaded model)`` of a model that predicts tasks; anything else is refused here. ``runtime``
    (``"torch"``, ``"onnx"``, ``None`` for the package's default) applies to packages, the models that carry
    ONNX graphs."""
    directory = resolve(name_or_dir)
    type_name = model_type(directory)
    if hybrid and type_name != "package":
        raise CheckpointError(
            f"hybrid fusion needs a model package such as 'shipped'; {name_or_dir} holds {describe(type_name)}"
        )
    if type_name is None:
        raise CheckpointError(f"{name_or_dir} holds {describe(type_name)}")
    if type_name not in PREDICTING_TYPES:
        raise CheckpointError(f"{name_or_dir} holds {describe(type_name)}, which predicts no task")
    loader = loader_of(type_name, directory)
    if type_name == "package":
        return type_name, loader.from_pretrained(directory, device=device, runtime=runtime)
    if runtime not in (None, "torch"):
        raise CheckpointError(
            f"{name_or_dir} holds {describe(type_name)}; ONNX graphs come with model packages only: use --runtime torch"
        )
    return type_name, loader.from_pretrained(directory, device=device)


def task_predictor(
    task: str, name_or_dir: str | PathLike = "shipped", hybrid: bool | None = None, device=None, runtime=None
):
    """The model that predicts ``task`` from ``name_or_dir`` (each has ``predict(inputs, batch_size)``), what a
    ``Predictor`` runs in its forward step:

    - a package (``"shipped"``, an export, a Hub copy): its multi-task ``task`` head, fused with its TF-IDF and
      alignment models where dev said so (``hybrid=None``), always (``True``) or never (``False``);
    - a task model trained for ``task``, or the ``task`` head of a multi-task model;
    - a TF-IDF model or an alignment model of ``task``'s input shape.

    ``hybrid=True`` needs a package. ``device``: ``None`` is CUDA when available, else the CPU. ``runtime``:
    a package's neural models on ONNX Runtime (``"onnx"``, its default on the CPU where it carries graphs) or
    PyTorch (``"torch"``); ``models.package.ModelPackage``."""
    task = task_spec(task).name  # an unknown task fails here, before any loading
    type_name, model = _predicting_model(name_or_dir, hybrid, device, runtime)
    if type_name == "package":
        return model.predictor(task, hybrid=hybrid)
    if type_name == "multi-task-model":
        return model.for_task(task)
    if type_name == "tfidf":
        from mathgraph.models.tfidf import TfidfPredictor

        return TfidfPredictor(task, model)
    trained_for = model.config.task if type_name == "task-model" else model.task
    if trained_for != task:
        raise CheckpointError(f"{name_or_dir} holds {describe(type_name)} trained for {trained_for}, not {task}")
    return model


def task_predictors(
    name_or_dir: str | PathLike = "shipped", hybrid: bool | None = None, device=None, runtime=None
) -> dict:
    """``{task: model}`` of every task the model ``name_or_dir`` predicts: each head of a package or a multi-task
    model, a task model's or an alignment model's task. A TF-IDF model does not record which task it was
    trained for, so it is refused here (``task_predictor`` takes it with a task)."""
    if model_type(resolve(name_or_dir)) == "tfidf":
        raise CheckpointError(
            f"{name_or_dir} holds a TF-IDF model, which does not record its task: "
            "predict with `mathgraph predict TASK --model DIR`"
        )
    type_name, model = _predicting_model(name_or_dir, hybrid, device, runtime)
    if type_name == "package":
        return {task: model.predictor(task, hybrid=hybrid) for task in model.tasks}
    if type_name == "multi-task-model":
        return {task: model.for_task(task) for task in model.config.task_names}
    return {model.config.task if type_name == "task-model" else model.task: model}


def predictors(
    name_or_dir: str | PathLike = "shipped",
    hybrid: bool | None = None,
    device=None,
    runtime=None,
    graph_cache=None,
) -> dict[str, Predictor]:
    """``{task: Predictor}`` of every task the model ``name_or_dir`` predicts (what the server serves;
    ``task_predictors`` says which)."""
    parser = model_parser(name_or_dir)
    models = task_predictors(name_or_dir, hybrid=hybrid, device=device, runtime=runtime)
    return {task: Predictor(task, model, parser=parser, graph_cache=graph_cache) for task, model in models.items()}


def model_parser(name_or_dir: str | PathLike) -> str | None:
    """The dependency parser the graphs of the model ``name_or_dir`` come from, read from its config without
    loading it; ``None`` where it does not say (a TF-IDF model: then nothing is parsed for it)."""
    from mathgraph.tasks.jobs.stages import model_parser as parser_of

    return parser_of(name_or_dir)


# ----------------------------------------------------------------------------- inputs
def check_inputs(task: str, inputs: Sequence) -> list[tuple]:
    """The texts of each input of ``task``, checked (``models.task_io.check_input``): ``(text,)``,
    ``(text_a, text_b)`` or ``(query, (candidates...))``; an ``InputError`` (a ``UserError``) naming the input's
    position otherwise. Torch-free: a command checks its input with it before any model loads."""
    from mathgraph.models.task_io import check_input

    spec = task_spec(task)
    return [check_input(spec, item, position) for position, item in enumerate(inputs)]


def input_from_texts(task: str, texts: Sequence[str]) -> object:
    """One input of ``task`` from command-line TEXTs: KPC one text, QRC/QAM two (``text_a text_b``), SQR the
    query and then its candidates; an ``InputError`` for a count the task does not take."""
    from mathgraph.models.task_io import input_from_texts as from_texts

    return from_texts(task_spec(task), texts)


def texts_of(item) -> list[str]:
    """The texts of one task input: a text, a pair ``(text_a, text_b)`` or ``(query, candidates)``."""
    if isinstance(item, str):
        return [item]
    first, second = item
    return [first, *second] if isinstance(second, (list, tuple)) else [first, second]


def _pairs_of(item) -> list[tuple[str, str]]:
    """The aligned pairs of a pair or ranking input: ``(text_a, text_b)``, or the query with each candidate."""
    first, second = item
    return [(first, other) for other in second] if isinstance(second, (list, tuple)) else [(first, second)]


def _reads_alignments(model) -> bool:
    """Whether a part of ``model`` reads alignment features: an alignment model fused in late
    (``models.alignment_model``, which has ``aligned_with``) or a neural head trained with them."""
    parts = [model]
    while parts:
        part = parts.pop()
        parts += [getattr(part, side) for side in ("neural", "sparse") if hasattr(part, side)]  # late fusion
        config = getattr(part, "config", None)
        head = getattr(config, "task_type", None)  # a PyTorch head's task; an ONNX head's config names its features
        if hasattr(part, "aligned_with") or getattr(head, "alignment", False) or getattr(config, "alignment_names", ()):
            return True
    return False


# ----------------------------------------------------------------------------- the pipeline
@dataclass(frozen=True)
class PreparedInput:
    """One input after ``Predictor.preprocess``: the input, the graph of each of its texts, and the alignment
    rows of its pairs (empty where the model reads none). Inputs prepared apart (two requests to a server) go
    through one ``forward`` together."""

    input: object
    graphs: Mapping = field(default_factory=dict)  # text -> MathSyntaxGraph
    rows: Mapping = field(default_factory=dict)  # models.alignment_features.pair_key -> features


class Predictor:
    """Predictions of one task (``kpc``, ``qrc``, ``qam`` or ``sqr``) from a model, one result per input
    (see the module docstring for its three steps).

    Inputs: a list of problem texts (KPC), of ``(text_a, text_b)`` pairs (QRC, QAM) or of
    ``(query, [candidates])`` (SQR). Results: ``{"label", "probabilities"}`` per input (QAM also
    ``label_name``), or ``{"ranking", "scores"}`` for SQR. A lone input is refused: always a list in, a list
    out.

    Args:
        task: the task's name (``mathgraph.task_specs``); an unknown one is a ``UserError``.
        model: what predicts it (``task_predictor``), with ``predict(inputs, batch_size, graphs, rows)``
            (``graphs``: a ``parsers.graph_cache.ParsedGraphs``; ``rows``: a
            ``models.alignment_features.AlignmentRows``), or a late fusion of such models.
        parser: the dependency parser of the model's graphs (``model_parser``); ``None``: the model parses
            what it needs itself, in the forward step, still through ``graph_cache`` only.
        graph_cache: where parsed graphs are read and kept across predictions: ``None`` (nowhere: one
            prediction writes no file), an open ``parsers.graph_cache.GraphCache``, a path, or ``True`` (the
            default file, as a bank-scale job uses it).
    """

    def __init__(self, task: str, model, parser: str | None = None, graph_cache=None):
        self.task = task_spec(task).name
        self.model, self.parser, self.graph_cache = model, parser, graph_cache

    @classmethod
    def from_pretrained(
        cls,
        name_or_dir: str | PathLike = "shipped",
        task: str = "kpc",
        hybrid: bool | None = None,
        device=None,
        runtime: str | None = None,
        graph_cache=None,
    ) -> Predictor:
        """The predictor of ``task`` from ``name_or_dir`` (``task_predictor`` says what each model gives and
        what ``hybrid`` and ``runtime`` choose), its graphs parsed as the model's config says."""
        model = task_predictor(task, name_or_dir, hybrid=hybrid, device=device, runtime=runtime)
        return cls(task, model, parser=model_parser(name_or_dir), graph_cache=graph_cache)

    # -- the three steps
    def preprocess(self, inputs: Sequence, graphs: Mapping | None = None, alignments=None) -> list[PreparedInput]:
        """Check every input (``check_inputs``: before anything is parsed), parse its problems with the model's
        parser (``graphs``: ``{text: graph}`` already parsed, taken as they are) and compute the alignment rows
        of its pairs where the model reads them (``alignments``: ``{(text_a, text_b): alignment}`` of problem
        pairs aligned already, ``parsers.compare.align_problems``: not aligned again)."""
        if isinstance(inputs, (str, tuple)):
            raise TypeError(f"predict takes a list of {self.task} inputs; wrap a single input in a list")
        inputs = list(inputs)
        check_inputs(self.task, inputs)
        if not inputs:
            return []
        from mathgraph.parsers.graph_cache import ParsedGraphs

        parsed, texts = ParsedGraphs(self.graph_cache), list(dict.fromkeys(t for i in inputs for t in texts_of(i)))
        text_graphs: dict = {}
        if self.parser is not None:
            given = {t: graphs[t] for t in texts if t in graphs} if graphs else {}
            if given:
                parsed.add(list(given), list(given.values()), parser=self.parser)
            missing = [t for t in texts if t not in given]
            text_graphs = {**given, **dict(zip(missing, parsed.parse(missing, parser=self.parser)))}
        rows_of: dict = {}
        found: dict = {}
        if task_spec(self.task).input_shape != "single" and _reads_alignments(self.model):
            from mathgraph.models.alignment_features import AlignmentRows, alignment_rows, pair_key
            from mathgraph.models.task_io import aligned_with

            against = aligned_with(self.task)
            pairs = list(dict.fromkeys(pair for item in inputs for pair in _pairs_of(item)))
            rows = AlignmentRows(limit=len(pairs) + len(alignments or {}))
            if alignments and against == "problem":
                rows.remember_alignments(list(alignments), list(alignments.values()))
            alignment_rows(against, pairs, rows=rows, parse=parsed.parse)  # the problems just parsed: none again
            rows_of = {pair: pair_key(against, *pair) for pair in pairs}
            found = rows.get_many(list(rows_of.values()))
        return [
            PreparedInput(
                item,
                {t: text_graphs[t] for t in texts_of(item) if t in text_graphs},
                {rows_of[p]: found[rows_of[p]] for p in _pairs_of(item)} if rows_of else {},
            )
            for item in inputs
        ]

    def forward(self, prepared: Sequence[PreparedInput], batch_size: int = 32) -> list:
        """The model's raw results of prepared inputs, in order: one result each, or ``(neural, sparse)`` for
        a late-fused model, whose parts predict apart (``postprocess`` fuses them). The graphs and alignment
        rows of ``prepared`` are passed to the model (``graphs=``, ``rows=``; ``None`` for a task of single
        problems): it parses nothing they hold."""
        if not prepared:
            return []
        from mathgraph.parsers.graph_cache import ParsedGraphs

        graphs = {t: g for p in prepared for t, g in p.graphs.items()}
        parsed = ParsedGraphs(self.graph_cache, limit=max(1, len(graphs)))
        if graphs:
            parsed.add(list(graphs), list(graphs.values()), parser=self.parser)
        rows = None  # a task of single problems has no pairs to align (and needs no alignment module imported)
        if task_spec(self.task).input_shape != "single":
            from mathgraph.models.alignment_features import AlignmentRows

            rows = AlignmentRows(limit=max(1, sum(len(p.rows) for p in prepared)))
            rows.put_many({key: row for p in prepared for key, row in p.rows.items()})
        inputs = [p.input for p in prepared]
        if _is_late_fusion(self.model):
            neural = _model_results(self.model.neural, inputs, batch_size, parsed, rows)
            sparse = _model_results(self.model.sparse, inputs, batch_size, parsed, rows)
            return list(zip(neural, sparse, strict=True))
        return _model_results(self.model, inputs, batch_size, parsed, rows)

    def postprocess(self, raw: Sequence) -> list[dict]:
        """Results from ``forward``'s raw ones: a late-fused model's two parts fused with its weight, then the
        label names added (``mathgraph.labels.with_label_names``)."""
        if _is_late_fusion(self.model):
            from mathgraph.models.late_fusion import fuse

            raw = [fuse(neural, sparse, self.model.weight) for neural, sparse in raw]
        return with_label_names(self.task, raw)

    def predict(
        self, inputs: Sequence, batch_size: int = 32, graphs: Mapping | None = None, alignments=None
    ) -> list[dict]:
        """One result per input, in input order (see the class docstring): ``preprocess``, ``forward`` and
        ``postprocess``. ``graphs``: ``{text: graph}`` parsed already (a job's parse stage); ``alignments``:
        ``{(text_a, text_b): alignment}`` of pairs aligned already (``compare``)."""
        prepared = self.preprocess(inputs, graphs=graphs, alignments=alignments)
        return self.postprocess(self.forward(prepared, batch_size=batch_size))

    @property
    def late_fusion(self) -> bool:
        """Whether the model fuses a neural and a TF-IDF model in late."""
        return _is_late_fusion(self.model)

    @property
    def config(self):
        """The model's config where it has one (a task model's text and label fields), else None."""
        return getattr(self.model, "config", None)

    def __repr__(self) -> str:
        return f"Predictor(task={self.task!r}, model={type(self.model).__name__})"


def _is_late_fusion(model) -> bool:
    return all(hasattr(model, name) for name in ("neural", "sparse", "weight"))


def _model_results(model, inputs: list, batch_size: int, graphs, rows) -> list:
    """``model``'s results of ``inputs``, given the prediction's ``graphs`` and alignment ``rows``; a late fusion
    nested in a part (a package's TF-IDF, then its alignment model) fused as ``models.late_fusion`` fuses."""
    if _is_late_fusion(model):
        from mathgraph.models.late_fusion import fuse

        neural = _model_results(model.neural, inputs, batch_size, graphs, rows)
        sparse = _model_results(model.sparse, inputs, batch_size, graphs, rows)
        return [fuse(n, s, model.weight) for n, s in zip(neural, sparse, strict=True)]
    return list(model.predict(inputs, batch_size=batch_size, graphs=graphs, rows=rows))


# ----------------------------------------------------------------------------- what the commands run
def evaluate(
    name_or_dir: str | PathLike,
    task: str,
    data_path: str | PathLike,
    text_field: str | None = None,
    label_field: str | None = None,
    batch_size: int = 32,
    hybrid: bool | None = None,
    device=None,
    runtime=None,
    graph_cache=True,
) -> dict:
    """Metrics of the model ``name_or_dir`` on a task file (accuracy and macro-F1, or HR/NDCG at 1, 3, 5 and
    MAP for SQR), predicted by ``Predictor``. KPC's text and label fields default to those the model was
    trained with (else ``problem`` and ``subject``). ``graph_cache``: where the file's graphs are kept
    (default: the default cache file, so that a test set is parsed once across models and runs).

    Gold labels the model cannot predict (never seen in training) are counted in ``unseen_labels``
    (``{label: examples}``) and warned about, never passed over in silence."""
    import warnings
    from collections import Counter

    from mathgraph.tasks.task_types import get_task

    predictor = Predictor.from_pretrained(
        name_or_dir, task, hybrid=hybrid, device=device, runtime=runtime, graph_cache=graph_cache
    )
    config = predictor.config
    data_task = get_task(task)
    examples = data_task.load(
        str(data_path),
        text_field or getattr(config, "text_field", None) or "problem",
        label_field or getattr(config, "label_field", None) or "subject",
    )
    results = predictor.predict([_example_input(example) for example in examples], batch_size=batch_size)
    if not data_task.classifies:
        return data_task.metrics(examples, [result["scores"] for result in results])
    metrics = data_task.metrics(examples, [result["label"] for result in results])
    known = {str(label) for label in results[0]["probabilities"]} if results else set()
    unseen = Counter(str(e.label) for e in examples if str(e.label) not in known)
    if unseen:
        metrics["unseen_labels"] = dict(sorted(unseen.items()))
        warnings.warn(
            f"{data_path}: {sum(unseen.values())} examples have labels the model never saw in "
            f"training, so it cannot get them right: {dict(sorted(unseen.items()))}",
            stacklevel=2,
        )
    return metrics


def _example_input(example):
    """What ``predict`` takes for a task-file example: its text, its pair, or its query and candidates."""
    if hasattr(example, "query"):
        return example.query, list(example.candidates)
    if hasattr(example, "text_a"):
        return example.text_a, example.text_b
    return example.text


def compare(
    pairs: Sequence[tuple[str, str]],
    solution: bool = False,
    predictor: Predictor | None = None,
    batch_size: int = 32,
    graph_cache=None,
    show_progress: bool = False,
) -> list[dict]:
    """``{"alignment", "relation"}`` of each ``(text_a, text_b)`` pair: ``align_problems(a, b).to_dict()`` and
    the relation (``parsers.compare.compared_relations``: ``"same problem"`` for the same problem, else the QRC
    ``predictor``'s ``{label, probabilities}`` (a ``Predictor``, or a model it wraps); None without one), or,
    with ``solution``,
    ``align_solution(a, b).to_dict()`` and no relation.

    Each problem is parsed once (through ``graph_cache``: ``None`` writes no file) and each pair aligned once:
    the predictor reads those graphs and alignment rows, and predicts every pair but the same problems in one
    call."""
    from mathgraph.parsers.compare import align_problems, compared_relations
    from mathgraph.parsers.graph_cache import ParsedGraphs
    from mathgraph.parsers.solution import align_solution

    pairs = [tuple(pair) for pair in pairs]
    parsed = ParsedGraphs(graph_cache)
    texts = [a for a, _ in pairs] if solution else [text for pair in pairs for text in pair]
    graphs_of = dict(zip(texts, parsed.parse(texts, show_progress=show_progress)))  # a solution is read as text
    if solution:
        alignments = [align_solution(graphs_of[a], b) for a, b in pairs]
    else:
        alignments = [align_problems(graphs_of[a], graphs_of[b]) for a, b in pairs]
    relations = [None] * len(pairs)
    if predictor is not None and pairs and not solution:
        if not isinstance(predictor, Predictor):  # a model with predict(inputs, batch_size): QRC's
            predictor = Predictor("qrc", predictor, graph_cache=graph_cache)
        aligned = dict(zip(pairs, alignments))
        graphs = None
        if predictor.parser is not None:  # the problems as the model's parser reads them: those aligned, if the same
            texts = list(dict.fromkeys(t for pair in pairs for t in pair))
            graphs = dict(zip(texts, parsed.parse(texts, parser=predictor.parser)))
        relations = compared_relations(
            alignments,
            pairs,
            lambda asked: predictor.predict(asked, batch_size=batch_size, graphs=graphs, alignments=aligned),
        )
    return [{"alignment": a.to_dict(), "relation": relation} for a, relation in zip(alignments, relations)]


def describe_relation(alignment: dict, relation: dict | None) -> list[str]:
    """The relation of a comparison in words (``parsers.compare.describe_relation``), for ``compare``'s output."""
    from mathgraph.parsers.compare import describe_relation as in_words

    return in_words(alignment, relation)


def prediction_job(
    task: str,
    input_path: str | PathLike,
    output: str | PathLike | None,
    model: str = "shipped",
    hybrid: bool | None = None,
    text_field: str = "problem",
    id_field: str = "id",
    input_format: str | None = None,
    output_format: str = "jsonl",
    batch_size: int = 32,
    device: str | None = None,
    threads: int | None = None,
    runtime: str | None = None,
    skip_bad: bool = False,
    shard_size: int | None = None,
) -> Job:
    """The batch job of ``mathgraph predict TASK --input BANK`` (``mathgraph.batch_jobs``): it reads the bank's
    rows in the task's file format (KPC ``{TEXT_FIELD: text}``, QRC/QAM ``{"text_a", "text_b"}``, SQR
    ``{"query", "candidates"}``), parses their problems in a stage of their own (Ray: CPU tasks) through the
    default graph cache, as bank-scale commands do, then predicts them in ``PredictStage`` with a
    ``Predictor`` loaded once per process (Ray: per actor), which takes the parsed graphs with the items. It
    writes one row per good input row, in input order: the row's ``id`` (when it has one), its ``line`` and
    the result's fields. Nothing here imports torch: a bad input fails before any model loads."""
    from functools import partial

    from mathgraph.bank_files import BankReader
    from mathgraph.batch_jobs import DEFAULT_SHARD_SIZE, Job
    from mathgraph.job_outputs import PredictionShards
    from mathgraph.tasks.jobs.stages import ParseStage, PredictStage, TaskRowInput

    spec = task_spec(task)
    reader = BankReader.open(
        input_path,
        input_format,
        fields=spec.input_fields(text_field),
        id_field=id_field,
        keep=("candidates",) if spec.input_shape == "ranker" else (),
        check=check_candidates if spec.input_shape == "ranker" else None,
    )
    parser = model_parser(model)
    parse = [ParseStage(parser=parser, cache=True)] if parser else []
    load = partial(Predictor.from_pretrained, model, task, hybrid=hybrid, runtime=runtime, graph_cache=True)
    predict = PredictStage(load, batch_size=batch_size, device=device, threads=threads)
    return Job(
        name=f"predict {task}",
        progress="predicting",
        reader=reader,
        to_input=TaskRowInput(spec.input_shape, text_field),
        writer=PredictionShards(output_format),
        output=None if output is None else Path(output),
        stages=[*parse, predict],
        settings={
            "task": task,
            "model": _model_setting(model),
            "hybrid": hybrid,
            "text_field": text_field,
            "id_field": id_field,
        },
        shard_size=shard_size or DEFAULT_SHARD_SIZE,
        skip_bad=skip_bad,
    )


def encoding_job(
    input_path: str | PathLike | None,
    output: str | PathLike,
    graphs=None,
    graphs_path: str | PathLike | None = None,
    model: str = "shipped",
    mode: str = "joint",
    text_field: str = "problem",
    id_field: str = "id",
    input_format: str | None = None,
    output_format: str = "jsonl",
    merged_format: str | None = None,
    batch_size: int = 32,
    device: str | None = None,
    threads: int | None = None,
    runtime: str | None = None,
    shard_size: int | None = None,
) -> Job:
    """The batch job of ``mathgraph encode``: the vectors (``mode``) of a bank's problems, parsed in a stage of
    their own through the default graph cache where the model names its parser, or of the graphs of
    ``mathgraph parse --output`` (``graphs``: their ``BankReader``, read from ``graphs_path``). Vector shards
    in ``output_format``, merged into one file of ``merged_format`` where given (``job_outputs.VectorShards``)."""
    from mathgraph.bank_files import BankReader
    from mathgraph.batch_jobs import DEFAULT_SHARD_SIZE, FieldInput, Job
    from mathgraph.job_outputs import VectorShards
    from mathgraph.tasks.jobs.stages import EncodeStage, GraphInput, ParseStage

    encode = EncodeStage(model=model, mode=mode, batch_size=batch_size, device=device, threads=threads, runtime=runtime)
    settings = {"model": _model_setting(model), "mode": mode, "id_field": id_field}
    if graphs is not None:
        reader, to_input, stages, line_field = graphs, GraphInput(), [encode], "line"
        settings["graphs"] = str(Path(graphs_path).resolve())
    else:
        reader = BankReader.open(input_path, input_format, fields=(text_field,), id_field=id_field)
        to_input, line_field = FieldInput(text_field), None
        parser = model_parser(model)
        # parse in a stage of its own (Ray: CPU tasks beside the model actors), through the graph cache as
        # MathEncoder.encode does; a model that does not name its parser parses in the encode stage
        stages = [ParseStage(parser=parser, cache=True), encode] if parser else [encode]
        settings["text_field"] = text_field
    return Job(
        name="encode",
        progress="encoding",
        reader=reader,
        to_input=to_input,
        writer=VectorShards(output_format, merged=merged_format),
        output=Path(output),
        stages=stages,
        settings=settings,
        shard_size=shard_size or DEFAULT_SHARD_SIZE,
        line_field=line_field,
    )


def _model_setting(model: str) -> str:
    """The model as a job's manifest records it: a directory by its absolute path, a name as it is."""
    return str(Path(model).resolve()) if Path(model).is_dir() else model


def check_engine(engine: str) -> None:
    """A clear error for an engine that cannot run here (``"ray"`` without Ray Data installed)."""
    if engine == "ray":
        from mathgraph.tasks.jobs.ray_engine import require_ray

        require_ray()


def run_batch_job(
    job: Job,
    engine: str = "local",
    resume: bool = False,
    show_progress: bool = False,
    out: IO[str] | None = None,
    **ray_options,
) -> JobResult:
    """Run a batch job in this process (``batch_jobs.run_job``) or on Ray (``engine="ray"``:
    ``tasks.jobs.ray_engine.run_job_on_ray`` with ``ray_options``: address, workers, cpus_per_worker,
    gpus_per_worker, verbose)."""
    if engine == "ray":
        from mathgraph.tasks.jobs.ray_engine import run_job_on_ray

        return run_job_on_ray(job, resume=resume, show_progress=show_progress, out=out, **ray_options)
    from mathgraph.batch_jobs import run_job

    return run_job(job, resume=resume, show_progress=show_progress, out=out)


def set_threads(threads: int | None = None, single_input: bool = False) -> int:
    """Set torch's CPU threads for model work: ``threads`` when given, one for a single input (one TEXT, one
    QUERY), else every core this process may use (``models.threads``); returns the number set.

    One input is a few milliseconds of small matrix products that a second thread barely shortens, while on
    a machine whose cores are busy (a training run beside it) each parallel region waits for a core to be
    free: one problem took 2 s with two threads and 0.06 s with one on a 2-core machine under load."""
    from mathgraph.models.threads import configure_threads

    return configure_threads(threads or (1 if single_input else None))


def available_cores() -> int:
    """The CPU cores this process may use (``models.threads.available_cores``)."""
    from mathgraph.models.threads import available_cores as cores

    return cores()


def load_encoder(name_or_dir: str | PathLike = "shipped", device=None, runtime: str | None = None):
    """The encoder of ``mathgraph encode --model``: a package's on ONNX Runtime where ``runtime`` (or the
    package's default) says so (``models.package.onnx_encoder``), else a ``MathEncoder``."""
    from mathgraph.models.package import onnx_encoder

    encoder = onnx_encoder(name_or_dir, device, runtime)
    if encoder is not None:
        return encoder
    from mathgraph.models.encoder import MathEncoder

    return MathEncoder.from_pretrained(name_or_dir, device=device)


__all__ = [
    "load",
    "resolve",
    "Predictor",
    "PreparedInput",
    "evaluate",
    "compare",
    "describe_relation",
    "check_inputs",
    "input_from_texts",
    "texts_of",
    "predictors",
    "model_parser",
    "prediction_job",
    "encoding_job",
    "run_batch_job",
    "check_engine",
    "set_threads",
    "available_cores",
    "load_encoder",
    "task_predictor",
    "task_predictors",
    "PREDICTING_TYPES",
]
