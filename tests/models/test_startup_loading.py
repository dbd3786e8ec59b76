"""The start-up shortcuts (a prediction that loads less on its way) give what the long way gave."""

from __future__ import annotations

import torch

from mathgraph.models.text_encoder import load_text_encoder, text_encoder_state
from mathgraph.parsers.dependency import DEFAULT_SPACY_MODEL, SpacyParser


def test_text_encoder_state_of_the_packaged_minilm_is_the_loaded_models():
    fast, model = text_encoder_state("minilm"), load_text_encoder("minilm")[0].state_dict()
    assert set(fast) == set(model)
    for key, tensor in model.items():
        assert fast[key].dtype == tensor.dtype and torch.equal(fast[key], tensor), key


def test_spacy_parser_names_its_model_before_loading_it():
    parser = SpacyParser()
    assert "_loaded_nlp" not in parser.__dict__  # spaCy is loaded at the first parse, not to name the model
    assert parser.model == f"{DEFAULT_SPACY_MODEL} {parser._nlp.meta['version']}"
    assert parser.parse("Tom has 3 apples.")
