"""What ``--smoke`` runs read: a few rows of each data set, in ``../shared/data``'s layout.

Every script in ``benchmarks/`` takes ``--smoke``: its own code path on these rows
(``data/smoke/README.md``) with tiny sizes (a few problems, one or two training
steps), in seconds, so that ``tests/benchmarks/test_smoke.py`` runs them all and a
change that breaks a benchmark fails CI. A smoke run writes only under
``WORK/smoke`` (or an ``--output`` it is given), never over a full run's files.
"""

from pathlib import Path

SMOKE_DATA = Path(__file__).resolve().parent / "data" / "smoke"
SMOKE_MATH = SMOKE_DATA / "math" / "train.jsonl"


def smoke_work(work: str | Path) -> Path:
    """Where a smoke run writes: ``WORK/smoke``, apart from the files of a full run in ``WORK``, which a
    later full run would otherwise reuse."""
    return Path(work) / "smoke"


# A new COMUS model this small trains a step in a fraction of a second: what smoke runs train.
TINY_MODEL = {
    "gat_layers": 2,
    "gat_heads": 2,
    "gat_head_dim": 8,
    "relation_dim": 4,
    "memory_views": 2,
    "fusion_layers": 2,
}


def tiny_model_options(work: Path) -> dict:
    """``load_start_encoder("untrained", **options)`` options of a tiny new COMUS model: ``TINY_MODEL``
    around a 6-layer, 32-wide BERT (``tiny_text_encoder``)."""
    return {"text_encoder": tiny_text_encoder(work), **TINY_MODEL}


def tiny_text_encoder(work: Path) -> str:
    """A randomly initialised 6-layer, 32-wide BERT with the packaged MiniLM tokenizer, saved in
    ``work/tiny-bert`` (once), like ``tests/conftest.py``'s. 6 layers, as many as MiniLM's, so that
    ReasonFormer's skill layers and ``--freeze-text-layers 4`` under 2 memory layers fit as on the
    shipped model."""
    directory = Path(work) / "tiny-bert"
    if not (directory / "config.json").exists():
        import torch
        from transformers import AutoTokenizer, BertConfig, BertModel

        from mathgraph.models.text_encoder import resolve_text_encoder

        tokenizer = AutoTokenizer.from_pretrained(resolve_text_encoder("minilm"))
        config = BertConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            num_hidden_layers=6,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=512,
        )
        torch.manual_seed(0)
        BertModel(config, add_pooling_layer=False).save_pretrained(directory)
        tokenizer.save_pretrained(directory)
    return str(directory)


def tiny_encoder(work: Path) -> str:
    """A tiny untrained COMUS encoder (``tiny_model_options``) saved in ``work/tiny-encoder`` (once): a
    ``--model DIR`` for the scripts that start from a saved encoder."""
    directory = Path(work) / "tiny-encoder"
    if not (directory / "config.json").exists():
        from mathgraph.tasks.training.finetune import load_start_encoder

        load_start_encoder("untrained", **tiny_model_options(work)).save_pretrained(directory)
    return str(directory)


def tiny_llm(work: Path) -> str:
    """A randomly initialised 2-layer, 32-wide Llama with the packaged MiniLM tokenizer, saved in
    ``work/tiny-llm`` (once): a ``--llm DIR`` that loads and writes its (meaningless) replies in a moment,
    where the packaged SmolLM2 takes some 20 s to load from its GGUF file. The refinement tests run SmolLM2
    itself (``tests/tasks/test_refine.py``)."""
    directory = Path(work) / "tiny-llm"
    if not (directory / "config.json").exists():
        import torch
        from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

        from mathgraph.models.text_encoder import resolve_text_encoder

        tokenizer = AutoTokenizer.from_pretrained(resolve_text_encoder("minilm"))
        tokenizer.model_max_length = 4096  # the prompts with their exemplars are longer than MiniLM's 512
        config = LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=4096,
            pad_token_id=tokenizer.pad_token_id,
            bos_token_id=tokenizer.cls_token_id,
            eos_token_id=tokenizer.sep_token_id,
        )
        torch.manual_seed(0)
        LlamaForCausalLM(config).save_pretrained(directory)
        tokenizer.save_pretrained(directory)
    return str(directory)
