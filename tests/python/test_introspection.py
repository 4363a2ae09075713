"""What introspection finds: signatures for every callable, reprs that say
what an object is."""
import inspect
import os
import re
import types

import numpy as np
import pytest

import weft
from weft import _weft

from test_arguments import SCALARS, public_callables

MLP_KERNELS = os.environ.get("WEFT_MLP_KERNELS", "")

C_CALLABLES = (types.BuiltinFunctionType, types.MethodDescriptorType,
               types.ClassMethodDescriptorType)


def resolve(name):
    value = weft
    for part in name.split("."):
        value = getattr(value, part)
    return value


def extension_callables():
    """Every function and method the C extension defines (its types'
    own, dunders included, and the module's), public or not."""
    for name, value in vars(_weft).items():
        if isinstance(value, types.BuiltinFunctionType):
            yield f"_weft.{name}", value
        elif isinstance(value, type) and not issubclass(value,
                                                        BaseException):
            for attribute, member in vars(value).items():
                if isinstance(member, C_CALLABLES):
                    yield f"_weft.{name}.{attribute}", member


def test_every_public_callable_has_a_signature():
    names = sorted(public_callables())
    errors = sorted(name for name in dir(weft)
                    if isinstance(getattr(weft, name), type)
                    and issubclass(getattr(weft, name), weft.Error))
    assert len(errors) > 10
    for name in names + errors:
        value = resolve(name)
        if isinstance(value, type) and value.__new__ is object.__new__ \
                and value.__init__ is object.__init__:
            # Made by the package only (Buffer, Executable, ...): calling
            # the class is refused, there is no signature to give.
            with pytest.raises(TypeError, match="cannot create"):
                value()
            continue
        signature = inspect.signature(value)  # raises ValueError if none
        assert isinstance(signature, inspect.Signature), name
    # The exception classes take what BaseException takes.
    assert str(inspect.signature(weft.CancelledError)) == "(*args)"
    assert weft.CancelledError.__doc__.startswith("weft's status CANCELLED")


def test_every_c_function_has_a_text_signature():
    seen = 0
    for name, value in extension_callables():
        assert value.__text_signature__, f"{name} has no __text_signature__"
        inspect.signature(value)
        # The docstring after the signature says what it does.
        assert value.__doc__ and value.__doc__.strip(), name
        seen += 1
    assert seen > 60
    for name, value in vars(_weft).items():
        if isinstance(value, type) and not issubclass(value, BaseException) \
                and value.__new__ is not object.__new__:
            assert value.__text_signature__, f"_weft.{name}"


def test_signatures_name_what_the_methods_take():
    # The text signatures are hand-written: spot-check them against the
    # argument parsers, by keyword.
    with weft.Device("local-sync") as device:
        buffer = device.allocate(16)
        parameters = inspect.signature(weft.Device.fill).parameters
        assert list(parameters) == ["self", "target", "pattern", "offset",
                                    "length", "wait", "signal"]
        device.fill(**{name: value for name, value in zip(
            list(parameters)[1:], [buffer, np.uint8(1), 0, 16, None, None])})
        load = inspect.signature(weft.Device.load_parameters).parameters
        assert load["chunk_size"].default == 4 << 20
        assert load["max_reads_in_flight"].default == 16
        device.load_parameters(spans=[], max_reads_in_flight=16,
                               chunk_size=4 << 20, direct_io=False).close()
        assert device.semaphore(initial_value=3).query() == 3
        assert device.command_buffer(reusable=True,
                                     binding_capacity=1) is not None
    semaphore = weft.Semaphore(initial_value=2, name="s")
    semaphore.wait(value=2, timeout=0)
    semaphore.fail(message="m", code=None)


def make_instances(tmp_path):
    """One open instance of each public class that has instances."""
    device = weft.Device("local-sync")
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(16))
    buffer = device.allocate(16)
    file = weft.File(str(path))
    instances = {
        "Device": device,
        "Buffer": buffer,
        "Semaphore": weft.Semaphore(name="s"),
        "CommandBuffer": device.command_buffer(binding_capacity=2),
        "File": file,
        "ParameterStream": device.load_parameters([(file, 0, buffer)]),
        "Program": weft.Program(SCALARS, device),
        "Fence": weft.Fence.at(weft.Semaphore(name="f"), 1),
        "Tensor": weft.Tensor(buffer, np.float32, (2, 2)),
        "Notifier": _weft.Notifier(),
    }
    if MLP_KERNELS:
        instances["Executable"] = device.executable(MLP_KERNELS)
    return instances


def test_every_class_has_a_repr_that_says_what_it_is(tmp_path):
    instances = make_instances(tmp_path)
    classes = {name for name in public_callables() if "." not in name
               and isinstance(getattr(weft, name), type)}
    expected = classes | {"Notifier"}
    if not MLP_KERNELS:
        expected.discard("Executable")
    assert expected == set(instances)
    default = re.compile(r" object at 0x[0-9a-f]+>$")
    for name, instance in instances.items():
        text = repr(instance)
        assert not default.search(text), text
        assert text.startswith(f"<weft.") and name in text, text
    assert repr(instances["Program"]) == "<weft.Program 'wr' on 'local-sync'>"
    assert "2 binding slots" in repr(instances["CommandBuffer"])
    assert str(tmp_path / "f.bin") in repr(instances["File"])
    if MLP_KERNELS:
        assert "1 kernel>" in repr(instances["Executable"])
    # Closed, they say so.
    instances["ParameterStream"].wait(timeout=10)
    for name, instance in instances.items():
        if name in ("Fence", "Tensor"):
            continue  # pure Python, nothing of their own to close
        instance.close()
        assert "(closed)" in repr(instance), repr(instance)
