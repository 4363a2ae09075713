"""weft from Python: devices, buffers shared with NumPy, timeline semaphores.

    import numpy as np, weft
    with weft.Device("local-task?workers=2") as device:
        buffer = device.allocate(16 * 4)
        done = weft.Semaphore()
        device.fill(buffer, np.float32(1.5), signal=[(done, 1)])
        done.wait(1)
        print(weft.as_array(buffer, np.float32))   # 16 x 1.5, no copy

Every queue operation takes ``wait=`` and ``signal=`` lists of
``(semaphore, value)`` pairs: it runs once every wait is reached, then
moves every signal. A failure travels down those timelines as a
``weft.Error`` subclass for its status code, with weft's whole message.
"""

from ._weft import (  # noqa: F401
    STATUS_CODES,
    Buffer,
    Device,
    Error,
    Semaphore,
    drivers,
)
from . import _weft

# The exception classes, one per status code (weft.InvalidArgumentError,
# weft.DeadlineExceededError, ...), each also a built-in where one fits
# (ValueError, TimeoutError, LookupError, PermissionError,
# NotImplementedError).
globals().update(
    {name: value for name, value in vars(_weft).items()
     if isinstance(value, type) and issubclass(value, Error)})

__all__ = ["Buffer", "Device", "Error", "Semaphore", "STATUS_CODES",
           "as_array", "drivers", "info", "wait_all"] + sorted(
    name for name, value in vars(_weft).items()
    if isinstance(value, type) and issubclass(value, Error)
    and value is not Error)


def info():
    """What this weft has: ``{"drivers": {name: description, ...}}``."""
    return {"drivers": dict(drivers())}


async def wait_all(pairs):
    """Awaits, on the running asyncio loop, until every ``(semaphore,
    value)`` of ``pairs`` is reached (``await semaphore.at(value)`` for
    one); raises the first failure."""
    from ._asyncio import wait_all as _wait_all
    await _wait_all(pairs)


def as_array(buffer, dtype, shape=None):
    """A NumPy array of ``dtype`` (and ``shape``, default 1-D) over the
    memory of a host-visible ``buffer``, without a copy. The array keeps
    the buffer mapped; ``buffer.close()`` refuses while it lives."""
    import numpy as np
    array = np.frombuffer(memoryview(buffer), dtype=dtype)
    return array if shape is None else array.reshape(shape)
