"""The TensorBoard callback: epoch (and batch) scalars and the train step's graph.

Logs go to ``log_dir/train`` and ``log_dir/validation`` with Keras's tags
(``epoch_loss``, ``epoch_accuracy``, ``batch_loss`` with update_freq="batch"
or a number of batches, ``epoch_learning_rate``), readable by the
``tensorboard`` program; with ``write_graph`` the traced train step's
GraphDef is written to the train log once.
"""

from __future__ import annotations

import os

import numpy as np

from .. import summary as _summary
from .callbacks import Callback


class TensorBoard(Callback):
    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
                 embeddings_metadata=None):
        super().__init__()
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq, self.write_graph = histogram_freq, write_graph
        self.write_steps_per_second = write_steps_per_second
        if update_freq not in ("epoch", "batch") and not isinstance(update_freq, int):
            raise ValueError(f"TensorBoard: update_freq must be 'epoch', 'batch' or an int, got {update_freq!r}")
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self._train = self._val = None
        self._graph_written = False
        self._global_batch = 0

    def _writer(self, which):
        attr = "_train" if which == "train" else "_val"
        w = getattr(self, attr)
        if w is None:
            w = _summary.create_file_writer(os.path.join(self.log_dir, which))
            setattr(self, attr, w)
        return w

    def on_train_begin(self, logs=None):
        self._global_batch = 0

    def on_train_batch_end(self, batch, logs=None):
        self._global_batch += 1
        if self.write_graph and not self._graph_written:
            graph = getattr(self.model, "_train_graph_def", None)
            if graph is not None:
                self._writer("train").graph(graph(), 0)
                self._graph_written = True
        if isinstance(self.update_freq, int) and self._global_batch % self.update_freq == 0:
            w = self._writer("train")
            for k, v in (logs or {}).items():
                w.scalar(f"batch_{k}", float(v), self._global_batch)

    def on_epoch_begin(self, epoch, logs=None):
        import time
        self._epoch_start = time.perf_counter()
        self._epoch_batches = self._global_batch

    def on_epoch_end(self, epoch, logs=None):
        import time
        logs = logs or {}
        train, val = self._writer("train"), None
        for k, v in logs.items():
            if k.startswith("val_"):
                val = val or self._writer("validation")
                val.scalar(f"epoch_{k[4:]}", float(v), epoch)
            else:
                train.scalar(f"epoch_{k}", float(v), epoch)
        lr = getattr(getattr(self.model, "optimizer", None), "learning_rate", None)
        if lr is not None and "learning_rate" not in logs:
            try:
                train.scalar("epoch_learning_rate", float(np.asarray(lr)), epoch)
            except (TypeError, ValueError):
                pass
        if self.write_steps_per_second:
            steps = self._global_batch - self._epoch_batches
            train.scalar("epoch_steps_per_second", steps / max(time.perf_counter() - self._epoch_start, 1e-9), epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            for w in self.model.weights:
                train.histogram(w.path, w.numpy(), epoch)
        train.flush()
        if val is not None:
            val.flush()

    def on_train_end(self, logs=None):
        for w in (self._train, self._val):
            if w is not None:
                w.close()
        self._train = self._val = None
