"""weft.Device, weft.info, the error classes."""
import pytest

import weft


def test_info_lists_the_built_in_drivers():
    drivers = weft.info()["drivers"]
    assert "local-sync" in drivers and "local-task" in drivers
    assert all(isinstance(text, str) and text for text in drivers.values())


def test_device_from_a_device_string():
    with weft.Device("local-task?workers=2") as device:
        assert device.driver == "local-task"
        assert device.query("worker.count") == 2
        assert "local-task" in repr(device)
    assert device.closed
    assert "closed" in repr(device)


def test_unknown_driver_is_not_found_with_a_suggestion():
    with pytest.raises(weft.NotFoundError) as raised:
        weft.Device("local-tsak")
    assert isinstance(raised.value, LookupError)
    assert raised.value.code == 5
    assert weft.STATUS_CODES[raised.value.code] == "NOT_FOUND"
    assert "did you mean 'local-task'?" in str(raised.value)


def test_unknown_option_is_invalid_argument():
    with pytest.raises(weft.InvalidArgumentError) as raised:
        weft.Device("local-task?wrokers=2")
    assert isinstance(raised.value, ValueError)
    assert "workers" in str(raised.value)


def test_unknown_property_names_the_known_ones(device):
    with pytest.raises(weft.NotFoundError, match="queue.count"):
        device.query("no.such.key")


def test_a_closed_device_refuses_work():
    device = weft.Device("local-sync")
    device.close()
    device.close()  # idempotent
    with pytest.raises(ValueError, match="the device is closed"):
        device.allocate(16)
    with pytest.raises(ValueError, match="the device is closed"):
        device.query("queue.count")


def test_every_error_class_is_a_weft_error():
    names = [name for name in weft.__all__ if name.endswith("Error")]
    assert len(names) >= 16
    for name in names:
        assert issubclass(getattr(weft, name), weft.Error)
    assert issubclass(weft.DeadlineExceededError, TimeoutError)
    assert issubclass(weft.UnimplementedError, NotImplementedError)


def test_arguments_of_the_wrong_type_are_type_errors(device):
    with pytest.raises(TypeError, match="target must be a weft.Buffer"):
        device.fill(b"not a buffer", b"\x00")
    with pytest.raises(TypeError, match=r"signal\[0\]\[0\] must be a "
                                        r"weft.Semaphore"):
        device.barrier(signal=[(device, 1)])
    with pytest.raises(TypeError, match=r"wait\[0\] must be a "):
        device.barrier(wait=[weft.Semaphore()])


def _message(call):
    with pytest.raises(TypeError) as raised:
        call()
    return str(raised.value)


def test_argument_errors_read_as_pythons_own(device):
    # The hot methods sort their arguments themselves (vectorcall); their
    # errors are worded as PyArg_ParseTupleAndKeywords words them, and a
    # bad integer as Argument Clinic's functions name it.
    import numpy as np
    buffer = device.allocate(64)
    pattern = np.uint32(1)
    semaphore = weft.Semaphore()
    cases = [
        (lambda: device.fill(),
         "fill() missing required argument 'target' (pos 1)"),
        (lambda: device.fill(buffer, offset=0),
         "fill() missing required argument 'pattern' (pos 2)"),
        (lambda: device.fill(buffer, pattern, bogus=1),
         "'bogus' is an invalid keyword argument for fill()"),
        (lambda: device.fill(buffer, pattern, 0, None, []),
         "fill() takes at most 4 positional arguments (5 given)"),
        (lambda: device.fill(*range(7)),
         "fill() takes at most 6 arguments (7 given)"),
        (lambda: device.fill(buffer, pattern, target=buffer),
         "argument for fill() given by name ('target') and position (1)"),
        (lambda: device.fill(buffer, pattern, "8"),
         "fill() argument 'offset' must be int, not str"),
        (lambda: device.fill(buffer, "x"),
         "a bytes-like object is required, not 'str'"),
        (lambda: device.update(b"1234", buffer, offset=None),
         "update() argument 'offset' must be int, not None"),
        (lambda: device.copy(buffer, buffer, 0, 4.0),
         "copy() argument 'target_offset' must be int, not float"),
        (lambda: device.barrier(1),
         "barrier() takes no positional arguments"),
        (lambda: device.host_call(print, 2),
         "host_call() takes at most 1 positional argument (2 given)"),
        (lambda: device.dispatch(1, 2),
         "dispatch() missing required argument 'workgroups' (pos 3)"),
        (lambda: device.execute(1, bindings=None, wait=None, signl=None),
         "'signl' is an invalid keyword argument for execute()"),
        (lambda: device.read(1, 2, "0"),
         "read() argument 'file_offset' must be int, not str"),
        (lambda: device.write(1, 2, 3, 4),
         "write() takes at most 3 positional arguments (4 given)"),
        (lambda: semaphore.wait(),
         "wait() missing required argument 'value' (pos 1)"),
        (lambda: semaphore.wait(1, tmeout=0),
         "'tmeout' is an invalid keyword argument for wait()"),
        (lambda: semaphore.wait(value=1, timeout=0, x=1),
         "wait() takes at most 2 keyword arguments (3 given)"),
        (lambda: semaphore.wait(1, value=1),
         "argument for wait() given by name ('value') and position (1)"),
        (lambda: semaphore.wait(1.5),
         "wait() argument 'value' must be int, not float"),
    ]
    for call, message in cases:
        assert _message(call) == message


def test_queue_operations_take_every_argument_by_name(device):
    import numpy as np
    buffer = device.allocate(16)
    step = weft.Semaphore()
    device.fill(target=buffer, pattern=np.uint32(3), offset=4, length=8,
                signal=[(step, 1)])
    device.update(source=np.uint32([9]).tobytes(), target=buffer, offset=12,
                  wait=[(step, 1)], signal=[(step, 2)])
    out = device.allocate(16)
    device.copy(source=buffer, target=out, source_offset=4, target_offset=0,
                length=12, wait=[(step, 2)], signal=[(step, 3)])
    device.barrier(wait=[(step, 3)], signal=[(step, 4)])
    step.wait(value=4, timeout=10)
    assert weft.as_array(out, np.uint32).tolist() == [3, 3, 9, 0]
