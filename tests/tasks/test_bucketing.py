"""Length-bucketed batches: every example once per epoch, seeded, similar lengths together."""

import random

import pytest

from mathgraph.models.task_batches import length_sorted_batches
from mathgraph.tasks.training.bucketing import LengthBucketSampler, bucketed_batches


def test_every_example_exactly_once_per_epoch_and_seeded():
    lengths = [random.Random(0).randint(5, 300) for _ in range(1000)]
    sampler = LengthBucketSampler(lengths, batch_size=16, seed=3)
    epochs = []
    for epoch in range(3):
        sampler.set_epoch(epoch)
        batches = list(sampler)
        assert len(batches) == len(sampler) == 63
        assert sorted(i for b in batches for i in b) == list(range(1000))
        assert sum(len(b) < 16 for b in batches) == 1  # 1000 = 62 x 16 + 8
        epochs.append(batches)
    assert epochs[0] != epochs[1]  # reshuffled every epoch
    again = LengthBucketSampler(lengths, batch_size=16, seed=3)
    again.set_epoch(1)
    assert list(again) == epochs[1]  # same seed and epoch, same batches
    other = LengthBucketSampler(lengths, batch_size=16, seed=4)
    other.set_epoch(1)
    assert list(other) != epochs[1]


def test_batches_hold_similar_lengths():
    rng = random.Random(1)
    lengths = [rng.randint(5, 300) for _ in range(800)]
    bucketed = bucketed_batches(range(800), lengths, 16, random.Random(0))
    shuffled = list(range(800))
    random.Random(0).shuffle(shuffled)
    plain = [shuffled[i : i + 16] for i in range(0, 800, 16)]

    def padding(batches):  # padded tokens: each batch is as long as its longest example
        return sum(max(lengths[i] for i in b) * len(b) - sum(lengths[i] for i in b) for b in batches)

    assert padding(bucketed) < padding(plain) / 5


def test_drop_last_and_prediction_order():
    sampler = LengthBucketSampler([3, 1, 2, 5, 4], batch_size=2, drop_last=True)
    batches = list(sampler)
    assert len(batches) == len(sampler) == 2 and all(len(b) == 2 for b in batches)
    assert length_sorted_batches([3, 1, 2, 5, 4], 2) == [[1, 2], [0, 4], [3]]
    with pytest.raises(ValueError, match="batch_size"):
        length_sorted_batches([1], 0)
    with pytest.raises(ValueError, match="no examples"):
        LengthBucketSampler([], 2)
