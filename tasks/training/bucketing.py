"""Length-bucketed batches: problems of similar length together, so little of a batch is padding.

Training (``LengthBucketSampler``): each epoch shuffles the examples with
``seed + epoch``, cuts the shuffled order into pools of ``pool_batches``
batches, sorts each pool by length, cuts it into batches and shuffles the
batches. Every example is in exactly one batch per epoch, batches still differ
from epoch to epoch, and the same seed gives the same batches. Prediction sorts
everything by length instead (``models.task_batches.length_sorted_batches``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import torch

POOL_BATCHES = 50  # batches sorted together: larger pools pad less but mix lengths less across batches


def bucketed_batches(
    indices: Sequence[int],
    lengths: Sequence[int],
    batch_size: int,
    rng: random.Random,
    pool_batches: int = POOL_BATCHES,
) -> list[list[int]]:
    """``indices`` in batches of ``batch_size`` of similar ``lengths[i]``, in shuffled order (one pass, ``rng``)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    order = list(indices)
    rng.shuffle(order)
    pool = batch_size * pool_batches
    batches = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start : start + pool], key=lengths.__getitem__)
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    rng.shuffle(batches)
    return batches


class LengthBucketSampler(torch.utils.data.Sampler):
    """A batch sampler of length-bucketed batches over ``len(lengths)`` examples, reshuffled each epoch.

    ``set_epoch(e)`` chooses the shuffle (the trainer calls it, so a resumed run
    sees the same batches as an uninterrupted one). ``drop_last`` leaves out the
    one short batch (for in-batch negatives, which need full batches).
    """

    def __init__(
        self,
        lengths: Sequence[int],
        batch_size: int,
        seed: int = 0,
        pool_batches: int = POOL_BATCHES,
        drop_last: bool = False,
    ):
        if not lengths:
            raise ValueError("no examples to sample batches from")
        self.lengths, self.batch_size, self.seed, self.pool_batches = list(lengths), batch_size, seed, pool_batches
        self.drop_last = drop_last
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        full, rest = divmod(len(self.lengths), self.batch_size)
        return full + (1 if rest and not self.drop_last else 0)

    def __iter__(self) -> Iterator[list[int]]:
        rng = random.Random(self.seed + self.epoch)
        batches = bucketed_batches(range(len(self.lengths)), self.lengths, self.batch_size, rng, self.pool_batches)
        yield from (b for b in batches if len(b) == self.batch_size or not self.drop_last)
