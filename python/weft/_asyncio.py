"""asyncio support: awaiting semaphores without a thread per wait.

Each event loop gets one ``_weft.Notifier``: an eventfd the loop watches
(``add_reader``) and a list that weft's timepoints push onto from whatever
thread moves a semaphore. The loop's thread drains it and resolves the
futures, so no Python code runs on a weft thread and one loop awaits any
number of semaphores.
"""
import asyncio
import weakref

from . import _weft

_notifiers = weakref.WeakKeyDictionary()


def _notifier(loop):
    notifier = _notifiers.get(loop)
    if notifier is None:
        notifier = _weft.Notifier()
        loop.add_reader(notifier.fileno(), notifier.drain)
        _notifiers[loop] = notifier
    return notifier


async def wait(semaphore, value):
    """Waits until ``semaphore`` reaches ``value`` on the running loop;
    raises the failure (a ``weft.Error``) if it fails first."""
    loop = asyncio.get_running_loop()
    notifier = _notifier(loop)
    future = loop.create_future()
    watch = notifier.watch(semaphore, value, future)
    try:
        await future
    except asyncio.CancelledError:
        notifier.cancel(watch)
        raise


async def wait_all(pairs):
    """Waits until every ``(semaphore, value)`` of ``pairs`` is reached."""
    await asyncio.gather(*(wait(semaphore, value)
                           for semaphore, value in pairs))


def pending_watches(loop=None):
    """Watches registered on ``loop``'s notifier (default: the running
    loop) and not yet resolved; for tests and diagnostics."""
    loop = loop or asyncio.get_running_loop()
    notifier = _notifiers.get(loop)
    return notifier.pending if notifier is not None else 0
