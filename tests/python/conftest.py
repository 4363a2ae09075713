"""Shared fixtures: every test runs on each CPU driver."""
import pytest

import weft

DEVICES = ["local-sync", "local-task?workers=2"]


@pytest.fixture(params=DEVICES)
def device(request):
    with weft.Device(request.param) as device:
        yield device
