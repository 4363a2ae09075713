"""weft from Python: devices, buffers shared with NumPy, timeline semaphores.

    import numpy as np, weft
    with weft.Device("local-task?workers=2") as device:
        buffer = device.allocate(16 * 4)
        done = weft.Semaphore()
        device.fill(buffer, np.float32(1.5), signal=[(done, 1)])
        done.wait(1)
        print(weft.as_array(buffer, np.float32))   # 16 x 1.5, no copy

Every queue operation takes ``wait=`` and ``signal=`` lists of
``(semaphore, value)`` pairs (or a ``Fence``): it runs once every wait is
reached, then moves every signal. A failure travels down those timelines
as a ``weft.Error`` subclass for its status code, with weft's whole
message.

Also here: ``Tensor`` (a typed buffer; NumPy and DLPack without copies),
``Program`` (VM programs called with NumPy, inputs checked against the
tensor types their functions declare), ``Executable`` and
``CommandBuffer`` (kernels), ``File``, ``Device.host_call``, asyncio
(``await semaphore.at(value)``, ``await fence``) and tracing.
"""

from ._weft import (  # noqa: F401
    STATUS_CODES,
    Buffer,
    CommandBuffer,
    Device,
    Error,
    Executable,
    File,
    ParameterStream,
    Semaphore,
    drivers,
    trace_start,
    trace_stop,
)
from . import _weft

# The exception classes, one per status code (weft.InvalidArgumentError,
# weft.DeadlineExceededError, ...), each also a built-in where one fits
# (ValueError, TimeoutError, LookupError, PermissionError,
# NotImplementedError).
globals().update(
    {name: value for name, value in vars(_weft).items()
     if isinstance(value, type) and issubclass(value, Error)})

__all__ = ["Buffer", "CommandBuffer", "Device", "Error", "Executable",
           "Fence", "File", "ParameterStream", "Program", "Semaphore",
           "STATUS_CODES", "Tensor",
           "as_array", "drivers", "from_dlpack", "info", "trace_start",
           "trace_stop", "wait_all"] + sorted(
    name for name, value in vars(_weft).items()
    if isinstance(value, type) and issubclass(value, Error)
    and value is not Error)


def info():
    """What this weft has: ``{"drivers": {name: description, ...}}``."""
    return {"drivers": dict(drivers())}


class Fence:
    """A set of timeline points, ``(semaphore, value)`` pairs: what an
    operation waits for or signals. A fence is itself such a sequence, so
    it goes wherever ``wait=`` and ``signal=`` lists go; ``await fence``
    waits on the running asyncio loop without a thread.

        done = weft.Fence.at(weft.Semaphore(), 1)
        device.fill(buffer, pattern, signal=done)
        await done            # or done.wait(timeout=1.0)
    """

    def __init__(self, pairs=()):
        self._pairs = {}
        for i, (semaphore, value) in enumerate(pairs):
            self._insert(semaphore, value, "Fence", f"pairs[{i}][1]")

    @classmethod
    def at(cls, semaphore, value):
        """The fence of one point (``value`` a u64, as every timeline
        value)."""
        fence = cls()
        fence._insert(semaphore, value, "Fence.at", "value")
        return fence

    def insert(self, semaphore, value):
        """Adds a point; a semaphore already there keeps the larger
        value."""
        self._insert(semaphore, value, "Fence.insert", "value")

    def _insert(self, semaphore, value, function, argument):
        if not isinstance(semaphore, Semaphore):
            raise TypeError(f"a fence holds weft.Semaphores, got "
                            f"{type(semaphore).__name__}")
        # Refused now (OverflowError, TypeError), not at the wait.
        value = _weft._integer(value, "u64", function, argument)
        key = id(semaphore)
        held = self._pairs.get(key)
        if held is None or value > held[1]:
            self._pairs[key] = (semaphore, value)

    def join(self, other):
        """A new fence of both (the larger value per semaphore)."""
        joined = Fence(self)
        for semaphore, value in other:
            joined.insert(semaphore, value)
        return joined

    def __iter__(self):
        return iter(list(self._pairs.values()))

    def __len__(self):
        return len(self._pairs)

    def query(self):
        """True when every point is reached; raises the first failure."""
        return all(semaphore.query() >= value for semaphore, value in self)

    def wait(self, timeout=None):
        """Blocks until every point is reached (``timeout`` seconds in all;
        None: forever; 0: a poll; a negative or NaN timeout is refused
        with ValueError, as ``Semaphore.wait`` refuses it), without the
        GIL; raises a failure or DeadlineExceededError."""
        import time
        if timeout is not None and not timeout >= 0:
            raise ValueError(f"timeout must be None or seconds >= 0, got "
                             f"{timeout!r}")
        deadline = None if timeout is None else time.monotonic() + timeout
        for semaphore, value in self:
            left = None if deadline is None else max(0.0, deadline -
                                                     time.monotonic())
            semaphore.wait(value, timeout=left)

    def signal(self):
        """Signals every point from the host."""
        for semaphore, value in self:
            semaphore.signal(value)

    def fail(self, message, code=None):
        """Fails every semaphore of the fence with ``message``, ``code`` as
        ``Semaphore.fail`` takes it (a ``weft.Error`` subclass or a status
        code; None: ABORTED)."""
        for semaphore, _ in self:
            semaphore.fail(message, code)

    def __await__(self):
        from ._asyncio import wait_all as _wait_all
        return _wait_all(list(self)).__await__()

    def __repr__(self):
        points = ", ".join(f"{s.name or hex(id(s))}>={v}" for s, v in self)
        return f"<weft.Fence {points}>"


async def wait_all(pairs):
    """Awaits, on the running asyncio loop, until every ``(semaphore,
    value)`` of ``pairs`` is reached (``await semaphore.at(value)`` for
    one); raises the first failure."""
    from ._asyncio import wait_all as _wait_all
    pairs = list(pairs)
    for i, (semaphore, value) in enumerate(pairs):
        if not isinstance(semaphore, Semaphore):
            raise TypeError(f"wait_all() argument 'pairs[{i}][0]' must be a "
                            f"weft.Semaphore, not {type(semaphore).__name__}")
        _weft._integer(value, "u64", "wait_all", f"pairs[{i}][1]")
    await _wait_all(pairs)


def as_array(buffer, dtype, shape=None):
    """A NumPy array of ``dtype`` (and ``shape``, default 1-D) over the
    memory of a host-visible ``buffer``, without a copy. Each dimension of
    ``shape`` is an int >= 0, or -1 for the one NumPy infers (reshape's
    rule). The array keeps the buffer mapped; ``buffer.close()`` refuses
    while it lives."""
    import numpy as np
    array = np.frombuffer(memoryview(buffer), dtype=dtype)
    if shape is None:
        return array
    dims = []
    for i, dim in enumerate(shape):
        dim = _weft._integer(dim, "i64", "as_array", f"shape[{i}]")
        if dim < -1:
            raise ValueError(f"as_array() argument 'shape[{i}]' is {dim}; a "
                             f"dimension is >= 0 (or -1: inferred)")
        dims.append(dim)
    return array.reshape(dims)


class Program(_weft.Program):
    """A VM program (.wvm text or .wvmb binary) on a device.

        program = weft.Program("mlp.wvm", device,
                               kernels={"kernels": "libmlp_kernels.so"})
        y = program.forward(x, w1, b1, w2, b2)     # NumPy in, NumPy out

    Its exported functions are attributes. Arguments are NumPy arrays (or
    anything ``numpy.asarray`` takes) where the function takes a tensor,
    ints and floats for its scalars; they are checked against the tensor
    types the function declares before the call, and its results after
    it, with errors naming the function and the argument
    (``InvalidArgumentError: forward: argument 2 'w1' must be 64xN1 f32,
    got 128x64 f32 (transposed?; ...)``). One result comes back as itself,
    several as a tuple; tensors as NumPy arrays (copies), scalars as
    Python numbers. ``kernels`` maps the names the program opens with
    ``hal.executable.static`` to kernel library paths.
    """

    def __init__(self, path, device, kernels=None):
        super().__init__(path, device, kernels)

    def __getattr__(self, name):
        if name.startswith("_") or name not in self.functions():
            raise AttributeError(
                f"the program has no exported function '{name}' "
                f"(it exports {', '.join(self.functions()) or 'none'})")
        return lambda *args: self.call(name, *args)

    def call(self, name, *args):
        """Calls exported function ``name`` with ``args``, blocking this
        thread (not the GIL) until it ends. Ctrl-C (any signal handler
        that raises) interrupts a call, even one that awaits a fence
        nothing signals: the call is abandoned (the invocation cancelled
        and its resources released; queue operations it already submitted
        still run once their waits are reached) and the handler's
        exception, ``KeyboardInterrupt``, raised."""
        results = self._call(name, [_to_value(a) for a in args])
        values = tuple(_from_value(r) for r in results)
        return values[0] if len(values) == 1 else values

    async def call_async(self, name, *args):
        """Calls exported function ``name`` on the running asyncio loop
        through weft's VM loop: a call that awaits a fence parks without a
        thread, so one event loop runs many calls at once (checked against
        the declarations as ``call`` is)."""
        import asyncio
        loop = asyncio.get_running_loop()
        if getattr(self, "_event_loop", None) is not loop:
            self._fd = self._loop_fd()
            loop.add_reader(self._fd, self._pump, loop)
            self._event_loop = loop
            self._timer = None
        future = loop.create_future()
        self._submit(name, [_to_value(a) for a in args], future)
        self._pump(loop)
        results = await future
        values = tuple(_from_value(r) for r in results)
        return values[0] if len(values) == 1 else values

    def _pump(self, loop):
        # Runs what is ready; a deadline a call waits for is a timer.
        delay = self._run()
        timer = getattr(self, "_timer", None)
        if timer is not None:
            timer.cancel()
        self._timer = (None if delay is None
                       else loop.call_later(delay, self._pump, loop))

    def close(self):
        """Drops the program (calls still running end CANCELLED)."""
        loop = getattr(self, "_event_loop", None)
        if loop is not None and not loop.is_closed():
            loop.remove_reader(self._fd)
            if self._timer is not None:
                self._timer.cancel()
        self._event_loop = None
        super().close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


_ELEMENT_TYPES = {
    "float16": "f16", "float32": "f32", "float64": "f64",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
}


class Tensor:
    """A typed view of a weft ``Buffer``: element type, shape (C order) and
    byte offset. Where the buffer is host-visible it shares memory with
    NumPy (``numpy.asarray(tensor)``) and, through DLPack
    (``__dlpack__``), with any framework that takes DLPack
    (``numpy.from_dlpack``, ``torch.from_dlpack``): no copy either way.
    Where it is device-local (``Buffer.host_visible`` False: a GPU's own
    memory), ``numpy()`` copies it out through a host-visible buffer on
    its device's queue and DLPack refuses (``BufferError``). A
    ``weft.Program`` takes a tensor as an argument where it is, without a
    copy.

    ``Tensor(buffer, dtype, shape, byte_offset=0)`` checks what it is
    given: ``dtype`` one of weft's element types, each dimension of
    ``shape`` an int >= 0 that fits an i64 (ValueError naming a negative
    one), and the bytes they make fitting ``buffer`` past ``byte_offset``
    (ValueError naming the dimension that passes it).

    Attributes: ``buffer`` (the ``weft.Buffer``), ``dtype`` (a
    ``numpy.dtype``), ``shape`` (a tuple of ints, C order; ``()`` for a
    0-d tensor, one element), ``byte_offset`` (where it starts in the
    buffer); ``element_type`` and ``nbytes`` follow from them."""

    def __init__(self, buffer, dtype, shape, byte_offset=0):
        import numpy as np
        dtype = np.dtype(dtype)
        if dtype.name not in _ELEMENT_TYPES:
            raise TypeError(f"{dtype} has no weft element type")
        # Each dimension an i64 (as DLPack's and the VM's are) and >= 0;
        # the bytes they make must fit the buffer past the offset.
        dims = []
        for i, dim in enumerate(shape):
            dim = _weft._integer(dim, "i64", "Tensor", f"shape[{i}]")
            if dim < 0:
                raise ValueError(f"Tensor() argument 'shape[{i}]' is {dim}; "
                                 f"a dimension is >= 0")
            dims.append(dim)
        byte_offset = _weft._integer(byte_offset, "u64", "Tensor",
                                     "byte_offset")
        nbytes = dtype.itemsize
        for dim in dims:
            nbytes *= dim
        room = max(buffer.nbytes - byte_offset, 0)
        if nbytes > room:
            # The first dimension that takes the size past the room.
            size, past = dtype.itemsize, 0
            for i, dim in enumerate(dims):
                size *= dim
                if size > room:
                    past = i
                    break
            raise ValueError(
                f"Tensor(): {nbytes} bytes at offset {byte_offset} do not "
                f"fit the buffer's {buffer.nbytes} (shape {tuple(dims)} of "
                f"{dtype}: shape[{past}] = {dims[past]} is where the size "
                f"passes the {room} bytes left)")
        self.buffer = buffer
        self.dtype = dtype
        self.shape = tuple(dims)
        self.byte_offset = byte_offset

    @property
    def element_type(self):
        """The weft element type name ("f32", ...)."""
        return _ELEMENT_TYPES[self.dtype.name]

    @property
    def nbytes(self):
        """Its size in bytes: the element size times every dimension."""
        size = self.dtype.itemsize
        for dim in self.shape:
            size *= dim
        return size

    @classmethod
    def from_numpy(cls, array, device, *, host_visible=True):
        """A new tensor on ``device`` holding a copy of ``array`` (its
        shape kept: a 0-d array or a NumPy scalar is a tensor of shape
        ``()``), written through the queue; ``host_visible=False`` puts it
        in device-local memory (``Device.allocate``)."""
        import numpy as np
        # C order, keeping a 0-d array's shape () (ascontiguousarray would
        # make it (1,)).
        array = np.asarray(array, order="C")
        buffer = device.allocate(max(array.nbytes, 1),
                                 host_visible=host_visible)
        done = Semaphore()
        device.update(array, buffer, signal=[(done, 1)])
        done.wait(1)
        return cls(buffer, array.dtype, array.shape)

    def numpy(self):
        """The tensor as a NumPy array: a view of the buffer's memory where
        it is host-visible (no copy; writes reach the tensor), otherwise a
        copy through a host-visible buffer on the queue of the device that
        allocated it (``Buffer.device``), holding what the buffer holds
        once the copy runs (wait for the tensor's producer first)."""
        import numpy as np
        if self.buffer.host_visible:
            source, offset = self.buffer, self.byte_offset
        else:
            source, offset = self._host_copy(), 0
        count = self.nbytes // self.dtype.itemsize
        return np.frombuffer(memoryview(source), dtype=self.dtype,
                             count=count, offset=offset).reshape(self.shape)

    def _host_copy(self):
        # A host-visible buffer with the tensor's bytes, copied on the
        # queue of the buffer's device.
        device = self.buffer.device
        if device is None:
            raise ValueError(
                "weft.Tensor.numpy: the tensor's memory is device-local and "
                "the weft.Device that allocated it is gone, so no queue can "
                "copy it out")
        staging = device.allocate(max(self.nbytes, 1))
        if self.nbytes:
            done = Semaphore()
            device.copy(self.buffer, staging, self.byte_offset, 0,
                        self.nbytes, signal=[(done, 1)])
            done.wait(1)
        return staging

    def __array__(self, dtype=None, copy=None):
        if copy is False and not self.buffer.host_visible:
            raise ValueError("weft.Tensor: device-local memory reaches "
                             "NumPy only as a copy (copy=False refused)")
        array = self.numpy()
        if dtype is not None:
            return array.astype(dtype)
        return array.copy() if copy and self.buffer.host_visible else array

    def _refuse_dlpack_if_device_local(self):
        if not self.buffer.host_visible:
            raise BufferError(
                "weft.Tensor: DLPack hands memory over in place and this "
                "tensor's is device-local (not host-visible); hand over "
                "tensor.numpy(), a host copy, instead")

    def __dlpack__(self, stream=None):
        if stream is not None:
            raise BufferError("weft tensors are CPU memory: no stream")
        self._refuse_dlpack_if_device_local()
        return _weft.dlpack_capsule(self.buffer, self.element_type,
                                    self.shape, self.byte_offset)

    @property
    def __weft_ref__(self):
        """(buffer, byte_offset, nbytes): what queue operations and
        command buffers bind."""
        return (self.buffer, self.byte_offset, self.nbytes)

    def __dlpack_device__(self):
        self._refuse_dlpack_if_device_local()
        return (1, 0)  # kDLCPU: host-visible memory

    def __repr__(self):
        shape = "x".join(str(d) for d in self.shape) or "scalar"
        device_local = not (self.buffer.closed or self.buffer.host_visible)
        where = " device-local" if device_local else ""
        return f"<weft.Tensor {shape} {self.element_type}{where}>"


def from_dlpack(tensor, device, *, host_visible=True):
    """A ``weft.Tensor`` on ``device`` with a copy of ``tensor``, anything
    with ``__dlpack__`` on the CPU (a PyTorch or JAX array, a NumPy
    array); ``host_visible`` as in ``Tensor.from_numpy``."""
    import numpy as np
    return Tensor.from_numpy(np.from_dlpack(tensor), device,
                             host_visible=host_visible)


def _to_value(arg):
    import numpy as np
    if arg is None or isinstance(arg, (bool, int, float, Semaphore, Buffer)):
        return arg
    if isinstance(arg, Tensor):
        return (arg.buffer, arg.element_type, arg.shape, arg.byte_offset)
    array = np.asarray(arg, order="C")  # a 0-d array stays rank 0
    name = _ELEMENT_TYPES.get(array.dtype.name)
    if name is None:
        raise TypeError(f"arrays of {array.dtype} have no weft element type "
                        f"({', '.join(_ELEMENT_TYPES)})")
    return (array, name, tuple(array.shape))


def _from_value(value):
    if not isinstance(value, tuple):
        return value
    import numpy as np
    data, element_type, shape = value
    dtype = {v: k for k, v in _ELEMENT_TYPES.items()}[element_type]
    return np.frombuffer(data, dtype=dtype).reshape(shape)
