"""The host-sync counter counts the calls that would stop the host on a GPU, and only those."""

import torch

from mathgraph.tasks.training.host_syncs import count_host_syncs


def test_counts_reads_value_dependent_shapes_and_nothing_else():
    x = torch.tensor([1.0, 2.0, 3.0])
    mask = x > 1
    with count_host_syncs() as syncs:
        x.sum().item()
        x.tolist()
        bool(x[0] > 0)
        x[mask]  # boolean-mask indexing: the output's size depends on the values
        x[mask] = 0.0
        torch.repeat_interleave(torch.tensor([1, 2]))
        x.nonzero()
        # none of these waits for the device
        x[torch.tensor([0, 2])]
        x[1:]
        x * mask
        x.repeat_interleave(2)
        torch.repeat_interleave(x, torch.tensor([1, 2, 1]), output_size=4)
        x.to("cpu")  # already there
    assert dict(syncs.calls) == {
        "item": 1,
        "tolist": 1,
        "__bool__": 1,
        "__getitem__": 1,
        "__setitem__": 1,
        "repeat_interleave": 1,
        "nonzero": 1,
    }
    assert syncs.total == 7
