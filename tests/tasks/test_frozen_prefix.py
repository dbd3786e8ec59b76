"""The frozen text prefix: cached states equal the unfrozen forward, frozen weights stay, bad depths refused."""

import pytest
import torch

from mathgraph.models.prediction import feature_store
from mathgraph.models.task_model import TaskConfig, TaskModel
from mathgraph.samples import sample_problems

TEXTS = [r["problem"] for r in sample_problems()][:4]


def models(tiny_encoder, architecture="comus", layers=1):
    frozen = TaskModel(tiny_encoder, TaskConfig("kpc", architecture=architecture, labels=["a", "b"])).eval()
    reference = TaskModel(tiny_encoder, TaskConfig("kpc", architecture=architecture, labels=["a", "b"])).eval()
    frozen.freeze_text_layers(layers)
    return frozen, reference


@pytest.mark.parametrize("architecture,layers", [("comus", 1), ("bert", 2), ("bert+gat", 1)])
def test_cached_prefix_gives_the_unfrozen_vectors(tiny_encoder, architecture, layers):
    frozen, reference = models(tiny_encoder, architecture, layers)
    store = feature_store(frozen, TEXTS)
    with torch.no_grad():
        expected = reference.vectors(store.batch(TEXTS))
        assert not frozen.frozen_prefix.cache
        first = frozen.vectors(store.batch(TEXTS))  # computes and caches
        assert len(frozen.frozen_prefix.cache) == len(TEXTS)
        again = frozen.vectors(store.batch(TEXTS[::-1]))  # other batch, other padding: from the cache
    assert torch.allclose(first, expected, atol=1e-5)
    assert torch.allclose(again, expected.flip(0), atol=1e-5)


def test_frozen_layers_do_not_train_and_the_rest_does(tiny_encoder):
    frozen, _ = models(tiny_encoder)
    frozen.train()
    store = feature_store(frozen, TEXTS)
    embeddings = frozen.backbone.text.embeddings.word_embeddings.weight.clone()
    first_layer = frozen.backbone.text.encoder.layer[0].output.dense.weight.clone()
    last_layer = frozen.backbone.text.encoder.layer[2].output.dense.weight.clone()
    optimizer = torch.optim.SGD([p for p in frozen.parameters() if p.requires_grad], lr=0.1)
    batch = store.batch(TEXTS)
    logits = frozen.head(frozen.vectors(batch))
    torch.nn.functional.cross_entropy(logits, torch.tensor([0, 1, 0, 1])).backward()
    optimizer.step()
    assert torch.equal(frozen.backbone.text.embeddings.word_embeddings.weight, embeddings)
    assert torch.equal(frozen.backbone.text.encoder.layer[0].output.dense.weight, first_layer)
    assert not torch.equal(frozen.backbone.text.encoder.layer[2].output.dense.weight, last_layer)


def test_a_prefix_reaching_the_fusion_layers_is_refused(tiny_encoder):
    model = TaskModel(tiny_encoder, TaskConfig("kpc", labels=["a", "b"]))
    with pytest.raises(ValueError, match=r"must be in 1..1"):  # 3 text layers, the last 2 fused
        model.freeze_text_layers(2)
    with pytest.raises(ValueError, match="reaches into the 2 fusion layers"):
        batch = feature_store(model, TEXTS[:1]).batch(TEXTS[:1])
        model.backbone(**batch.as_model_inputs(), text_states=torch.zeros(1, 1, 32), text_start=2)


def test_the_cache_stays_within_its_bound_and_states_stay_right(tiny_encoder):
    frozen, reference = models(tiny_encoder)
    store = feature_store(frozen, TEXTS)
    with torch.no_grad():
        expected = reference.vectors(store.batch(TEXTS))
        one = frozen.vectors(store.batch(TEXTS[:1]))
    room = frozen.frozen_prefix.cached_mib
    assert room > 0 and all(
        t.device.type == "cpu" and t.dtype == torch.float32 for t in frozen.frozen_prefix.cache.values()
    )
    frozen, _ = models(tiny_encoder)
    frozen.frozen_prefix.max_mib = room  # room for the first problem only
    with torch.no_grad():
        for _ in range(2):  # the second pass reads one problem from the cache and computes three again
            assert torch.allclose(frozen.vectors(store.batch(TEXTS)), expected, atol=1e-5)
    assert len(frozen.frozen_prefix.cache) == 1
    assert frozen.frozen_prefix.cached_mib == pytest.approx(room)
    assert torch.allclose(one, expected[:1], atol=1e-5)
