"""Files through the queue, host calls, tracing."""
import json
import os
import sys
import threading

import numpy as np
import pytest

import weft


def test_read_and_write_files_through_the_queue(device, tmp_path):
    path = tmp_path / "data.bin"
    data = np.arange(64, dtype=np.float32)
    path.write_bytes(data.tobytes())
    target = weft.Tensor(device.allocate(data.nbytes), np.float32, (64,))
    step = weft.Semaphore()
    with weft.File(str(path)) as file:
        device.read(file, target, signal=[(step, 1)])
        step.wait(1, timeout=10)
    np.testing.assert_array_equal(target.numpy(), data)
    # Half of it back out, at an offset in the file.
    out_path = tmp_path / "out.bin"
    with weft.File(str(out_path), "w") as file:
        device.write((target.buffer, 128, 128), file, 16,
                     wait=[(step, 1)], signal=[(step, 2)])
        step.wait(2, timeout=10)
    written = out_path.read_bytes()
    assert written[:16] == bytes(16)
    assert written[16:] == data[32:].tobytes()


def test_file_errors_name_the_path(device, tmp_path):
    with pytest.raises(weft.NotFoundError, match="no-such-file"):
        weft.File(str(tmp_path / "no-such-file"))
    with pytest.raises(ValueError, match="mode must be"):
        weft.File(str(tmp_path / "x"), "a")
    file = weft.File(str(tmp_path / "short.bin"), "w")
    file.close()
    with pytest.raises(ValueError, match="the file is closed"):
        device.read(file, device.allocate(16))


def test_a_read_past_the_end_fails_down_the_timeline(device, tmp_path):
    path = tmp_path / "short.bin"
    path.write_bytes(b"12345678")
    done = weft.Semaphore()
    with weft.File(str(path)) as file:
        try:
            device.read(file, device.allocate(64), signal=[(done, 1)])
        except weft.Error as error:  # refused at once, naming the range
            assert "64" in str(error)
            return
        with pytest.raises(weft.Error, match="64"):
            done.wait(1, timeout=10)


def test_a_host_call_runs_in_order_with_the_gil(device):
    seen = []
    gate = weft.Semaphore()
    done = weft.Semaphore()
    buffer = device.allocate(16)
    device.fill(buffer, np.uint32(5), wait=[(gate, 1)], signal=[(done, 1)])
    device.host_call(lambda: seen.append(
        (threading.current_thread().name,
         int(np.asarray(buffer).view(np.uint32)[0]))),
        wait=[(done, 1)], signal=[(done, 2)])
    assert seen == []
    gate.signal(1)
    done.wait(2, timeout=10)
    assert len(seen) == 1 and seen[0][1] == 5


def test_a_host_call_that_raises_fails_its_signals(device):
    done = weft.Semaphore()

    def refuse():
        raise weft.OutOfRangeError("step 3 is past the data")

    device.host_call(refuse, signal=[(done, 1)])
    with pytest.raises(weft.OutOfRangeError, match="step 3 is past the data"):
        done.wait(1, timeout=10)
    other = weft.Semaphore()
    device.host_call(lambda: 1 / 0, signal=[(other, 1)])
    with pytest.raises(weft.UnknownError, match="ZeroDivisionError"):
        other.wait(1, timeout=10)
    with pytest.raises(TypeError, match="fn must be callable"):
        device.host_call(42)


def test_a_host_call_that_will_not_run_lets_go_of_its_function(device):
    import gc
    import weakref

    class Marker:
        def __call__(self):
            raise AssertionError("must not run")

    marker = Marker()
    watched = weakref.ref(marker)
    gate = weft.Semaphore()
    done = weft.Semaphore()
    device.host_call(marker, wait=[(gate, 1)], signal=[(done, 1)])
    del marker
    gc.collect()
    assert watched() is not None  # the queued call holds it
    gate.fail("cancelled upstream", code=1)
    with pytest.raises(weft.CancelledError, match="cancelled upstream"):
        done.wait(1, timeout=10)
    gc.collect()
    assert watched() is None


def test_tracing_writes_a_trace(device, tmp_path):
    path = tmp_path / "trace.json"
    weft.trace_start(str(path))
    done = weft.Semaphore()
    device.fill(device.allocate(64), np.uint8(1), signal=[(done, 1)])
    done.wait(1, timeout=10)
    weft.trace_stop()
    trace = json.loads(path.read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    assert any("fill" in str(event.get("name", "")) for event in events)


def test_parameters_stream_into_tensors(device, tmp_path):
    arrays = [np.arange(n, dtype=np.float32) * (i + 1)
              for i, n in enumerate((1000, 300, 7))]
    path = tmp_path / "params.bin"
    path.write_bytes(b"".join(a.tobytes() for a in arrays))
    tensors = [weft.Tensor(device.allocate(a.nbytes), np.float32, a.shape)
               for a in arrays]
    offsets = np.cumsum([0] + [a.nbytes for a in arrays])[:-1]
    with weft.File(str(path)) as file:
        stream = device.load_parameters(
            [(file, int(o), t) for o, t in zip(offsets, tensors)],
            max_reads_in_flight=2, chunk_size=512)
        stream.wait(timeout=30)
        progress = stream.progress
        stream.close()
    assert progress["bytes_loaded"] == progress["bytes_total"] == sum(
        a.nbytes for a in arrays)
    assert progress["spans_loaded"] == progress["span_count"] == 3
    for array, tensor in zip(arrays, tensors):
        np.testing.assert_array_equal(tensor.numpy(), array)


def test_a_span_past_the_file_is_named(device, tmp_path):
    path = tmp_path / "short.bin"
    path.write_bytes(bytes(100))
    with weft.File(str(path)) as file:
        with pytest.raises(weft.OutOfRangeError,
                           match=r"span 1: read of \[64, 128\) is past the end"):
            stream = device.load_parameters(
                [(file, 0, device.allocate(64)),
                 (file, 64, device.allocate(64))])
            stream.wait(timeout=30)
    with pytest.raises(TypeError, match="must be .file, file_offset"):
        device.load_parameters([(1, 2)])


def test_closing_a_stream_another_thread_waits_on_is_refused(tmp_path):
    # The stream reads a FIFO, so it runs until the test writes into it.
    # local-task: its reads run off the submitting thread (local-sync would
    # block inside load_parameters).
    fifo = tmp_path / "params.fifo"
    os.mkfifo(fifo)
    data = bytes(range(64))
    fed = threading.Lock()

    def feed():
        # Once, from the test or the watchdog: the read then completes, so
        # even a failing test cannot leave a worker blocked for good.
        if fed.acquire(blocking=False):
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.write(writer, data)
            os.close(writer)

    watchdog = threading.Timer(20.0, feed)
    with weft.Device("local-task?workers=2") as device, \
            weft.File(str(fifo), "r+") as file:  # r+: no wait for a writer
        target = device.allocate(len(data))
        stream = device.load_parameters([(file, 0, target)])
        watchdog.start()
        outcome = []

        def waiter():
            try:
                stream.wait(timeout=30)
                outcome.append("loaded")
            except Exception as error:  # reported by the assert below
                outcome.append(error)

        thread = threading.Thread(target=waiter)
        # This thread gets the GIL back only when the waiter lets go of it
        # (a switch interval longer than the case: it is not taken from
        # the waiter), and the first place the waiter does is inside
        # wait(), once it counts itself there: when start() returns, it
        # is in. (CPython's GIL: a free-threaded build needs another way.)
        interval = sys.getswitchinterval()
        sys.setswitchinterval(3600)
        try:
            thread.start()
            sys.setswitchinterval(interval)
            with pytest.raises(RuntimeError,
                               match="another thread is in wait"):
                stream.close()
            assert stream.progress["bytes_loaded"] == 0  # still usable
        finally:
            sys.setswitchinterval(interval)
            feed()
            thread.join(30)
            watchdog.cancel()
        assert outcome == ["loaded"]
        stream.close()  # nobody waits now
        stream.close()  # idempotent
        assert bytes(memoryview(target)) == data
