"""Many pipelines from one asyncio loop, no thread per wait.

    python3 examples/python/pipelines.py [--count 1000] [--device local-task]

Each pipeline fills a buffer, copies it, fills the copy's second half,
ordered on the device by one semaphore's timeline, and awaits its last
step with ``await semaphore.at(3)``: weft's timepoints wake the loop, so one
thread drives them all. Every output is checked.
"""
import argparse
import asyncio
import sys
import threading
import time

import numpy as np

import weft


async def pipeline(device, index):
    a = device.allocate(256)
    b = device.allocate(256)
    step = weft.Semaphore(name=f"pipeline {index}")
    device.fill(a, np.uint32(index), signal=[(step, 1)])
    device.copy(a, b, wait=[(step, 1)], signal=[(step, 2)])
    device.fill(b, np.uint32(7), 128, 128, wait=[(step, 2)],
                signal=[(step, 3)])
    await step.at(3)
    words = weft.as_array(b, np.uint32)
    return bool(np.all(words[:32] == index) and np.all(words[32:] == 7))


async def run(device, count):
    start = time.perf_counter()
    results = await asyncio.gather(*(pipeline(device, i)
                                     for i in range(count)))
    return results, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--device", default="local-task")
    args = parser.parse_args()
    with weft.Device(args.device) as device:
        results, elapsed = asyncio.run(run(device, args.count))
    good = sum(results)
    print(f"{good} of {args.count} pipelines right in {elapsed * 1e3:.1f} ms "
          f"on one thread ({threading.active_count()} Python thread)")
    return 0 if good == args.count else 1


if __name__ == "__main__":
    sys.exit(main())
