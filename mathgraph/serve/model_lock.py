"""Fair locks for a server's model work: a request's work runs in chunks, and each turn goes to the request
that has had the least.

Model calls run one at a time per lock (``mathgraph.serve.service`` says which locks and why). A request's
items are split into chunks of at most ``chunk_items`` items and ``chunk_chars`` characters (an item over
that runs alone), and the lock is taken per chunk. When it is released it goes to the waiting chunk whose
request has held the locks for the shortest time so far, the first to arrive among equals (least attained
service): a request that has just come in runs next, behind at most the chunk that is running, while large
requests take turns with each other. Without chunks, one request of 48 long problem pairs held the single
lock of the earlier server for 425 s, and a small compare behind four pairs waited 47 s.

Chunks of the same kind of work (the same key: the same task, the same search settings) that wait together
run as one call, up to the chunk size, and each request gets its own results. A request that arrives alone
runs at once, with no timer and no added wait. Batching pays under load: on the 2-core development CPU a
KPC problem took 43.6 ms alone and 29.1 ms (27.4 ms) in a batch of 4 (8).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Account:
    """One request's use of the locks: the seconds its chunks have held them (the lock serves the least
    first). Give every call of one request the same account, so its later steps keep its place."""

    held_s: float = 0.0


@dataclass(eq=False)
class _Chunk:
    key: Hashable | None  # None: a turn that is not batched (``FairLock.hold``)
    items: list
    cost: int
    account: Account
    ticket: int  # arrival order, for ties
    woken: threading.Event = field(default_factory=threading.Event)
    granted: bool = False  # woken with the lock (else: another request's turn ran this chunk)
    results: list | None = None
    error: BaseException | None = None


class FairLock:
    """``run_batched(key, items, run, account)``: ``run`` over ``items`` chunk by chunk, each chunk under the
    lock in its fair turn and batched with waiting chunks of the same ``key``; ``hold(account)``: the lock for
    one piece of work that is neither split nor batched. ``run`` must return one result per item, in order;
    check the items before they are queued, since an error raised by a batch is raised in every request of it.
    ``clock``: the seconds that turns are measured in (a test's own clock makes the order deterministic).
    """

    def __init__(self, chunk_items: int = 8, chunk_chars: int = 4000, clock: Callable[[], float] = time.perf_counter):
        if chunk_items < 1 or chunk_chars < 1:
            raise ValueError(f"chunks need at least 1 item and 1 character, got {chunk_items} and {chunk_chars}")
        self.chunk_items, self.chunk_chars, self.clock = chunk_items, chunk_chars, clock
        self._guard = threading.Lock()  # guards _busy and _waiting, held only for bookkeeping
        self._busy = False
        self._waiting: list[_Chunk] = []
        self._tickets = itertools.count()
        self.batches = 0  # calls of ``run`` made by run_batched, for tests and monitoring

    # ------------------------------------------------------------- the two ways in
    def run_batched(
        self,
        key: Hashable,
        items: Sequence,
        run: Callable[[list], Sequence],
        account: Account | None = None,
        cost: Callable[[object], int] | None = None,
    ) -> list:
        """This request's results of ``run`` over ``items``, in order, computed chunk by chunk (alone or with
        other requests' chunks). ``cost(item)``: its characters (default: ``len`` of a string, else 1)."""
        account = account or Account()
        results = []
        for chunk in self.split(items, cost):
            results += self._run_chunk(key, chunk, run, account, sum(map(cost or _characters, chunk)))
        return results

    @contextmanager
    def hold(self, account: Account | None = None) -> Iterator[None]:
        """The lock for one piece of work, taken in this request's fair turn (``with lock.hold(account):``)."""
        account = account or Account()
        self._acquire(_Chunk(None, [], 0, account, next(self._tickets)))
        started = self.clock()
        try:
            yield
        finally:
            account.held_s += self.clock() - started
            self._release()

    @property
    def queued(self) -> int:
        """How many chunks wait for the lock now."""
        with self._guard:
            return len(self._waiting)

    def split(self, items: Sequence, cost: Callable[[object], int] | None = None) -> list[list]:
        """``items`` in chunks of at most ``chunk_items`` items and ``chunk_chars`` characters, in order (an
        item over ``chunk_chars`` alone)."""
        cost = cost or _characters
        chunks: list[list] = []
        size = 0
        for item in items:
            item_cost = cost(item)
            if not chunks or len(chunks[-1]) >= self.chunk_items or size + item_cost > self.chunk_chars:
                chunks.append([])
                size = 0
            chunks[-1].append(item)
            size += item_cost
        return chunks

    # ------------------------------------------------------------- turns
    def _acquire(self, chunk: _Chunk) -> bool:
        """Wait for the lock (True) or for another request's turn to run this chunk (False)."""
        with self._guard:
            if not self._busy:
                self._busy = True
                return True
            self._waiting.append(chunk)
        chunk.woken.wait()
        return chunk.granted

    def _release(self) -> None:
        """Hand the lock straight to the next waiter (no one can barge in between), or free it."""
        with self._guard:
            if not self._waiting:
                self._busy = False
                return
            following = min(self._waiting, key=lambda waiting: (waiting.account.held_s, waiting.ticket))
            self._waiting.remove(following)
            following.granted = True
            following.woken.set()

    def _run_chunk(self, key: Hashable, items: list, run: Callable, account: Account, cost: int) -> list:
        chunk = _Chunk(key, items, cost, account, next(self._tickets))
        if self._acquire(chunk):
            batch = [chunk]
            try:
                with self._guard:
                    batch += self._take_mates(chunk)
                self._run(batch, run)
            finally:
                self._release()
                for mate in batch[1:]:
                    if mate.results is None and mate.error is None:  # the turn ended by KeyboardInterrupt, say
                        mate.error = RuntimeError("the batch this request's chunk ran in was interrupted")
                    mate.woken.set()
        if chunk.error is not None:
            raise chunk.error
        return chunk.results

    def _take_mates(self, chunk: _Chunk) -> list[_Chunk]:
        """Waiting chunks of ``chunk``'s key, first come first, while the batch stays within one chunk's size
        (taken out of the queue: this turn runs them). Called with the guard held."""
        mates, items, cost = [], len(chunk.items), chunk.cost
        for waiting in sorted(self._waiting, key=lambda w: w.ticket):
            if waiting.key != chunk.key:
                continue
            if items + len(waiting.items) > self.chunk_items or cost + waiting.cost > self.chunk_chars:
                continue
            mates.append(waiting)
            items, cost = items + len(waiting.items), cost + waiting.cost
        for mate in mates:
            self._waiting.remove(mate)
        return mates

    def _run(self, batch: list[_Chunk], run: Callable[[list], Sequence]) -> None:
        self.batches += 1
        started = self.clock()
        try:
            results = list(run([item for chunk in batch for item in chunk.items]))
            if len(results) != sum(len(chunk.items) for chunk in batch):
                raise RuntimeError(f"a batch of {sum(len(c.items) for c in batch)} items gave {len(results)} results")
        except Exception as error:  # every request of the batch hears of it
            for chunk in batch:
                chunk.error = error
            results = None
        # each request is charged its share of the turn, by characters
        elapsed, total = self.clock() - started, sum(chunk.cost for chunk in batch)
        for chunk in batch:
            chunk.account.held_s += elapsed * (chunk.cost / total if total else 1 / len(batch))
        if results is None:
            return
        start = 0
        for chunk in batch:
            chunk.results, start = results[start : start + len(chunk.items)], start + len(chunk.items)


def _characters(item) -> int:
    """An item's size for chunking: the characters of a string, else 1."""
    return len(item) if isinstance(item, str) else 1
