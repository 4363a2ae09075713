"""Program.call_async: VM calls on weft's VM loop, driven by asyncio."""
import asyncio
import os
import threading

import numpy as np
import pytest

import weft

AWAITS = """module aw
import hal.semaphore.await (r<hal.semaphore>, i64, i64) -> (i32)
func @wait (r<hal.semaphore>, i64, i64) -> (i32) export
  call.import hal.semaphore.await(r0, s0, s1) -> (s2)
  ret (s2)
end
"""


@pytest.fixture
def awaits(device, tmp_path):
    path = tmp_path / "aw.wvm"
    path.write_text(AWAITS)
    with weft.Program(str(path), device) as program:
        yield program


def test_many_calls_park_on_one_thread(awaits):
    count = 200
    semaphores = [weft.Semaphore() for _ in range(count)]

    async def main():
        calls = [asyncio.create_task(awaits.call_async("wait", s, 1, -1))
                 for s in semaphores]
        await asyncio.sleep(0.01)
        assert not any(call.done() for call in calls)
        thread = threading.Thread(
            target=lambda: [s.signal(1) for s in semaphores])
        thread.start()
        results = await asyncio.wait_for(asyncio.gather(*calls), timeout=30)
        thread.join()
        return results

    assert asyncio.run(main()) == [0] * count


def test_a_deadline_is_a_value_and_a_failure_an_error(awaits):
    async def main():
        # 20 ms and nothing signals: the program sees DEADLINE_EXCEEDED (4).
        code = await awaits.call_async("wait", weft.Semaphore(), 1,
                                       20 * 1000 * 1000)
        failing = weft.Semaphore(name="upstream")
        call = asyncio.create_task(awaits.call_async("wait", failing, 1, -1))
        await asyncio.sleep(0.01)
        failing.fail("the upstream died", code=15)
        with pytest.raises(weft.DataLossError, match="the upstream died"):
            await call
        return code

    assert asyncio.run(main()) == 4


def test_closing_the_program_cancels_what_waits(awaits):
    async def main():
        call = asyncio.create_task(
            awaits.call_async("wait", weft.Semaphore(), 1, -1))
        await asyncio.sleep(0.01)
        awaits.close()
        with pytest.raises(weft.CancelledError):
            await call

    asyncio.run(main())


MLP_KERNELS = os.environ.get("WEFT_MLP_KERNELS", "")


@pytest.mark.skipif(not MLP_KERNELS, reason="no MLP kernels")
def test_the_mlp_many_times_at_once(device):
    program = weft.Program(
        os.path.join(os.environ["WEFT_SOURCE_DIR"], "examples", "mlp",
                     "mlp.wvm"), device, kernels={"kernels": MLP_KERNELS})
    rng = np.random.default_rng(4)
    inputs = [[rng.standard_normal(shape).astype(np.float32)
               for shape in ((8,), (8, 4), (4,), (4, 2), (2,))]
              for _ in range(20)]

    async def main():
        return await asyncio.gather(*(program.call_async("forward", *args)
                                      for args in inputs))

    for args, y in zip(inputs, asyncio.run(main())):
        x, w1, b1, w2, b2 = args
        np.testing.assert_allclose(y, np.maximum(x @ w1 + b1, 0) @ w2 + b2,
                                   rtol=1e-4, atol=1e-4)
    with pytest.raises(weft.InvalidArgumentError, match="'w1'"):
        asyncio.run(program.call_async("forward", inputs[0][0],
                                       inputs[0][1].T, *inputs[0][2:]))
    program.close()
