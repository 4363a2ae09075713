"""asyncio: awaiting semaphores on one thread, driven by timepoints."""
import asyncio
import gc
import threading

import numpy as np
import pytest

import weft
from weft import _asyncio, _weft


def test_a_thousand_awaits_on_one_thread():
    count = 1000
    semaphores = [weft.Semaphore() for _ in range(count)]
    order = []

    async def waiter(index):
        await semaphores[index].at(1)
        order.append(index)

    async def main():
        tasks = [asyncio.create_task(waiter(i)) for i in range(count)]
        await asyncio.sleep(0)  # every task is parked on its watch
        assert _asyncio.pending_watches() == count
        # Signalled from another thread, as a device's worker would.
        thread = threading.Thread(
            target=lambda: [s.signal(1) for s in semaphores])
        thread.start()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
        thread.join()
        assert _asyncio.pending_watches() == 0

    asyncio.run(main())
    assert sorted(order) == list(range(count))
    # One loop thread did it: no thread per wait.
    assert threading.active_count() == 1


def test_await_an_operation_on_a_device(device):
    async def main():
        buffer = device.allocate(64)
        done = device.semaphore(0)
        device.fill(buffer, np.float32(4.0), signal=[(done, 1)])
        await done.at(1)
        return weft.as_array(buffer, np.float32).copy()

    np.testing.assert_array_equal(asyncio.run(main()),
                                  np.full(16, 4.0, dtype=np.float32))


def test_a_failure_reaches_the_awaiting_task_with_its_message(device):
    async def main():
        gate = weft.Semaphore(name="gate")
        done = device.semaphore(0)
        buffer = device.allocate(16)
        device.fill(buffer, np.uint8(1), wait=[(gate, 1)],
                    signal=[(done, 1)])
        waiting = asyncio.create_task(done.at(1))
        await asyncio.sleep(0)
        gate.fail("cancelled upstream", code=1)
        with pytest.raises(weft.CancelledError,
                           match="cancelled upstream"):
            await waiting

    asyncio.run(main())


def test_already_reached_resolves_at_once():
    async def main():
        semaphore = weft.Semaphore(5)
        await semaphore.at(3)
        await weft.wait_all([(semaphore, 5), (weft.Semaphore(1), 1)])

    asyncio.run(main())


def test_cancelling_the_task_stops_the_watch_and_frees_it():
    gc.collect()
    before = _weft._live_allocations()

    async def main():
        semaphore = weft.Semaphore()
        task = asyncio.create_task(semaphore.at(1))
        await asyncio.sleep(0)
        assert _asyncio.pending_watches() == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert _asyncio.pending_watches() == 0
        semaphore.close()

    asyncio.run(main())
    gc.collect()
    assert _weft._live_allocations() == before


def test_a_closed_loop_cancels_what_it_still_watches():
    semaphore = weft.Semaphore()
    loop = asyncio.new_event_loop()
    task = loop.create_task(semaphore.at(1))
    loop.run_until_complete(asyncio.sleep(0.01))
    notifier = _asyncio._notifiers[loop]
    assert notifier.pending == 1
    notifier.close()
    assert notifier.pending == 0
    with pytest.raises(asyncio.CancelledError):
        loop.run_until_complete(task)
    loop.close()
    semaphore.signal(1)  # nothing left to fire
