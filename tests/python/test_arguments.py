"""Every integer argument of the package: one checked conversion, never a
wrap.

The walk finds the package's public callables by introspection (module
functions, classes as constructors, their public methods) and holds each to
the table below, so a callable added later fails the walk until it is
listed. For every integer parameter the table gives a valid call and where
the integer sits in it; each is then called with 2**64, 2**70, -1 and 1.5,
which must raise OverflowError (past the parameter's C type), ValueError (in
the type but meaningless) or TypeError (not an integer), naming the
parameter, and never succeed. A NumPy integer in its place (anything with
__index__) must work as the int does.
"""
import asyncio
import inspect
import os
import types

import numpy as np
import pytest

import weft

SOURCE_DIR = os.environ.get("WEFT_SOURCE_DIR", "")
SCALARS = os.path.join(SOURCE_DIR, "tests", "tools", "data", "weft_run.wvm")
MLP_KERNELS = os.environ.get("WEFT_MLP_KERNELS", "")

# What -1 must do where it is not simply out of the type's range.
ACCEPTED = "accepted"


class Slot:
    """An integer parameter: its place in the valid call (("args", i, ...)
    or ("kwargs", name, ...), through nested lists and tuples), the name
    its errors give it, and what -1 does (OverflowError for unsigned
    types; ValueError where the type holds it but it means nothing;
    ACCEPTED, with the reason, where -1 is a meaningful value)."""

    def __init__(self, path, name, minus_one=OverflowError, why=None):
        self.path = path
        self.name = name
        self.minus_one = minus_one
        self.why = why


class Case:
    """How to make a valid call (make(ctx) -> (callable, args, kwargs)),
    the function name its errors give, its integer slots, and what the
    valid call does when it cannot succeed here (an exception class the
    device raises once the arguments are read), or None."""

    def __init__(self, make, function, slots, outcome=None, is_async=False,
                 needs=None):
        self.make = make
        self.function = function
        self.slots = slots
        self.outcome = outcome
        self.is_async = is_async
        self.needs = needs


NO_INTEGERS = "no integer parameter"
NOT_CONSTRUCTIBLE = "made by the package, not constructed"


class Context:
    """Fresh receivers for each call, on one local-sync device."""

    def __init__(self, device, tmp_path):
        self.device = device
        self.tmp_path = tmp_path

    def buffer(self, nbytes=16):
        return self.device.allocate(nbytes)

    def reached(self):
        return weft.Semaphore(5)  # every wait of a value <= 5 is reached

    def lists(self):
        return {"wait": [(self.reached(), 1)],
                "signal": [(weft.Semaphore(), 1)]}

    def file(self, mode="r+"):
        path = self.tmp_path / "data.bin"
        if not path.exists():
            path.write_bytes(bytes(64))
        return weft.File(str(path), mode)

    def executable(self):
        return self.device.executable(MLP_KERNELS)

    def dense(self):
        """The dense kernel's (executable, constants, bindings): k = 4,
        n = 8."""
        tensors = [weft.Tensor(self.buffer(nbytes), np.float32, (count,))
                   for nbytes, count in ((16, 4), (128, 32), (32, 8),
                                         (32, 8))]
        return self.executable(), [4, 8, 1], tensors

    def program(self):
        return weft.Program(SCALARS, self.device)


def lists_slots():
    return [Slot(("kwargs", "wait", 0, 1), "wait[0][1]"),
            Slot(("kwargs", "signal", 0, 1), "signal[0][1]")]


def ref_slots(where, name):
    # A (buffer, offset, length) reference's offset and length.
    return [Slot(where + (1,), f"{name}[1]"),
            Slot(where + (2,), f"{name}[2]")]


def dense_arguments(ctx, workgroups):
    executable, constants, bindings = ctx.dense()
    return [executable, 0, workgroups, constants, bindings]


def make_command_buffer(ctx, **kwargs):
    return ctx.device.command_buffer(**kwargs)


def make_slot_command_buffer(ctx):
    command_buffer = ctx.device.command_buffer(binding_capacity=1)
    command_buffer.fill((0, 0, 8), np.uint32(1))
    command_buffer.end()
    return command_buffer


TABLE = {
    # Module functions.
    "as_array": Case(
        lambda c: (weft.as_array, [c.buffer(), np.uint8, (4, 4)], {}),
        "as_array", [
            Slot(("args", 2, 0), "shape[0]", ACCEPTED,
                 "-1 is the dimension NumPy's reshape infers"),
            Slot(("args", 2, 1), "shape[1]", ACCEPTED,
                 "-1 is the dimension NumPy's reshape infers")]),
    "drivers": NO_INTEGERS,
    "from_dlpack": NO_INTEGERS,
    "info": NO_INTEGERS,
    "trace_start": NO_INTEGERS,
    "trace_stop": NO_INTEGERS,
    "wait_all": Case(
        lambda c: (weft.wait_all, [[(c.reached(), 1)]], {}),
        "wait_all", [Slot(("args", 0, 0, 1), "pairs[0][1]")],
        is_async=True),
    # Buffer.
    "Buffer": NOT_CONSTRUCTIBLE,
    "Buffer.close": NO_INTEGERS,
    # CommandBuffer.
    "CommandBuffer": NOT_CONSTRUCTIBLE,
    "CommandBuffer.barrier": NO_INTEGERS,
    "CommandBuffer.close": NO_INTEGERS,
    "CommandBuffer.copy": Case(
        lambda c: (make_command_buffer(c).copy,
                   [(c.buffer(), 0, 8), (c.buffer(), 0, 8)], {}),
        "copy", ref_slots(("args", 0), "source") +
        ref_slots(("args", 1), "target")),
    "CommandBuffer.dispatch": Case(
        lambda c: (make_command_buffer(c).dispatch,
                   dense_arguments(c, (1, 1, 1)), {}),
        "dispatch", [
            Slot(("args", 1), "kernel"),
            Slot(("args", 2, 0), "workgroups[0]"),
            Slot(("args", 2, 2), "workgroups[2]"),
            Slot(("args", 3, 0), "constants[0]", ACCEPTED,
                 "a constant is a 32-bit word, signed or not")],
        needs=MLP_KERNELS),
    "CommandBuffer.end": NO_INTEGERS,
    "CommandBuffer.fill": Case(
        lambda c: (make_command_buffer(c, binding_capacity=1).fill,
                   [(0, 0, 8), np.uint32(1)], {}),
        "fill", [Slot(("args", 0, 0), "target[0]")] +
        ref_slots(("args", 0), "target")),
    "CommandBuffer.update": Case(
        lambda c: (make_command_buffer(c).update,
                   [bytes(8), (c.buffer(), 0, 8)], {}),
        "update", ref_slots(("args", 1), "target")),
    # Device.
    "Device": NO_INTEGERS,
    "Device.allocate": Case(
        lambda c: (c.device.allocate, [16], {}), "allocate",
        [Slot(("args", 0), "nbytes")]),
    "Device.barrier": Case(
        lambda c: (c.device.barrier, [], c.lists()), "barrier",
        lists_slots()),
    "Device.close": NO_INTEGERS,
    "Device.command_buffer": Case(
        lambda c: (c.device.command_buffer, [], {"binding_capacity": 2}),
        "command_buffer", [Slot(("kwargs", "binding_capacity"),
                                "binding_capacity")]),
    "Device.copy": Case(
        lambda c: (c.device.copy, [c.buffer(), c.buffer(), 0, 0, 8],
                   c.lists()),
        "copy", [Slot(("args", 2), "source_offset"),
                 Slot(("args", 3), "target_offset"),
                 Slot(("args", 4), "length")] + lists_slots()),
    "Device.dispatch": Case(
        lambda c: (c.device.dispatch, dense_arguments(c, 1), c.lists()),
        "dispatch", [
            Slot(("args", 1), "kernel"),
            Slot(("args", 2), "workgroups"),
            Slot(("args", 3, 1), "constants[1]", ACCEPTED,
                 "a constant is a 32-bit word, signed or not")] +
        lists_slots(), needs=MLP_KERNELS),
    "Device.executable": NO_INTEGERS,
    "Device.executable_gpu": Case(
        lambda c: (c.device.executable_gpu,
                   ["spirv", bytes(4), [("k", 1, 0, (1, 1, 1))]], {}),
        "executable_gpu", [
            Slot(("args", 2, 0, 1), "kernels[0][1]"),
            Slot(("args", 2, 0, 2), "kernels[0][2]"),
            Slot(("args", 2, 0, 3, 0), "kernels[0][3][0]"),
            Slot(("args", 2, 0, 3, 2), "kernels[0][3][2]")],
        # local-sync takes no SPIR-V: it says so once the table is read.
        outcome=weft.InvalidArgumentError),
    "Device.execute": Case(
        lambda c: (c.device.execute,
                   [make_slot_command_buffer(c), [(c.buffer(), 0, 8)]],
                   c.lists()),
        "execute", ref_slots(("args", 1, 0), "bindings[0]") +
        lists_slots()),
    "Device.fill": Case(
        lambda c: (c.device.fill, [c.buffer(), np.uint32(7), 0, 8],
                   c.lists()),
        "fill", [Slot(("args", 2), "offset"), Slot(("args", 3), "length")] +
        lists_slots()),
    "Device.host_call": Case(
        lambda c: (c.device.host_call, [lambda: None], c.lists()),
        "host_call", lists_slots()),
    "Device.load_parameters": Case(
        lambda c: (c.device.load_parameters,
                   [[(c.file(), 0, (c.buffer(), 0, 8))]],
                   {"max_reads_in_flight": 4, "chunk_size": 4096}),
        "load_parameters", [
            Slot(("args", 0, 0, 1), "spans[0][1]"),
            Slot(("args", 0, 0, 2, 1), "spans[0][2][1]"),
            Slot(("args", 0, 0, 2, 2), "spans[0][2][2]"),
            Slot(("kwargs", "max_reads_in_flight"), "max_reads_in_flight"),
            Slot(("kwargs", "chunk_size"), "chunk_size")]),
    "Device.query": NO_INTEGERS,
    "Device.read": Case(
        lambda c: (c.device.read, [c.file(), (c.buffer(), 0, 8), 0],
                   c.lists()),
        "read", ref_slots(("args", 1), "target") +
        [Slot(("args", 2), "file_offset")] + lists_slots()),
    "Device.semaphore": Case(
        lambda c: (c.device.semaphore, [3], {}), "semaphore",
        [Slot(("args", 0), "initial_value")]),
    "Device.update": Case(
        lambda c: (c.device.update, [bytes(8), c.buffer(), 0], c.lists()),
        "update", [Slot(("args", 2), "offset")] + lists_slots()),
    "Device.write": Case(
        lambda c: (c.device.write, [(c.buffer(), 0, 8), c.file(), 0],
                   c.lists()),
        "write", ref_slots(("args", 0), "source") +
        [Slot(("args", 2), "file_offset")] + lists_slots()),
    # Executable.
    "Executable": NOT_CONSTRUCTIBLE,
    "Executable.close": NO_INTEGERS,
    "Executable.lookup": Case(
        lambda c: (c.executable().lookup, [0], {}), "lookup",
        [Slot(("args", 0), "name")], needs=MLP_KERNELS),
    # Fence.
    "Fence": Case(
        lambda c: (weft.Fence, [[(c.reached(), 1)]], {}), "Fence",
        [Slot(("args", 0, 0, 1), "pairs[0][1]")]),
    "Fence.at": Case(
        lambda c: (weft.Fence.at, [c.reached(), 1], {}), "Fence.at",
        [Slot(("args", 1), "value")]),
    "Fence.fail": Case(
        lambda c: (weft.Fence.at(weft.Semaphore(), 1).fail, ["why"],
                   {"code": 10}),
        "fail", [Slot(("kwargs", "code"), "code", ValueError)]),
    "Fence.insert": Case(
        lambda c: (weft.Fence().insert, [c.reached(), 1], {}),
        "Fence.insert", [Slot(("args", 1), "value")]),
    "Fence.join": NO_INTEGERS,
    "Fence.query": NO_INTEGERS,
    "Fence.signal": NO_INTEGERS,
    "Fence.wait": NO_INTEGERS,  # timeout is seconds, a float
    # File.
    "File": NO_INTEGERS,
    "File.close": NO_INTEGERS,
    # ParameterStream.
    "ParameterStream": NOT_CONSTRUCTIBLE,
    "ParameterStream.cancel": NO_INTEGERS,
    "ParameterStream.close": NO_INTEGERS,
    "ParameterStream.wait": NO_INTEGERS,  # timeout is seconds, a float
    # Program.
    "Program": NO_INTEGERS,
    "Program.call": Case(
        lambda c: (c.program().call, ["add", 40, 2], {}), "add", [
            Slot(("args", 1), "'1'", ACCEPTED, "an i32 holds -1"),
            Slot(("args", 2), "'2'", ACCEPTED, "an i32 holds -1")]),
    "Program.call_async": Case(
        lambda c: (c.program().call_async, ["add", 40, 2], {}), "add", [
            Slot(("args", 1), "'1'", ACCEPTED, "an i32 holds -1")],
        is_async=True),
    "Program.close": NO_INTEGERS,
    "Program.functions": NO_INTEGERS,
    # Semaphore.
    "Semaphore": Case(
        lambda c: (weft.Semaphore, [3], {}), "Semaphore",
        [Slot(("args", 0), "initial_value")]),
    "Semaphore.at": Case(
        lambda c: (c.reached().at, [1], {}), "at",
        [Slot(("args", 0), "value")], is_async=True),
    "Semaphore.close": NO_INTEGERS,
    "Semaphore.fail": Case(
        lambda c: (weft.Semaphore().fail, ["why"], {"code": 10}), "fail",
        [Slot(("kwargs", "code"), "code", ValueError)]),
    "Semaphore.query": NO_INTEGERS,
    "Semaphore.signal": Case(
        lambda c: (weft.Semaphore().signal, [1], {}), "signal",
        [Slot(("args", 0), "value")]),
    "Semaphore.wait": Case(
        # A timeout, so a value taken wrongly ends as a timeout, not a hang.
        lambda c: (c.reached().wait, [1], {"timeout": 5}), "wait",
        [Slot(("args", 0), "value")]),
    # Tensor.
    "Tensor": Case(
        lambda c: (weft.Tensor, [c.buffer(), np.float32, (2, 2)],
                   {"byte_offset": 0}),
        "Tensor", [Slot(("args", 2, 0), "shape[0]", ValueError),
                   Slot(("args", 2, 1), "shape[1]", ValueError),
                   Slot(("kwargs", "byte_offset"), "byte_offset")]),
    "Tensor.from_numpy": NO_INTEGERS,
    "Tensor.numpy": NO_INTEGERS,
}


def public_callables():
    """Qualified names of the package's public callables: module functions,
    classes (their constructors) and the classes' public methods. The
    exception classes (weft.Error and one per status code) are
    BaseException's constructor, with no integer parameter."""
    found = set()
    for name in dir(weft):
        value = getattr(weft, name)
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        if isinstance(value, type):
            if issubclass(value, BaseException):
                continue
            found.add(name)
            for attribute in dir(value):
                if attribute.startswith("_"):
                    continue
                static = inspect.getattr_static(value, attribute)
                if isinstance(static, (property, types.GetSetDescriptorType,
                                       types.MemberDescriptorType)):
                    continue
                if callable(getattr(value, attribute)):
                    found.add(f"{name}.{attribute}")
        elif callable(value):
            found.add(name)
    return found


def test_the_table_lists_every_public_callable():
    found = public_callables()
    missing = sorted(found - TABLE.keys())
    assert not missing, (f"public callables the integer walk does not know "
                         f"(add them to TABLE): {missing}")
    stale = sorted(TABLE.keys() - found)
    assert not stale, f"TABLE names what the package lacks: {stale}"


def test_what_is_not_constructible_says_so():
    for name, case in TABLE.items():
        if case is NOT_CONSTRUCTIBLE:
            with pytest.raises(TypeError, match="cannot create"):
                getattr(weft, name)()


@pytest.fixture(scope="module")
def sync_device():
    with weft.Device("local-sync") as device:
        yield device


@pytest.fixture
def ctx(sync_device, tmp_path):
    return Context(sync_device, tmp_path)


def replace(container, path, value):
    """A copy of |container| (a list, tuple or dict) with the item at
    |path| replaced, rebuilding only what lies along the path."""
    key, rest = path[0], path[1:]
    item = value if not rest else replace(container[key], rest, value)
    if isinstance(container, dict):
        return {**container, key: item}
    items = list(container)
    items[key] = item
    return items if isinstance(container, list) else tuple(items)


def read(container, path):
    for key in path:
        container = container[key]
    return container


def call(case, fn, args, kwargs):
    result = fn(*args, **kwargs)
    if case.is_async:
        async def run():
            # A guard only: a wait taken wrongly fails, it does not hang.
            return await asyncio.wait_for(result, timeout=10)
        result = asyncio.run(run())
    return result


def call_valid(case, fn, args, kwargs):
    if case.outcome is None:
        return call(case, fn, args, kwargs)
    with pytest.raises(case.outcome):
        call(case, fn, args, kwargs)


def slot_cases():
    for name, case in sorted(TABLE.items()):
        if isinstance(case, Case):
            for slot in case.slots:
                yield pytest.param(name, slot, id=f"{name}:{slot.name}")


def with_slot(case, ctx, slot, value):
    fn, args, kwargs = case.make(ctx)
    where, path = slot.path[0], slot.path[1:]
    if where == "args":
        valid = read(args, path)
        args = replace(args, path, value)
    else:
        valid = read(kwargs, path)
        kwargs = replace(kwargs, path, value)
    return fn, args, kwargs, valid


@pytest.mark.parametrize("name,slot", slot_cases())
def test_an_integer_argument_is_checked_never_wrapped(ctx, name, slot):
    case = TABLE[name]
    if case.needs is not None and not case.needs:
        pytest.skip("the MLP example's kernels were not built")
    # The valid call works, so each refusal below is the integer's.
    call_valid(case, *case.make(ctx))
    expected = [(2**64, OverflowError), (2**70, OverflowError),
                (1.5, TypeError), (-1, slot.minus_one)]
    for value, error in expected:
        fn, args, kwargs, _ = with_slot(case, ctx, slot, value)
        if error is ACCEPTED:
            assert slot.why
            call_valid(case, fn, args, kwargs)
            continue
        with pytest.raises(error) as raised:
            call(case, fn, args, kwargs)
        message = str(raised.value)
        assert not isinstance(raised.value, weft.Error), message
        assert slot.name in message, message
        assert f"{case.function}()" in message, message
    # Anything with __index__ goes where an int goes: NumPy's integers.
    fn, args, kwargs, valid = with_slot(case, ctx, slot, None)
    assert isinstance(valid, int)
    fn, args, kwargs, _ = with_slot(case, ctx, slot, np.int64(valid))
    call_valid(case, fn, args, kwargs)


def test_a_length_of_2_64_minus_1_is_not_to_the_end(ctx):
    with pytest.raises(ValueError, match="pass None"):
        ctx.device.fill(ctx.buffer(), np.uint8(1), 0, 2**64 - 1)
    with pytest.raises(ValueError, match=r"target\[2\].*pass None"):
        ctx.device.command_buffer().fill((ctx.buffer(), 0, 2**64 - 1),
                                         np.uint8(1))


def test_the_cases_the_issue_names():
    # Each once took its value modulo 2**64, or waited forever.
    with weft.Device("local-sync") as device:
        with pytest.raises(OverflowError, match="nbytes"):
            device.allocate(2**64 + 16)
        with pytest.raises(OverflowError, match="nbytes"):
            device.allocate(2**70)
        with pytest.raises(OverflowError, match="offset"):
            device.fill(device.allocate(16), np.uint32(7), 2**64 + 8, 4)
    with pytest.raises(OverflowError, match="value"):
        weft.Semaphore(5).wait(2**64 + 1)
    with pytest.raises(OverflowError, match="value"):
        weft.Semaphore(5).wait(-1)
    with pytest.raises(OverflowError, match="initial_value"):
        weft.Semaphore(2**64)
    with pytest.raises(OverflowError, match="initial_value"):
        weft.Semaphore(-1)
    with pytest.raises(OverflowError, match="value"):
        weft.Fence.at(weft.Semaphore(), -1)
    # The whole u64 range is a timeline value (weft/semaphore.h).
    assert weft.Semaphore(2**64 - 1).query() == 2**64 - 1


def test_a_negative_timeout_is_refused(ctx):
    # Seconds, None for ever, 0 a poll; below 0 means nothing.
    with pytest.raises(ValueError, match="timeout"):
        ctx.reached().wait(1, timeout=-1)
    fence = weft.Fence.at(ctx.reached(), 1)
    for timeout in (-0.5, float("nan")):
        with pytest.raises(ValueError, match="timeout"):
            fence.wait(timeout=timeout)
    fence.wait(timeout=0)
    stream = ctx.device.load_parameters([])
    with pytest.raises(ValueError, match="timeout"):
        stream.wait(timeout=-1)
    stream.wait(timeout=10)
    stream.close()
