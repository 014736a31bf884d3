"""prefetch: a background thread keeps up to N elements ready."""

from __future__ import annotations

import queue
import threading

from .dataset import Dataset

_END = object()


class _Failure:
    def __init__(self, error):
        self.error = error


def prefetched(ds, size):
    def make():
        q = queue.Queue(maxsize=size)
        stop = threading.Event()

        def produce():
            try:
                for element in ds._numpy_iter():
                    while not stop.is_set():
                        try:
                            q.put(element, timeout=0.1)
                            break
                        except queue.Full:
                            continue
                    if stop.is_set():
                        return
                q.put(_END)
            except BaseException as e:  # noqa: BLE001  (re-raised in the consumer)
                q.put(_Failure(e))

        worker = threading.Thread(target=produce, name="plexus-data-prefetch", daemon=True)
        worker.start()
        try:
            while True:
                item = q.get()
                if item is _END:
                    return
                if isinstance(item, _Failure):
                    raise item.error
                yield item
        finally:
            stop.set()
            while worker.is_alive():
                try:
                    q.get_nowait()
                except queue.Empty:
                    worker.join(timeout=0.05)
    return Dataset(make, ds.element_spec, ds.cardinality())
