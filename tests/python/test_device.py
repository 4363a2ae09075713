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
