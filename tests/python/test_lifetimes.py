"""Handles free what they hold, closed or collected in any order."""
import gc
import itertools

import numpy as np
import pytest

import weft
from weft import _weft

DEVICES = ["local-sync", "local-task?workers=2"]


def _use(device):
    buffer = device.allocate(256)
    semaphore = device.semaphore(0)
    host = weft.Semaphore(name="host")
    device.fill(buffer, np.uint32(7), wait=[(host, 1)],
                signal=[(semaphore, 1)])
    host.signal(1)
    semaphore.wait(1, timeout=10)
    return {"device": device, "buffer": buffer, "semaphore": semaphore,
            "host": host}


@pytest.mark.parametrize("device_string", DEVICES)
@pytest.mark.parametrize("order", list(itertools.permutations(
    ["device", "buffer", "semaphore", "host"])))
def test_closing_in_any_order_frees_everything(device_string, order):
    gc.collect()
    before = _weft._live_allocations()
    objects = _use(weft.Device(device_string))
    assert _weft._live_allocations() > before
    for name in order:
        objects[name].close()
    assert _weft._live_allocations() == before


@pytest.mark.parametrize("device_string", DEVICES)
def test_collected_without_close_frees_everything(device_string):
    gc.collect()
    before = _weft._live_allocations()
    objects = _use(weft.Device(device_string))
    view = weft.as_array(objects["buffer"], np.uint32)
    assert int(view[3]) == 7
    del objects, view
    gc.collect()
    assert _weft._live_allocations() == before


def test_closing_the_device_cancels_what_waits_and_frees_it():
    gc.collect()
    before = _weft._live_allocations()
    device = weft.Device("local-task?workers=2")
    gate = weft.Semaphore()
    done = weft.Semaphore()
    buffer = device.allocate(64)
    device.fill(buffer, np.uint8(1), wait=[(gate, 1)], signal=[(done, 1)])
    # The device's last handle goes while the fill waits: as in C, a held
    # operation fails with CANCELLED, down its signal's timeline.
    buffer.close()
    device.close()
    with pytest.raises(weft.CancelledError,
                       match="the device was released while it waited"):
        done.wait(1, timeout=10)
    gate.close()
    done.close()
    assert _weft._live_allocations() == before
