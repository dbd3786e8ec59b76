"""Counting the calls that make the host wait for the device, on any device (the CPU included).

On a GPU, ``.item()``, ``bool(tensor)``, boolean-mask indexing, ``nonzero`` and
copies to the CPU stop the Python thread until the GPU has caught up: a small
model that does a dozen of them per step runs at the speed of those round
trips, not of its arithmetic. ``torch.cuda.set_sync_debug_mode`` finds them on
a GPU only; ``count_host_syncs()`` finds them anywhere by watching the calls
that would sync (a ``TorchFunctionMode``), so a test on a CPU can hold the
count down.

    with count_host_syncs() as syncs:
        model(batch)["loss"].backward()
    syncs.total, syncs.calls  # 0, Counter()

What it counts: reading values (``item``, ``tolist``, ``bool``/``int``/``float``
of a tensor), outputs whose size depends on the values (``nonzero``,
``masked_select``, ``unique``, indexing or assigning with a boolean mask,
``repeat_interleave`` without ``output_size``) and copies to the CPU. It sees
Python-level calls only: kernels that sync inside an operator are not counted.
"""

from __future__ import annotations

from collections import Counter

import torch
from torch.overrides import TorchFunctionMode

# Calls whose result the host must wait for, whatever their arguments.
_ALWAYS = frozenset(
    {
        "item",
        "tolist",
        "__bool__",
        "__int__",
        "__float__",
        "__index__",
        "nonzero",
        "argwhere",
        "masked_select",
        "unique",
        "unique_consecutive",
        "numpy",
        "cpu",
    }
)
_INDEXING = frozenset({"__getitem__", "__setitem__", "index_put", "index_put_"})


def _boolean_index(index) -> bool:
    indices = index if isinstance(index, (tuple, list)) else (index,)
    return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in indices)


def _syncs(name: str, args: tuple, kwargs: dict) -> bool:
    if name in _ALWAYS:
        return True
    if name in _INDEXING:
        return len(args) > 1 and _boolean_index(args[1])
    if name == "repeat_interleave":
        repeats = args[1] if len(args) > 1 else kwargs.get("repeats")
        if repeats is None and len(args) == 1:  # torch.repeat_interleave(counts)
            repeats = args[0]
        return isinstance(repeats, torch.Tensor) and repeats.numel() > 1 and kwargs.get("output_size") is None
    if name == "to":
        target = args[1] if len(args) > 1 else kwargs.get("device")
        return (
            isinstance(target, (str, torch.device))
            and torch.device(target).type == "cpu"
            and isinstance(args[0], torch.Tensor)
            and args[0].device.type != "cpu"
        )
    return False


class HostSyncCounter(TorchFunctionMode):
    """A ``TorchFunctionMode`` that counts the calls that sync the host with the device: ``total`` and
    ``calls`` (a ``Counter`` by function name)."""

    def __init__(self):
        super().__init__()
        self.calls: Counter[str] = Counter()

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if _syncs(name, args, kwargs):
            self.calls[name] += 1
        return func(*args, **kwargs)


def count_host_syncs() -> HostSyncCounter:
    """A context manager counting host-device syncs in its block (see the module docstring)."""
    return HostSyncCounter()
