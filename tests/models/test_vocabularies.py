"""``models.vocabularies``: the graph vocabularies and LaTeX tokens a new encoder is built with."""

import json

from mathgraph.graph import GraphVocabulary
from mathgraph.models.encoder import LATEX_TOKENS_NAME, MathEncoder
from mathgraph.models.vocabularies import build_vocabularies, save_vocabularies
from mathgraph.samples import sample_problems

PROBLEMS = [row["problem"] for row in sample_problems()]


def test_build_and_save_vocabularies_that_an_encoder_is_built_with(tmp_path, sample_vocab, tiny_text_dir):
    graph_vocabulary, latex_tokens = build_vocabularies(PROBLEMS, parser="spacy", min_freq=1, latex_min_freq=2)
    assert graph_vocabulary.labels.to_dict() == sample_vocab.labels.to_dict()  # what the parsed samples give
    assert "\\angle" in latex_tokens and all(t.startswith("\\") for t in latex_tokens)
    assert len(build_vocabularies(PROBLEMS, parser="spacy", latex_min_freq=1)[1]) > len(latex_tokens)
    assert build_vocabularies(PROBLEMS, parser="spacy", latex_min_freq=1000)[1] == []
    save_vocabularies(tmp_path / "vocab", graph_vocabulary, latex_tokens)
    assert json.loads((tmp_path / "vocab" / LATEX_TOKENS_NAME).read_text()) == latex_tokens
    assert (
        GraphVocabulary.from_pretrained(tmp_path / "vocab").relations.to_dict() == graph_vocabulary.relations.to_dict()
    )
    encoder = MathEncoder.build(
        tmp_path / "vocab",
        text_encoder=str(tiny_text_dir),
        gat_layers=1,
        gat_heads=2,
        gat_head_dim=8,
        relation_dim=4,
        fusion_layers=1,
    )
    assert set(latex_tokens) <= set(encoder.tokenizer.get_added_vocab())
