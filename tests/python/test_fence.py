"""weft.Fence: timeline points as wait and signal lists, awaitable."""
import asyncio

import numpy as np
import pytest

import weft


def test_a_fence_orders_operations_and_waits(device):
    first = weft.Semaphore(name="first")
    second = device.semaphore(0)
    filled = weft.Fence.at(first, 1)
    copied = weft.Fence.at(second, 1)
    a = device.allocate(64)
    b = device.allocate(64)
    device.fill(a, np.uint32(9), signal=filled)
    device.copy(a, b, wait=filled, signal=copied)
    copied.wait(timeout=10)
    assert copied.query() and filled.query()
    assert list(weft.as_array(b, np.uint32)) == [9] * 16


def test_join_keeps_the_larger_value_per_semaphore():
    s = weft.Semaphore(name="s")
    t = weft.Semaphore(name="t")
    joined = weft.Fence([(s, 1), (t, 2)]).join(weft.Fence([(s, 3)]))
    assert sorted(v for _, v in joined) == [2, 3]
    assert len(joined) == 2
    assert "s>=3" in repr(joined)
    assert not joined.query()
    joined.signal()
    assert joined.query()
    with pytest.raises(TypeError, match="weft.Semaphores"):
        weft.Fence([("not a semaphore", 1)])


def test_a_failed_fence_raises_and_times_out_cleanly():
    fence = weft.Fence.at(weft.Semaphore(), 1)
    with pytest.raises(weft.DeadlineExceededError):
        fence.wait(timeout=0.01)
    fence.fail("the producer died", code=15)
    with pytest.raises(weft.DataLossError, match="the producer died"):
        fence.wait()
    with pytest.raises(weft.DataLossError):
        fence.query()


def test_await_a_fence(device):
    async def main():
        done = weft.Fence.at(device.semaphore(0), 1)
        buffer = device.allocate(16)
        device.fill(buffer, np.uint8(3), signal=done)
        await done
        return bytes(np.asarray(buffer))

    assert asyncio.run(main()) == bytes([3] * 16)
