"""Python's cost over C (docs/PERFORMANCE.md, "Python").

Run with the build's package on the path:
    PYTHONPATH=build/release/python python3 bench/python/python_bench.py

Rows (best of several repeats, local-task?workers=2 unless named):
  round trip (sync)     device.fill + semaphore.wait per op: the Python
                        twin of weft_bench's QueueRoundTrip/local-task
  round trip (asyncio)  device.fill + await semaphore.at per op
  pipelines (asyncio)   N pipelines (fill -> copy -> fill, ordered by
                        semaphores) each awaited by a task on one loop
  pipelines (threads)   the same N pipelines, each waited for by its own
                        Python thread blocking in semaphore.wait
  call: ...             one method's cost from Python, nothing waited for
                        in the loop: the binding's own share of an op
Every pipeline checks its output, so a wrong answer fails the run.
"""
import argparse
import asyncio
import threading
import time

import numpy as np

import weft


def round_trip_sync(device, count):
    buffer = device.allocate(64)
    done = weft.Semaphore()
    pattern = np.uint32(0x5A5A5A5A)
    start = time.perf_counter()
    for value in range(1, count + 1):
        device.fill(buffer, pattern, signal=[(done, value)])
        done.wait(value)
    return (time.perf_counter() - start) / count


def round_trip_async(device, count):
    async def main():
        buffer = device.allocate(64)
        done = weft.Semaphore()
        pattern = np.uint32(0x5A5A5A5A)
        start = time.perf_counter()
        for value in range(1, count + 1):
            device.fill(buffer, pattern, signal=[(done, value)])
            await done.at(value)
        return (time.perf_counter() - start) / count
    return asyncio.run(main())


class Pipeline:
    """fill(a) -> copy(a, b) -> fill(b's second half), on semaphores."""

    def __init__(self, device, index):
        self.device = device
        self.index = index
        self.a = device.allocate(256)
        self.b = device.allocate(256)
        self.step = weft.Semaphore()

    def submit(self):
        d = self.device
        d.fill(self.a, np.uint32(self.index), signal=[(self.step, 1)])
        d.copy(self.a, self.b, wait=[(self.step, 1)],
               signal=[(self.step, 2)])
        d.fill(self.b, np.uint32(7), 128, 128, wait=[(self.step, 2)],
               signal=[(self.step, 3)])

    def check(self):
        words = weft.as_array(self.b, np.uint32)
        if not (np.all(words[:32] == self.index) and np.all(words[32:] == 7)):
            raise SystemExit(f"pipeline {self.index}: wrong output")


def pipelines_async(device, count):
    pipelines = [Pipeline(device, i) for i in range(count)]

    async def run(pipeline):
        pipeline.submit()
        await pipeline.step.at(3)

    async def main():
        start = time.perf_counter()
        await asyncio.gather(*(run(p) for p in pipelines))
        return time.perf_counter() - start

    elapsed = asyncio.run(main())
    for pipeline in pipelines:
        pipeline.check()
    return elapsed / count


def pipelines_threads(device, count):
    pipelines = [Pipeline(device, i) for i in range(count)]
    barrier = threading.Barrier(count + 1)

    def run(pipeline):
        barrier.wait()
        pipeline.submit()
        pipeline.step.wait(3)

    threads = [threading.Thread(target=run, args=(p,)) for p in pipelines]
    for thread in threads:
        thread.start()
    start = time.perf_counter()
    barrier.wait()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    for pipeline in pipelines:
        pipeline.check()
    return elapsed / count


def call_costs(device, count):
    """Seconds per call of the hot methods, each in a loop of its own."""
    buffer = device.allocate(64)
    pattern = np.uint32(7)
    reached = weft.Semaphore(1)
    step = weft.Semaphore()

    def wait_reached():
        for _ in range(count):
            reached.wait(1)

    def fill_signal():
        for value in range(1, count + 1):
            device.fill(buffer, pattern, signal=[(step, value)])
        step.wait(count)

    def fill():
        # Last: nothing can wait for these (they run out meanwhile).
        for _ in range(count):
            device.fill(buffer, pattern)

    rows = []
    for name, loop in (("call: wait(v) already reached", wait_reached),
                       ("call: fill(..., signal=[(s, v)])", fill_signal),
                       ("call: fill(buffer, pattern)", fill)):
        start = time.perf_counter()
        loop()
        rows.append((name, (time.perf_counter() - start) / count))
    return rows


def best(function, repeats, *args):
    return min(function(*args) for _ in range(repeats))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="local-task?workers=2")
    parser.add_argument("--ops", type=int, default=20000)
    parser.add_argument("--pipelines", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with weft.Device(args.device) as device:
        rows = [
            ("round trip (sync)", best(round_trip_sync, args.repeats, device,
                                       args.ops), "per op"),
            ("round trip (asyncio)", best(round_trip_async, args.repeats,
                                          device, args.ops), "per op"),
        ]
        # Before the pipelines, whose 1,000 threads leave the machine busy
        # for a while after they end.
        calls = [call_costs(device, args.ops) for _ in range(args.repeats)]
        rows += [(name, min(run[index][1] for run in calls), "per call")
                 for index, (name, _) in enumerate(calls[0])]
        rows += [
            (f"{args.pipelines} pipelines (asyncio)",
             best(pipelines_async, args.repeats, device, args.pipelines),
             "per pipeline"),
            (f"{args.pipelines} pipelines (threads)",
             best(pipelines_threads, args.repeats, device, args.pipelines),
             "per pipeline"),
        ]
    for name, seconds, unit in rows:
        print(f"{name:34s} {seconds * 1e6:9.3f} us {unit}")


if __name__ == "__main__":
    main()
