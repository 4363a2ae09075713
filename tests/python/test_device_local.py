"""Tensors of device-local memory: NumPy through a copy on the queue, DLPack
refused; host-visible tensors still shared without one."""
import gc
import os

import numpy as np
import pytest

import weft
from weft import _weft

# Every device whose buffers can be device-local: the CPU drivers (their
# host_visible=False memory refuses the host a mapping), the cuda driver
# over its test double (device memory the host cannot reach, as on a GPU)
# and vulkan on Mesa's software device, where the build has them.
DEVICES = ["local-sync", "local-task?workers=2"]
if os.environ.get("WEFT_CUDA_DRIVER_LIBRARY"):
    DEVICES.append("cuda")
if os.environ.get("VK_ICD_FILENAMES"):
    DEVICES.append("vulkan")


@pytest.fixture(params=DEVICES)
def device(request):
    if request.param.split("?")[0] not in dict(weft.drivers()):
        pytest.skip(f"no {request.param} driver in this build")
    try:
        device = weft.Device(request.param)
    except weft.UnavailableError as error:
        pytest.skip(f"no {request.param} device: {error}")
    with device:
        yield device


def _data_pointer(array):
    return array.__array_interface__["data"][0]


def test_a_device_local_buffer_refuses_the_host_a_mapping(device):
    buffer = device.allocate(64, host_visible=False)
    assert not buffer.host_visible
    assert buffer.device is device
    with pytest.raises(BufferError, match="cannot be mapped by the host"):
        memoryview(buffer)


def test_numpy_copies_a_device_local_tensor_out(device):
    source = np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 0.5
    tensor = weft.Tensor.from_numpy(source, device, host_visible=False)
    assert not tensor.buffer.host_visible
    assert "device-local" in repr(tensor)
    first = tensor.numpy()
    np.testing.assert_array_equal(first, source)
    np.testing.assert_array_equal(np.asarray(tensor), source)
    # Each a copy of its own: writing one changes neither the tensor nor
    # the next copy.
    second = tensor.numpy()
    assert _data_pointer(first) != _data_pointer(second)
    first[0, 0, 0] = -1.0
    np.testing.assert_array_equal(tensor.numpy(), source)
    with pytest.raises(ValueError, match="only as a copy"):
        tensor.__array__(copy=False)


def test_the_copy_reads_what_the_queue_wrote(device):
    # Part of a device-local buffer, at an offset, after queued writes.
    buffer = device.allocate(256, host_visible=False)
    step = weft.Semaphore()
    device.fill(buffer, np.uint32(7), signal=[(step, 1)])
    device.update(np.arange(8, dtype=np.uint32), buffer, 64,
                  wait=[(step, 1)], signal=[(step, 2)])
    step.wait(2, timeout=30)
    tensor = weft.Tensor(buffer, np.uint32, (4, 4), byte_offset=48)
    expected = np.array([7] * 4 + list(range(8)) + [7] * 4, np.uint32)
    np.testing.assert_array_equal(tensor.numpy(), expected.reshape(4, 4))
    # An empty tensor copies nothing.
    assert weft.Tensor(buffer, np.float32, (0, 3)).numpy().shape == (0, 3)


def test_a_large_tensor_copies_both_ways(device):
    source = np.random.default_rng(3).standard_normal(1 << 18)
    tensor = weft.Tensor.from_numpy(source, device, host_visible=False)
    np.testing.assert_array_equal(tensor.numpy(), source)


def test_host_visible_tensors_still_share_memory(device):
    source = np.arange(16, dtype=np.int32)
    tensor = weft.Tensor(device.allocate(128), np.int32, (16,),
                         byte_offset=64)
    assert tensor.buffer.host_visible
    tensor.numpy()[:] = source
    mapped = np.frombuffer(memoryview(tensor.buffer), np.uint8)
    view = tensor.numpy()
    # The buffer's own memory, no copy: the same address, shared writes.
    assert _data_pointer(view) == _data_pointer(mapped) + 64
    assert _data_pointer(np.asarray(tensor)) == _data_pointer(view)
    view[3] = -3
    assert tensor.numpy()[3] == -3
    del mapped, view


def test_dlpack_refuses_device_local_memory(device):
    tensor = weft.Tensor.from_numpy(np.ones(4, np.float32), device,
                                    host_visible=False)
    for take in (tensor.__dlpack__, tensor.__dlpack_device__,
                 lambda: np.from_dlpack(tensor)):
        with pytest.raises(BufferError, match="device-local .*numpy()"):
            take()
    # What the message offers works: a host copy, handed over by DLPack.
    copy = weft.from_dlpack(tensor.numpy(), device, host_visible=False)
    np.testing.assert_array_equal(copy.numpy(), np.ones(4, np.float32))


def test_a_device_local_tensor_needs_its_device(device):
    buffer = device.allocate(16, host_visible=False)
    tensor = weft.Tensor(buffer, np.float32, (4,))
    device.close()
    with pytest.raises(ValueError, match="the device is closed"):
        tensor.numpy()


def test_a_device_local_tensor_whose_device_is_gone():
    device = weft.Device("local-sync")
    tensor = weft.Tensor.from_numpy(np.ones(2), device, host_visible=False)
    del device
    gc.collect()
    assert tensor.buffer.device is None
    with pytest.raises(ValueError, match="allocated it is gone"):
        tensor.numpy()


def test_copies_out_free_everything():
    gc.collect()
    before = _weft._live_allocations()
    with weft.Device("local-task?workers=2") as device:
        tensor = weft.Tensor.from_numpy(np.arange(6.0), device,
                                        host_visible=False)
        copy = tensor.numpy()
        assert copy.sum() == 15.0
        del tensor
        gc.collect()
        # The copy keeps its own host-visible buffer alive until it goes.
        assert copy.sum() == 15.0
        del copy
    gc.collect()
    assert _weft._live_allocations() == before
