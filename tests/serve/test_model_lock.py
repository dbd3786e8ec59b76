"""``FairLock``: a request's items run in chunks, the lock goes to the request that has held it least (a
newcomer runs next, behind only the chunk that is running; large requests take turns), waiting chunks of one
kind run as one batch within a chunk's size, and each request gets its own results and errors."""

import itertools
import threading

import pytest

from mathgraph.serve.model_lock import Account, FairLock


def test_items_are_split_by_count_and_characters():
    lock = FairLock(chunk_items=3, chunk_chars=10)
    assert lock.split(["a", "b", "c", "d"]) == [["a", "b", "c"], ["d"]]
    assert lock.split(["aaaa", "bbbb", "cccc"]) == [["aaaa", "bbbb"], ["cccc"]]  # 12 characters > 10
    assert lock.split(["x" * 25, "y"]) == [["x" * 25], ["y"]]  # a text over the size runs alone
    assert lock.split([("ab", "cd"), ("ef", "gh")], cost=lambda pair: len("".join(pair))) == [
        [("ab", "cd"), ("ef", "gh")]
    ]
    assert lock.split([]) == []
    with pytest.raises(ValueError, match="chunks need at least 1 item"):
        FairLock(chunk_items=0)


def test_each_request_gets_its_own_results_and_errors():
    lock = FairLock(chunk_items=2)
    assert lock.run_batched("double", [1, 2, 3], lambda items: [2 * x for x in items]) == [2, 4, 6]
    assert lock.batches == 2  # chunks [1, 2] and [3]
    with pytest.raises(RuntimeError, match="a batch of 2 items gave 1 results"):
        lock.run_batched("broken", [1, 2], lambda items: items[:1])
    with pytest.raises(ZeroDivisionError):
        lock.run_batched("fails", [0], lambda items: [1 / x for x in items])
    assert lock.queued == 0 and lock.run_batched("after", ["x"], lambda items: items) == ["x"]  # not left held


class Recorder:
    """Runs chunks, recording their order as ``(request, first item)``; ``hold_at`` chunks wait on a gate."""

    def __init__(self, lock):
        self.lock, self.order, self.started, self.gates = lock, [], {}, {}

    def runner(self, name):
        def run(items):
            self.order.append((name, items[0]))
            if (name, items[0]) in self.started:
                self.started[name, items[0]].set()
                self.gates[name, items[0]].wait(10)
            return items

        return run

    def hold_at(self, name, item):
        self.started[name, item], self.gates[name, item] = threading.Event(), threading.Event()

    def request(self, name, items, account=None):
        thread = threading.Thread(target=self.lock.run_batched, args=(name, items, self.runner(name), account))
        thread.start()
        return thread


def wait_until(condition):
    for _ in range(1000):
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError("timed out")


def test_large_requests_take_turns_and_a_newcomer_goes_next():
    # a clock that advances one second per reading: every turn takes one second, so the order is exact
    lock = FairLock(chunk_items=1, clock=itertools.count().__next__)
    recorder = Recorder(lock)
    recorder.hold_at("A", 0)  # A's first chunk holds the lock until B has queued
    recorder.hold_at("A", 1)  # and its second until the small request S has queued
    a = recorder.request("A", [0, 1, 2])
    recorder.started["A", 0].wait(10)
    b = recorder.request("B", [0, 1, 2])
    wait_until(lambda: lock.queued == 1)
    recorder.gates["A", 0].set()
    recorder.started["A", 1].wait(10)  # A1 runs, B2 waits: now the small request comes in
    wait_until(lambda: lock.queued == 1)
    s = recorder.request("S", [0])
    wait_until(lambda: lock.queued == 2)
    recorder.gates["A", 1].set()
    for thread in (a, b, s):
        thread.join(10)
    # FIFO would run B's second chunk before S; round robin between A and B
    assert recorder.order == [("A", 0), ("B", 0), ("A", 1), ("S", 0), ("B", 1), ("A", 2), ("B", 2)]


def test_waiting_chunks_of_one_kind_run_as_one_batch_within_a_chunk():
    lock = FairLock(chunk_items=3)
    recorder = Recorder(lock)
    recorder.hold_at("first", "f")
    calls = []
    first = recorder.request("first", ["f"])
    recorder.started["first", "f"].wait(10)
    results = {}

    def kpc(name, items):
        results[name] = lock.run_batched("kpc", items, lambda batch: calls.append(list(batch)) or batch)

    threads = []
    for queued, (name, items) in enumerate((("one", ["a"]), ("two", ["b", "c"]), ("three", ["d"])), 1):
        threads.append(threading.Thread(target=kpc, args=(name, items)))
        threads[-1].start()
        wait_until(lambda queued=queued: lock.queued == queued)  # queued in this order
    recorder.gates["first", "f"].set()
    for thread in (first, *threads):
        thread.join(10)
    assert calls == [["a", "b", "c"], ["d"]]  # the three waiting requests, at most three items a call
    assert results == {"one": ["a"], "two": ["b", "c"], "three": ["d"]}


def test_the_seconds_of_a_turn_are_charged_to_its_request():
    lock = FairLock(clock=itertools.count(0, 4).__next__)  # each turn takes 4 seconds
    small, large = Account(), Account()
    with lock.hold(small):
        pass
    assert small.held_s == 4
    lock.run_batched("k", ["x" * 30, "y" * 10], lambda items: items, large)
    assert large.held_s == 4
