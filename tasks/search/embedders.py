"""Encoders as a search index sees them: ``Embedder``, anything with ``encode(texts, batch_size=...)`` and
``identity()`` (what made the vectors: an index refuses queries from another encoder).

``as_embedder`` wraps a ``MathEncoder`` (``MathEncoderEmbedder``); ``TextEmbedder`` is a text-only Hugging
Face encoder (mean pooling) for comparison; ``load_embedder`` makes either from a command-line spec.
"""

from __future__ import annotations

import hashlib
import sys
from os import PathLike
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from mathgraph.checksums import file_sha256
from mathgraph.errors import UserError


@runtime_checkable
class Embedder(Protocol):
    """What an index needs from an encoder: vectors for texts, and a stable identity (a JSON-able dict
    with at least ``kind``, ``weights_sha256``, ``mode`` and ``dimension``)."""

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Vectors ``[len(texts), dimension]``, one per text, in order."""

    def identity(self) -> dict:
        """Who made the vectors: changes whenever the vectors would."""


class MathEncoderEmbedder:
    """A ``models.encoder.MathEncoder`` as an ``Embedder``, with ``mode`` ``"joint"``, ``"text"`` or ``"graph"``."""

    def __init__(self, encoder, mode: str = "joint", source: str | None = None):
        from mathgraph.models.onnx_package import canonical_mode

        self.encoder, self.mode = encoder, canonical_mode(mode)
        self.source = source or getattr(encoder, "name_or_path", None)  # where it can be loaded from again
        self._identity: dict | None = None

    def encode(self, texts: list[str], batch_size: int = 32, show_progress: bool | None = None) -> np.ndarray:
        """Vectors of the problems ``texts`` (parsed into graphs on the way); ``show_progress``: the parsing and
        encoding bars of ``MathEncoder.encode`` (None: for more than a few batches)."""
        return self.encoder.encode(list(texts), batch_size=batch_size, mode=self.mode, show_progress=show_progress)

    def identity(self) -> dict:
        """Kind, weights hash (of the tensors, so it holds for unsaved models too), mode, dimension, parser
        (and ``split_digits`` when the model's tokenizer splits numbers into digits)."""
        if self._identity is None:  # hashing ~100 MB of weights once is enough
            self._identity = {
                "kind": "mathgraph.MathEncoder",
                "weights_sha256": state_dict_sha256(self.encoder.model),
                "mode": self.mode,
                "dimension": self.encoder.dimension(self.mode),
                "parser": self.encoder.parser,
                "vocab_size": len(self.encoder.tokenizer),
                "source": self.source,
            }
            if self.encoder.model.config.split_digits:  # same weights, other tokens: other vectors
                self._identity["split_digits"] = True
        return self._identity


class TextEmbedder:
    """A text-only Hugging Face encoder (``AutoModel``), mean-pooled over tokens: ``"minilm"`` is the packaged
    all-MiniLM-L6-v2. Formulas are read as plain text; useful as a baseline next to ``MathEncoder``."""

    def __init__(self, path: str | PathLike = "minilm", max_length: int = 256, device: str | None = None):
        import torch
        from transformers import AutoModel, AutoTokenizer

        from mathgraph.models.text_encoder import resolve_text_encoder
        from mathgraph.quiet import quiet_transformers

        resolved = resolve_text_encoder(str(path))
        self.directory = Path(resolved) if Path(resolved).is_dir() else None
        self.tokenizer = AutoTokenizer.from_pretrained(resolved)
        with quiet_transformers():  # no weight-loading bar or notices from transformers
            self.model = AutoModel.from_pretrained(resolved).eval()
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model.to(self.device)
        local = Path(path)
        self.max_length = max_length
        self.source = f"text:{local.resolve() if local.exists() else path}"
        self._identity: dict | None = None

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Mean of the last hidden states over the non-padding tokens, float32."""
        import torch

        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        out = []
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                batch = self.tokenizer(
                    list(texts[start : start + batch_size]),
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self.device)
                hidden = self.model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                out.append(((hidden * mask).sum(1) / mask.sum(1).clamp(min=1)).float().cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, self.model.config.hidden_size), dtype=np.float32)

    def identity(self) -> dict:
        """Kind, weights hash, pooling, dimension. The hash is of the checkpoint files, not of the loaded tensors:
        AutoModel adds layers the checkpoint lacks (BERT's pooler) with new random weights at every load."""
        if self._identity is None:
            weights = files_sha256(self.directory) if self.directory is not None else state_dict_sha256(self.model)
            self._identity = {
                "kind": "transformers.AutoModel",
                "weights_sha256": weights,
                "mode": "mean",
                "dimension": int(self.model.config.hidden_size),
                "vocab_size": len(self.tokenizer),
                "source": self.source,
            }
        return self._identity


class OnnxTextEmbedder:
    """The packaged all-MiniLM-L6-v2 (``TextEmbedder("minilm")``) under ONNX Runtime: the text graph of a model
    package (``models.onnx_export``) with MiniLM's own weights, tokenized by the ``tokenizers`` library. Its
    vectors are ``TextEmbedder``'s within 1e-4 and its identity is the same, so an index built by either is
    searched by either."""

    def __init__(self, package, max_length: int = 256):
        from tokenizers import Tokenizer

        from mathgraph.models.onnx_forward import minilm_directory

        self.package, self.max_length = package, max_length
        self.directory = minilm_directory()
        self.tokenizer = Tokenizer.from_file(str(self.directory / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length)
        self.tokenizer.enable_padding(pad_id=self.tokenizer.token_to_id("[PAD]"), pad_token="[PAD]")
        self.source = "text:minilm"
        self._identity: dict | None = None

    def encode(self, texts: list[str], batch_size: int = 32, show_progress: bool | None = None) -> np.ndarray:
        """Mean of the last hidden states over the non-padding tokens, float32 (``TextEmbedder.encode``)."""
        from mathgraph.models.onnx_forward import mean_pool

        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        network = self.package.onnx.text_network
        out = []
        for start in range(0, len(texts), batch_size):
            encoded = self.tokenizer.encode_batch(list(texts[start : start + batch_size]))
            feeds = {
                "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
            }
            out.append(mean_pool(network.run(feeds)["token_states"], feeds["attention_mask"]))
        return np.concatenate(out) if out else np.zeros((0, 384), dtype=np.float32)

    def identity(self) -> dict:
        """``TextEmbedder("minilm")``'s identity: the same checkpoint files, pooling and vocabulary."""
        if self._identity is None:
            self._identity = {
                "kind": "transformers.AutoModel",
                "weights_sha256": files_sha256(self.directory),
                "mode": "mean",
                "dimension": 384,
                "vocab_size": self.tokenizer.get_vocab_size(),
                "source": self.source,
            }
        return self._identity


class OnnxEncoderEmbedder:
    """A model package's COMUS encoder under ONNX Runtime (``models.onnx_package.OnnxPackageRuntime.encode``) as an
    ``Embedder``. Its vectors are ``MathEncoderEmbedder``'s within 1e-4 and its identity is the same (the hash of
    the same weights, which the package may store in float16 where the PyTorch model holds float32), so an index
    built on either runtime is searched on the other."""

    def __init__(self, package, mode: str = "joint", source: str | None = None):
        from mathgraph.models.onnx_package import canonical_mode

        self.encoder, self.mode = package.onnx, canonical_mode(mode)  # encode() and dimension(), as a MathEncoder
        self.source = source or package.name_or_path
        self._identity: dict | None = None

    def encode(self, texts: list[str], batch_size: int = 32, show_progress: bool | None = None) -> np.ndarray:
        """Vectors of the problems ``texts`` (parsed into graphs on the way), as ``MathEncoderEmbedder.encode``."""
        return self.encoder.encode(list(texts), batch_size=batch_size, mode=self.mode, show_progress=show_progress)

    def identity(self) -> dict:
        """``MathEncoderEmbedder``'s identity of the same encoder."""
        if self._identity is None:
            config = self.encoder.encoder_config
            self._identity = {
                "kind": "mathgraph.MathEncoder",
                "weights_sha256": arrays_sha256(self.encoder.encoder_weights()),
                "mode": self.mode,
                "dimension": self.encoder.dimension(self.mode),
                "parser": self.encoder.parser,
                "vocab_size": int(config["text_config"]["vocab_size"]),
                "source": self.source,
            }
            if config.get("split_digits"):
                self._identity["split_digits"] = True
        return self._identity


def as_embedder(encoder, mode: str | None = None) -> Embedder:
    """``encoder`` as an ``Embedder``: a ``MathEncoder`` is wrapped (``mode`` defaults to ``"joint"``); an object that
    already has ``encode`` and ``identity`` is returned as it is; a model package (``mathgraph.load("shipped")``)
    gives its encoder."""
    if _is_math_encoder(getattr(encoder, "encoder", None)):  # a ModelPackage
        encoder = encoder.encoder
    if _is_math_encoder(encoder):
        return MathEncoderEmbedder(encoder, mode or "joint")
    if isinstance(encoder, Embedder):
        if mode is not None:
            raise ValueError(f"mode={mode!r} applies to a MathEncoder only, not to {type(encoder).__name__}")
        return encoder
    raise TypeError(
        f"{type(encoder).__name__} is not an encoder: it needs encode(texts, batch_size=...) and "
        "identity() (wrap a MathEncoder with as_embedder)"
    )


def load_embedder(
    spec: str | PathLike = "shipped", mode: str | None = None, device: str | None = None, runtime: str | None = None
) -> Embedder:
    """An embedder from the command line, for search.

    - a model package (``"shipped"``, an export, a Hub copy) with ``mode=None``: the first stage its
      ``config.json`` names for search (``search.encoder``; the shipped package's is ``"text:minilm"``, the
      sentence encoder it started from, whose space continual pre-training wore down in its own encoder:
      ``MathEncoder.encode``), else its encoder's joint vectors; with a ``mode``, its COMUS encoder's vectors of that mode;
    - an encoder or task model directory, ``"untrained"``: ``MathEncoder`` vectors of ``mode`` (default joint);
    - ``"text:PATH"`` (``"text:minilm"`` for the packaged MiniLM) or any other Hugging Face directory:
      ``TextEmbedder`` (mean pooled).

    The spec is kept as the identity's ``source``, so that ``SearchIndex.from_pretrained`` can find the model again.
    ``runtime``: the packaged MiniLM and a package's COMUS encoder run on ONNX Runtime (``OnnxTextEmbedder``,
    ``OnnxEncoderEmbedder``) unless ``"torch"`` or a device other than the CPU is asked for, or the package carries
    no ONNX graphs (``ModelPackage``'s runtime); other encoders run on PyTorch."""
    spec = str(spec)
    if spec.startswith("text:"):
        onnx = _onnx_text_package(spec[len("text:") :], device, runtime)
        return OnnxTextEmbedder(onnx) if onnx is not None else TextEmbedder(spec[len("text:") :], device=device)
    from mathgraph.registry import SHIPPED_NAMES, UNTRAINED, describe, model_type, resolve

    if spec == UNTRAINED:  # the architecture before training
        from mathgraph.models.encoder import MathEncoder

        return MathEncoderEmbedder(MathEncoder.from_pretrained(spec, device=device), mode or "joint", source=spec)
    directory = resolve(spec)  # the same names and errors as every --model
    kind = model_type(directory)  # a config that is not JSON raises CheckpointError naming it
    if kind == "package":
        from mathgraph.models.package import ModelPackage

        package = ModelPackage(directory, device=device, runtime=runtime)
        first_stage = package.search_setting("encoder") if mode is None else None
        if first_stage:
            return load_embedder(first_stage, device=device, runtime=runtime)
        if package.runtime != "torch":  # its COMUS encoder on ONNX Runtime
            source = spec if spec in SHIPPED_NAMES or not Path(spec).is_dir() else str(directory.resolve())
            return OnnxEncoderEmbedder(package, mode or "joint", source=source)
    from mathgraph.models.encoder import MathEncoder  # PyTorch from here

    mode = mode or "joint"
    if kind in ENCODER_TYPES:
        source = spec if spec in SHIPPED_NAMES or not Path(spec).is_dir() else str(Path(spec).resolve())
        return MathEncoderEmbedder(MathEncoder.from_pretrained(spec, device=device), mode, source=source)
    if kind is not None or not (directory / "config.json").is_file():
        raise UserError(f"{spec} holds {describe(kind)}, not an encoder")
    return TextEmbedder(str(directory.resolve()), device=device)  # another Hugging Face model (its config.json)


def _onnx_text_package(name: str, device: str | None, runtime: str | None):
    """The shipped package, whose text graph runs the packaged MiniLM, when ``OnnxTextEmbedder`` should."""
    # models.text_encoder.MINILM_NAMES, not imported: that module imports transformers (and torch)
    if name not in ("minilm", "default") or runtime == "torch" or device not in (None, "cpu"):
        return None
    from mathgraph.models.onnx_package import package_has_onnx
    from mathgraph.models.package import ModelPackage
    from mathgraph.registry import SHIPPED_DIR

    package = ModelPackage(SHIPPED_DIR, device="cpu")  # its config only: its PyTorch models are never loaded here
    if package_has_onnx(package) and "text" in package.config["onnx"]:
        return package
    if runtime is not None:
        raise UserError(f"--runtime {runtime}: the installed package carries no ONNX text graph; use --runtime torch")
    return None


# what holds a mathgraph encoder: an encoder, a package (its encoder), a task model (its encoder's files); a
# multi-task model's encoder carries its adapters (MoE, LoRA...), so it is not an encoder of its own
ENCODER_TYPES = ("comus", "package", "task-model")


def files_sha256(directory: Path) -> str:
    """sha256 over a checkpoint directory's config and weight files (names and bytes), in name order."""
    digest = hashlib.sha256()
    names = sorted(
        p.name
        for p in directory.iterdir()
        if p.is_file() and (p.name == "config.json" or p.suffix in (".safetensors", ".bin"))
    )
    for name in names:
        digest.update(f"{name}|{file_sha256(directory / name)}|".encode())
    return digest.hexdigest()


def state_dict_sha256(model) -> str:
    """sha256 over a torch module's tensors (names, dtypes, shapes, bytes) in name order."""
    import torch

    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        tensor = tensor.detach().cpu().contiguous()
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())  # raw bytes: works for bf16 too
    return digest.hexdigest()


def arrays_sha256(arrays: dict[str, np.ndarray]) -> str:
    """``state_dict_sha256`` of a PyTorch model in float32 whose weights are ``arrays`` (name -> array; float16
    arrays are the float32 weights stored at half size), computed without PyTorch."""
    digest = hashlib.sha256()
    for name, array in sorted(arrays.items()):
        array = np.ascontiguousarray(array.astype(np.float32) if array.dtype == np.float16 else array)
        digest.update(f"{name}|torch.{array.dtype}|{tuple(array.shape)}|".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def _is_math_encoder(encoder) -> bool:
    # Without importing models.encoder (torch, PyG): if it was never imported, nothing is a MathEncoder.
    module = sys.modules.get("mathgraph.models.encoder")
    return module is not None and isinstance(encoder, module.MathEncoder)


__all__ = [
    "Embedder",
    "MathEncoderEmbedder",
    "TextEmbedder",
    "OnnxTextEmbedder",
    "OnnxEncoderEmbedder",
    "as_embedder",
    "load_embedder",
    "files_sha256",
    "state_dict_sha256",
]
