"""Buffers, NumPy without copies, queue fill/update/copy."""
import numpy as np
import pytest

import weft


def test_numpy_shares_the_buffers_memory(device):
    buffer = device.allocate(64)
    assert buffer.nbytes == 64 and len(buffer) == 64
    assert buffer.host_visible
    first = weft.as_array(buffer, np.float32)
    second = np.asarray(buffer)
    # One memory: the same address, and a write through one is seen by the
    # other and by the device.
    assert first.ctypes.data == second.ctypes.data
    first[:] = np.arange(16, dtype=np.float32)
    assert second.view(np.float32)[5] == 5.0
    done = weft.Semaphore()
    other = device.allocate(64)
    device.copy(buffer, other, signal=[(done, 1)])
    done.wait(1, timeout=10)
    np.testing.assert_array_equal(weft.as_array(other, np.float32),
                                  np.arange(16, dtype=np.float32))
    del first, second


@pytest.mark.parametrize("pattern,dtype", [
    (np.uint8(0xAB), np.uint8),
    (np.uint16(0xBEEF), np.uint16),
    (np.float32(-2.5), np.float32),
])
def test_fill_with_each_pattern_width(device, pattern, dtype):
    buffer = device.allocate(256)
    done = weft.Semaphore()
    device.fill(buffer, np.uint8(0), signal=[(done, 1)])
    device.fill(buffer, pattern, 16, 64, wait=[(done, 1)], signal=[(done, 2)])
    done.wait(2, timeout=10)
    values = weft.as_array(buffer, dtype)
    size = np.dtype(dtype).itemsize
    expected = np.zeros(256 // size, dtype=dtype)
    expected[16 // size:80 // size] = pattern
    np.testing.assert_array_equal(values, expected)


def test_update_copies_the_source_at_the_call(device):
    buffer = device.allocate(32)
    source = np.arange(8, dtype=np.int32)
    gate = weft.Semaphore()
    done = weft.Semaphore()
    device.update(source, buffer, wait=[(gate, 1)], signal=[(done, 1)])
    source[:] = -1  # after the call: not what the update writes
    gate.signal(1)
    done.wait(1, timeout=10)
    np.testing.assert_array_equal(weft.as_array(buffer, np.int32),
                                  np.arange(8, dtype=np.int32))


def test_a_range_past_the_end_is_refused_naming_it(device):
    buffer = device.allocate(16)
    with pytest.raises(weft.Error, match="16"):
        device.fill(buffer, np.uint8(1), 8, 16)


def test_a_bad_pattern_width_is_refused(device):
    buffer = device.allocate(16)
    with pytest.raises(weft.InvalidArgumentError, match="pattern"):
        device.fill(buffer, b"abc")


def test_close_refuses_while_numpy_views_live(device):
    buffer = device.allocate(16)
    view = np.asarray(buffer)
    with pytest.raises(BufferError, match="still alive"):
        buffer.close()
    del view
    buffer.close()
    buffer.close()  # idempotent
    assert buffer.closed
    with pytest.raises(ValueError, match="the buffer is closed"):
        memoryview(buffer)


def test_handles_outlive_their_device_in_any_order():
    device = weft.Device("local-task?workers=2")
    buffer = device.allocate(64)
    semaphore = device.semaphore(0)
    device.close()
    # The buffer and semaphore hold the device's parts they need.
    array = weft.as_array(buffer, np.uint8)
    array[:] = 7
    assert int(array.sum()) == 7 * 64
    semaphore.signal(1)
    assert semaphore.query() == 1
    del array
    semaphore.close()
    buffer.close()
