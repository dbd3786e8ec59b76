"""COMUS (Gong et al., ACL 2022): BERT and a GAT fused by syntax-aware memory in the last k layers.

BERT layers ``1..N-k`` and GAT layers ``1..L-k`` run on their own; then, for
each of the last ``k`` layers, one memory read/write exchanges information
between the token states and the node states, and the next BERT layer and the
next GAT layer encode the fused states. ``k = 0`` gives the text and graph
encoders side by side with no fusion (the BERT+GAT baseline).

Checkpoints are a directory with ``config.json`` and ``model.safetensors``
(plus the tokenizer and vocabularies when given); loading never unpickles and
checks the weights against the checksum written at save time.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from os import PathLike
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch_geometric.nn import global_mean_pool
from transformers import AutoConfig, AutoModel, PreTrainedModel

from mathgraph.checksums import file_sha256
from mathgraph.files import apply_umask
from mathgraph.models.gat import GraphEncoder
from mathgraph.models.memory import SyntaxAwareMemory
from mathgraph.models.precision import autocast_dtype
from mathgraph.registry import CheckpointError, read_config

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
TOKENIZER_DIR = "tokenizer"


@dataclass
class ComusConfig:
    """Sizes of a COMUS model; ``text_config`` is the Hugging Face config of the text encoder.

    ``split_digits``: the tokenizer cuts numbers into single digits (Qwen-style,
    ``models.text_encoder.set_split_digits``); ``MathEncoder`` applies it to the tokenizer
    it loads, so a saved model tokenizes as it was trained. Older ``config.json`` files
    lack the field and load as ``False``.
    """

    num_labels: int
    num_relations: int
    text_config: dict = field(default_factory=dict)
    fusion_layers: int = 2
    gat_layers: int = 6
    gat_heads: int = 12
    gat_head_dim: int = 64
    relation_dim: int = 64
    memory_views: int = 2
    dropout: float = 0.1
    parser: str = "spacy"
    text_encoder: str = "minilm"  # the packaged all-MiniLM-L6-v2 (configs saved before name it "default")
    split_digits: bool = False
    model_type: str = "comus"

    @property
    def gat_hidden(self) -> int:
        return self.gat_heads * self.gat_head_dim

    @property
    def text_hidden(self) -> int:
        return int(self.text_config["hidden_size"])

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> ComusConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known - {"weights_sha256"})
        if unknown:
            raise CheckpointError(f"config.json has fields this mathgraph does not know: {unknown}")
        # model_type says what the directory holds (a task model's config.json names "task-model" and holds
        # its encoder's configuration); the encoder's own type is always "comus"
        values = {k: v for k, v in data.items() if k in known and k != "model_type"}
        if values.get("text_encoder") == "default":  # saved before the packaged MiniLM was named "minilm"
            values["text_encoder"] = "minilm"
        return cls(**values)


@dataclass
class ComusOutput:
    """Outputs of ``ComusModel.forward``.

    ``token_states: [B, L, d_text]``, ``node_states: [num_nodes, d_gat]``,
    ``cls: [B, d_text]``, ``mean_node: [B, d_gat]``, ``joint: [B, d_text + d_gat]``
    (the joint vector ``[CLS] ; mean node``, what ``MathEncoder.encode`` gives by default; task heads read ``models.pooling``'s vectors) and the memory ``read_attentions``
    (one ``[B, m, L, T]`` tensor per fusion layer).
    """

    token_states: torch.Tensor
    node_states: torch.Tensor
    cls: torch.Tensor
    mean_node: torch.Tensor
    joint: torch.Tensor
    read_attentions: list[torch.Tensor]


class ComusModel(nn.Module):
    """COMUS encoder. Build with ``ComusModel.from_text_encoder`` or load with ``from_pretrained``.

    ``forward`` takes the tensors of a ``models.batching.ProblemBatch``.
    """

    def __init__(self, config: ComusConfig, text_encoder: PreTrainedModel | None = None):
        super().__init__()
        if text_encoder is None:
            text_encoder = AutoModel.from_config(AutoConfig.for_model(**config.text_config), add_pooling_layer=False)
        text_layers = len(text_encoder.encoder.layer)
        if not 0 <= config.fusion_layers <= min(text_layers, config.gat_layers):
            raise ValueError(
                f"fusion_layers must be in 0..{min(text_layers, config.gat_layers)}, got {config.fusion_layers}"
            )
        self.config = config
        self.text = text_encoder
        self.graph = GraphEncoder(
            num_labels=config.num_labels,
            num_relations=config.num_relations,
            hidden=config.gat_hidden,
            heads=config.gat_heads,
            num_layers=config.gat_layers,
            relation_dim=config.relation_dim,
            dropout=config.dropout,
        )
        self.memories = nn.ModuleList(
            SyntaxAwareMemory(config.text_hidden, config.gat_hidden, config.relation_dim, config.memory_views)
            for _ in range(config.fusion_layers)
        )

    @classmethod
    def from_text_encoder(
        cls, text_model: PreTrainedModel, num_labels: int, num_relations: int, **overrides: Any
    ) -> ComusModel:
        """A new COMUS model around a (pre-trained) text encoder; GAT and memory start random.

        ``overrides`` set ``ComusConfig`` fields (``fusion_layers``, ``gat_layers``...). Unless
        ``gat_heads`` is given, the GAT is as wide as the text encoder (``hidden / gat_head_dim``
        heads: 6 x 64 = 384 for MiniLM, 12 x 64 = 768 for a BERT-base, as in COMUS).
        """
        head_dim = overrides.get("gat_head_dim", ComusConfig.gat_head_dim)
        hidden = text_model.config.hidden_size
        if "gat_heads" not in overrides:
            if hidden % head_dim:
                raise ValueError(
                    f"the text encoder is {hidden} wide, not a multiple of gat_head_dim={head_dim}: "
                    "give gat_heads and gat_head_dim"
                )
            overrides["gat_heads"] = hidden // head_dim
        config = ComusConfig(
            num_labels=num_labels, num_relations=num_relations, text_config=_json_config(text_model), **overrides
        )
        return cls(config, text_model)

    @property
    def output_dim(self) -> int:
        return self.config.text_hidden + self.config.gat_hidden

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        node_labels: torch.Tensor,
        node_kinds: torch.Tensor,
        edge_index: torch.Tensor,
        edge_type: torch.Tensor,
        node_batch: torch.Tensor,
        slot_heads: torch.Tensor,
        slot_relations: torch.Tensor,
        slot_tails: torch.Tensor,
        slot_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        fuse: bool = True,
        text_states: torch.Tensor | None = None,
        text_start: int = 0,
    ) -> ComusOutput:
        """Encode a batch. Shapes: ``input_ids, attention_mask: [B, L]``; ``node_*, node_batch:
        [num_nodes]``; ``edge_index: [2, E]``, ``edge_type: [E]``; ``slot_*: [B, T]``.

        ``inputs_embeds: [B, L, d_text]`` replaces the word embeddings of ``input_ids``
        when given (used by pre-training tricks that perturb embeddings). ``fuse=False``
        skips the memory layers: text and graph encoders side by side (BERT+GAT).
        ``text_states: [B, L, d_text]``, the token states after the first ``text_start``
        text layers (a frozen prefix, cached), replace the embeddings and those layers.
        """
        k = self.config.fusion_layers
        if text_start > len(self.text.encoder.layer) - k:
            raise ValueError(f"a frozen prefix of {text_start} text layers reaches into the {k} fusion layers")
        hidden, additive_mask = self.run_text_layers(
            input_ids,
            attention_mask,
            token_type_ids,
            inputs_embeds,
            stop=len(self.text.encoder.layer) - k,
            states=text_states,
            start=text_start,
        )

        nodes = self.graph.embed(node_labels, node_kinds)
        nodes = self.graph.run_layers(nodes, edge_index, edge_type, range(self.config.gat_layers - k))

        read_attentions = []
        relations = self.graph.relation_embedding.weight
        for j, memory in enumerate(self.memories):
            if fuse:
                fused = memory(
                    hidden, attention_mask, nodes, relations, slot_heads, slot_relations, slot_tails, slot_mask
                )
                read_attentions.append(fused.read_attention)
                hidden, nodes = fused.tokens, fused.nodes
            hidden = _run_text_layer(
                self.text.encoder.layer[len(self.text.encoder.layer) - k + j], hidden, additive_mask
            )
            nodes = self.graph.run_layers(
                nodes, edge_index, edge_type, range(self.config.gat_layers - k + j, self.config.gat_layers - k + j + 1)
            )

        cls = hidden[:, 0]
        mean_node = global_mean_pool(nodes, node_batch, size=input_ids.shape[0])
        return ComusOutput(hidden, nodes, cls, mean_node, torch.cat([cls, mean_node], dim=-1), read_attentions)

    def run_text_layers(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        stop: int | None = None,
        states: torch.Tensor | None = None,
        start: int = 0,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Token states ``[B, L, d_text]`` after text layers ``start..stop-1`` and the additive attention mask.

        With ``start = 0`` the embeddings run first; otherwise ``states`` are the token
        states after the first ``start`` layers. ``stop=None`` runs to the last layer.
        """
        layers = self.text.encoder.layer
        if start == 0:
            states = self.text.embeddings(
                input_ids=None if inputs_embeds is not None else input_ids,
                token_type_ids=token_type_ids,
                inputs_embeds=inputs_embeds,
            )
        elif states is None:
            raise ValueError(f"starting at text layer {start} needs the token states after layer {start}")
        additive_mask = additive_attention_mask(attention_mask, states)
        for layer in layers[start : len(layers) if stop is None else stop]:
            states = _run_text_layer(layer, states, additive_mask)
        return states, additive_mask

    # ------------------------------------------------------------ checkpoints
    def save_pretrained(self, directory: str | PathLike, tokenizer=None, vocab=None) -> None:
        """Write ``config.json`` and ``model.safetensors`` (and, if given, the tokenizer into ``tokenizer/``
        and the graph vocabularies)."""
        from safetensors.torch import save_file

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        state = {name: tensor.detach().cpu().contiguous() for name, tensor in self.state_dict().items()}
        weights = directory / WEIGHTS_NAME
        save_file(state, str(weights), metadata={"format": "pt", "model_type": self.config.model_type})
        apply_umask(weights)
        self.save_config(directory, weights_sha256=file_sha256(weights))
        if tokenizer is not None:
            # In its own folder: next to a config.json of model_type "comus", transformers would
            # try (and warn about failing) to infer the tokenizer class from that config.
            tokenizer.save_pretrained(directory / TOKENIZER_DIR)
        if vocab is not None:
            vocab.save_pretrained(directory)

    def save_config(self, directory: str | PathLike, **extra: Any) -> None:
        """Write ``config.json`` (with ``extra`` fields, e.g. the weights' checksum) to ``directory``."""
        self.config.text_config = _json_config(self.text)  # picks up a resized vocabulary
        with open(Path(directory) / CONFIG_NAME, "w", encoding="utf-8") as f:
            json.dump({**self.config.to_dict(), **extra}, f, indent=2)

    @classmethod
    def from_pretrained(cls, directory: str | PathLike, map_location: str | torch.device = "cpu") -> ComusModel:
        """Load a model written by ``save_pretrained``; raises ``CheckpointError`` with the reason if it cannot."""
        directory = Path(directory)
        config_data = read_config(directory)
        state = load_weights(directory, config_data.get("weights_sha256"), map_location)
        return cls.from_state(config_data, state, where=directory / WEIGHTS_NAME)

    @classmethod
    def from_state(cls, config_data: dict, state: dict[str, torch.Tensor], where: object = "the weights") -> ComusModel:
        """A model of the config ``config_data`` holding exactly the tensors ``state`` (``CheckpointError``,
        naming ``where``, when they do not fit)."""
        with _no_init_weights():  # every weight is overwritten below: the random init is wasted seconds
            model = cls(ComusConfig.from_dict(config_data))
        try:
            missing, unexpected = model.load_state_dict(state, strict=False)
        except RuntimeError as err:  # a tensor of the wrong shape
            raise CheckpointError(f"{where} does not fit config.json: {err}") from err
        if missing or unexpected:
            raise CheckpointError(
                f"{where} does not fit config.json: missing {sorted(missing)[:5]}, unexpected {sorted(unexpected)[:5]}"
            )
        return model


def _no_init_weights():
    """transformers' context in which modules skip their random initialisation (torch's ``nn.init`` and
    ``PreTrainedModel.init_weights``): for a model whose every tensor is loaded right after."""
    try:
        from transformers.initialization import no_init_weights  # transformers 5
    except ImportError:  # pragma: no cover - transformers 4
        from transformers.modeling_utils import no_init_weights
    return no_init_weights()


def _json_config(model: PreTrainedModel) -> dict:
    # Through JSON, so the dict equals what config.json gives back (integer keys become strings).
    return json.loads(model.config.to_json_string())


def additive_attention_mask(attention_mask: torch.Tensor, states: torch.Tensor) -> torch.Tensor:
    """``[B, 1, 1, L]``: 0 for tokens, a large negative number for padding, as BERT's own forward builds it.

    The number is the minimum of the dtype the attention scores will have: under autocast (fp16 or bf16)
    that is the autocast dtype, not the float32 of ``states``, whose minimum turns into ``-inf`` in half
    precision (and a row of ``-inf`` into NaN)."""
    dtype = autocast_dtype(states.device.type) or states.dtype
    fill = torch.finfo(dtype).min
    return (1.0 - attention_mask[:, None, None, :].to(states.dtype)) * fill


def _run_text_layer(layer: nn.Module, hidden: torch.Tensor, additive_mask: torch.Tensor) -> torch.Tensor:
    output = layer(hidden, attention_mask=additive_mask)
    # transformers 4.x returns a tuple, 5.x the tensor itself.
    return output[0] if isinstance(output, tuple) else output


def load_weights(directory: Path, expected_sha256: str | None, map_location: str | torch.device = "cpu") -> dict:
    """Tensors of ``model.safetensors`` (never pickle), checked against ``expected_sha256``."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    path = directory / WEIGHTS_NAME
    if not path.is_file():
        raise CheckpointError(f"{directory} has no {WEIGHTS_NAME}")
    if expected_sha256 is not None and file_sha256(path) != expected_sha256:
        raise CheckpointError(
            f"{path} does not match the checksum in {CONFIG_NAME}: the file was truncated or changed after saving"
        )
    try:
        return load_file(str(path), device=str(map_location))
    except (SafetensorError, OSError, ValueError) as err:
        raise CheckpointError(f"cannot read {path} (truncated or not a safetensors file): {err}") from err
