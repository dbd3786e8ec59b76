"""``MathEncoder``: math problems in, vectors out (COMUS text + graph encoder).

    encoder = MathEncoder.from_pretrained("shipped")        # or a directory from save_pretrained, or "org/name"
    vectors = encoder.encode(["Find $x$ if $2x+3=7$.", ...], batch_size=32)

``"shipped"`` (alias ``"default"``) is the shipped COMUS encoder: the packaged all-MiniLM-L6-v2 with the
LaTeX commands of MATH and GSM8K added as tokens, continually pre-trained (MLM, DTC,
TGCL) on MATH and GSM8K train texts (the encoder of the shipped package, ``models.package``; its model
card is ``mathgraph/data/shipped_model/MODEL_CARD.md``). Any package's name gives its encoder.

``"untrained"`` is the same architecture before any training: MiniLM with the
LaTeX tokens added, a GAT and memory layers initialised from a fixed seed, and the
node and relation vocabularies in ``mathgraph/data/untrained_model``. It is where
``mathgraph pretrain --model untrained`` starts for people who pre-train their own.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from contextlib import nullcontext
from importlib.resources import files
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from mathgraph.graph import GraphVocabulary, MathSyntaxGraph
from mathgraph.models.batching import ProblemBatch, ProblemCollator, encode_in_length_order
from mathgraph.models.comus import TOKENIZER_DIR, ComusModel, ComusOutput
from mathgraph.models.onnx_package import canonical_mode
from mathgraph.models.text_encoder import add_latex_tokens, load_text_encoder, quiet_transformers, set_split_digits
from mathgraph.registry import (
    ENCODER_NAMES,
    SHIPPED_NAMES,
    UNTRAINED,
    CheckpointError,
    describe,
    loader_of,
    model_type,
    resolve,
)

if TYPE_CHECKING:
    from mathgraph.parsers.graph_cache import GraphCache

logger = logging.getLogger("mathgraph")

UNTRAINED_MODEL_DIR = Path(str(files("mathgraph") / "data" / "untrained_model"))
LATEX_TOKENS_NAME = "latex_tokens.json"
DEFAULT_SEED = 0
SHIPPED = "shipped"
NAMED_MODELS = ENCODER_NAMES  # the names from_pretrained takes besides a directory


class MathEncoder:
    """A COMUS model with its tokenizer and graph vocabulary, for turning problems into vectors.

    The tokenizer is set up as the model's config says (``split_digits``: numbers cut
    into single digits), whatever it was loaded from, so training, evaluation,
    ``encode`` and search all tokenize as the saved model did.
    """

    def __init__(self, model: ComusModel, tokenizer, vocab: GraphVocabulary, max_length: int = 256):
        set_split_digits(tokenizer, model.config.split_digits)  # transformers 5 drops it from tokenizer.json
        self.model, self.tokenizer, self.vocab = model, tokenizer, vocab
        # what from_pretrained loaded it from (a name, a Hub id or an absolute path; None when built): an index
        # built with this encoder records it, so that SearchIndex.from_pretrained can load the encoder again
        self.name_or_path: str | None = None
        self.collator = ProblemCollator(tokenizer, vocab, max_length=max_length)

    # ------------------------------------------------------------- building
    @classmethod
    def from_pretrained(cls, path: str | PathLike = SHIPPED, device: str | torch.device | None = None) -> MathEncoder:
        """Load an encoder: ``"shipped"`` (alias ``"default"``) or any model package gives its encoder, a
        directory from ``save_pretrained`` (local or a Hugging Face Hub id, ``mathgraph.registry.resolve``)
        loads as saved, and ``"untrained"`` builds the untrained one. ``device``: ``None`` is CUDA when
        available, else the CPU."""
        if str(path) == UNTRAINED:
            encoder = cls.build(UNTRAINED_MODEL_DIR)
            encoder.name_or_path = UNTRAINED
            encoder.model.to(resolve_device(device)).eval()
            return encoder
        directory = resolve(path)
        kind = model_type(directory)
        if kind == "package":  # through the registry: the package module builds on this one
            encoder = loader_of(kind, directory).from_pretrained(directory, device=device).encoder
            encoder.name_or_path = SHIPPED if str(path) in SHIPPED_NAMES else str(directory.resolve())
            return encoder
        if kind not in ("comus", "task-model"):  # a task model holds its encoder's files
            raise CheckpointError(f"{path} holds {describe(kind)}, not an encoder")
        model = ComusModel.from_pretrained(directory)
        from transformers import AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(directory / TOKENIZER_DIR)
            vocab = GraphVocabulary.from_pretrained(directory)
        except (OSError, ValueError, json.JSONDecodeError) as err:
            raise CheckpointError(f"{directory}: cannot load the tokenizer or graph vocabularies: {err}") from err
        encoder = cls(model, tokenizer, vocab)
        encoder.name_or_path = str(Path(path).resolve()) if Path(path).is_dir() else str(path)
        encoder.model.to(resolve_device(device)).eval()
        return encoder

    @classmethod
    def build(
        cls,
        vocab_dir: str | PathLike = UNTRAINED_MODEL_DIR,
        text_encoder: str = "minilm",
        seed: int = DEFAULT_SEED,
        split_digits: bool = False,
        **config: object,
    ) -> MathEncoder:
        """A new COMUS encoder around ``text_encoder`` with the vocabularies in ``vocab_dir``.

        ``vocab_dir`` holds ``node_vocab.json``, ``relation_vocab.json`` and
        ``latex_tokens.json`` (written by ``mathgraph vocab``). New weights (GAT,
        memory, LaTeX token embeddings) come from ``seed``, so two builds are
        identical. ``split_digits=True`` makes the tokenizer cut numbers into single
        digits (Qwen-style; kept in ``config.json``). ``config`` overrides other
        ``ComusConfig`` fields (``fusion_layers=0``...).
        """
        vocab_dir = Path(vocab_dir)
        vocab = GraphVocabulary.from_pretrained(vocab_dir)
        with open(vocab_dir / LATEX_TOKENS_NAME, encoding="utf-8") as f:
            latex_tokens = json.load(f)
        text, tokenizer = load_text_encoder(text_encoder)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            add_latex_tokens(tokenizer, latex_tokens)
            with quiet_transformers():  # its notice on how new rows are initialised is not a problem
                text.resize_token_embeddings(len(tokenizer))
            config.setdefault("parser", _majority_parser(vocab))
            model = ComusModel.from_text_encoder(
                text,
                len(vocab.labels),
                len(vocab.relations),
                text_encoder=text_encoder,
                split_digits=split_digits,
                **config,
            )
        model.eval()  # as Hugging Face models come; training code switches to train()
        return cls(model, tokenizer, vocab)

    def save_pretrained(self, directory: str | PathLike) -> None:
        """Write model, tokenizer and vocabularies so that ``from_pretrained(directory)`` restores them."""
        self.model.save_pretrained(directory, tokenizer=self.tokenizer, vocab=self.vocab)

    # ------------------------------------------------------------- encoding
    @property
    def parser(self) -> str:
        """Dependency back end the model's node labels come from."""
        return self.model.config.parser

    def dimension(self, mode: str = "joint") -> int:
        """Length of the vectors ``encode`` returns in ``mode``."""
        sizes = {
            "joint": self.model.output_dim,
            "text": self.model.config.text_hidden,
            "graph": self.model.config.gat_hidden,
        }
        return sizes[canonical_mode(mode)]

    def parse(
        self,
        problems: Sequence[str | MathSyntaxGraph],
        show_progress: bool = False,
        cache: str | PathLike | GraphCache | bool | None = True,
    ) -> list[MathSyntaxGraph]:
        """Graphs for ``problems``: strings are parsed with the model's back end, graphs are kept
        (``parsers.graph_cache.graphs_for``; ``cache`` as ``parse_cached`` takes it)."""
        from mathgraph.parsers.graph_cache import graphs_for

        return graphs_for(problems, self.parser, show_progress=show_progress, cache=cache)

    @torch.inference_mode()
    def encode(
        self,
        problems: Sequence[str | MathSyntaxGraph],
        batch_size: int = 32,
        mode: str = "joint",
        device: str | torch.device | None = None,
        show_progress: bool | None = None,
    ) -> np.ndarray:
        """Vectors ``[len(problems), dimension(mode)]`` (float32) for problem texts or parsed graphs.

        ``mode``: ``"joint"`` (the joint vector ``[CLS] ; mean node``; ``"fused"`` is its old name; task heads
        read their own, ``models.pooling``), ``"text"`` (``[CLS]``) or ``"graph"`` (mean node).

        Which vectors for what: these vectors are features for classifiers and for ranking close variants (what
        the task heads and the alignment step learn on). For retrieval in a bank, use a contrastively trained
        sentence space: the sentence encoder this one started from, mean pooled (``load_embedder("text:minilm")``,
        which ``mathgraph index build --model shipped`` uses, ``tasks.search.embedders``). Continual pre-training
        wore that space down here (0.810 R@1 on paraphrases with the shipped encoder's text vectors in a
        7,473-problem bank, 1.000 with MiniLM's). Batches are formed from problems of
        similar length; the output keeps the input order. Runs on ``device``, by default
        the one the model is on, under autocast on CUDA (``cuda_autocast_dtype``), in float32 on the CPU.
        """
        mode = canonical_mode(mode)
        # without a device, stay where the model is (it was loaded there: serve --device cpu on a GPU machine)
        device = next(self.model.parameters()).device if device is None else torch.device(device)
        self.model.to(device).eval()

        def vectors_of(batch: ProblemBatch) -> np.ndarray:
            output = self.forward(batch.to(device))
            selected = {"joint": output.joint, "text": output.cls, "graph": output.mean_node}[mode]
            return selected.float().cpu().numpy()

        return encode_in_length_order(
            problems, self.parser, self.collator, batch_size, self.dimension(mode), vectors_of, show_progress
        )

    def forward(self, batch: ProblemBatch) -> ComusOutput:
        """Run the model on a collated batch, under autocast on CUDA."""
        with autocast_for(batch.input_ids.device):
            return self.model(**batch.as_model_inputs())


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None`` -> CUDA when available, else the CPU."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def cuda_autocast_dtype() -> torch.dtype:
    """bf16 on GPUs with bf16 units (Ampere and newer), fp16 on the others: T4 and V100 only emulate bf16,
    which ``is_bf16_supported()`` counts as support unless asked not to."""
    return torch.bfloat16 if torch.cuda.is_bf16_supported(including_emulation=False) else torch.float16


def autocast_for(device: torch.device):
    """Autocast on CUDA devices (``cuda_autocast_dtype``), nothing on the CPU."""
    if device.type != "cuda":
        return nullcontext()
    return torch.autocast("cuda", dtype=cuda_autocast_dtype())


def _majority_parser(vocab: GraphVocabulary) -> str:
    parsers = vocab.meta.get("parsers") or {"spacy": 1}
    return max(parsers, key=parsers.get)
