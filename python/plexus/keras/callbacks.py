"""Callbacks of Model.fit / evaluate / predict, with Keras 3's names, arguments and hooks.

History, ProgbarLogger (the progress bar), EarlyStopping, ModelCheckpoint,
ReduceLROnPlateau, LearningRateScheduler, CSVLogger, TensorBoard,
TerminateOnNaN, LambdaCallback, and the ``Callback`` base users subclass.
"""

from __future__ import annotations

import csv
import math
import os
import sys
import time

import numpy as np


class Callback:
    """The base class: override any of the ``on_*`` hooks; ``self.model`` is the model being trained."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass
    def on_train_batch_begin(self, batch, logs=None): pass
    def on_train_batch_end(self, batch, logs=None): pass
    def on_test_begin(self, logs=None): pass
    def on_test_end(self, logs=None): pass
    def on_test_batch_begin(self, batch, logs=None): pass
    def on_test_batch_end(self, batch, logs=None): pass
    def on_predict_begin(self, logs=None): pass
    def on_predict_end(self, logs=None): pass
    def on_predict_batch_begin(self, batch, logs=None): pass
    def on_predict_batch_end(self, batch, logs=None): pass


class CallbackList(Callback):
    """Calls every callback's hook in order; adds History and the progress bar as Keras does."""

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None, **params):
        super().__init__()
        self.callbacks = list(callbacks or [])
        if add_history and not any(isinstance(c, History) for c in self.callbacks):
            self.history = History()
            self.callbacks.append(self.history)
        else:
            self.history = next((c for c in self.callbacks if isinstance(c, History)), None)
        if add_progbar and not any(isinstance(c, ProgbarLogger) for c in self.callbacks):
            self.callbacks.insert(0, ProgbarLogger())
        if model is not None:
            self.set_model(model)
        self.set_params(params)

    def set_model(self, model):
        self.model = model
        for c in self.callbacks:
            c.set_model(model)

    def set_params(self, params):
        self.params = params
        for c in self.callbacks:
            c.set_params(params)

    def _call(self, name, *args):
        for c in self.callbacks:
            getattr(c, name)(*args)


for _hook in [n for n in vars(Callback) if n.startswith("on_")]:
    setattr(CallbackList, _hook, (lambda hook: lambda self, *a: self._call(hook, *a))(_hook))
del _hook


class History(Callback):
    """Records every epoch's logs: ``history.history["loss"]`` is the loss per epoch."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)
        if self.model is not None:
            self.model.history = self


def _format_logs(logs, skip=()):
    parts = []
    for k in sorted(logs or {}):
        if k in skip:
            continue
        v = logs[k]
        parts.append(f"{k}: {v:.4f}" if isinstance(v, float) and abs(v) >= 1e-3 or v == 0 else f"{k}: {v:.4e}"
                     if isinstance(v, float) else f"{k}: {v}")
    return " - ".join(parts)


class ProgbarLogger(Callback):
    """Keras's progress output: a bar with step count, ETA, time per step and running metrics.

    verbose=1: a bar redrawn in place on a terminal (one final line per epoch
    elsewhere); verbose=2: one line per epoch.
    """

    def __init__(self, stream=None):
        super().__init__()
        self.stream = stream or sys.stdout
        self.verbose = 1

    def set_params(self, params):
        super().set_params(params)
        self.verbose = params.get("verbose", 1)
        self.epochs = params.get("epochs", 1)
        self.steps = params.get("steps")

    def _interactive(self):
        isatty = getattr(self.stream, "isatty", None)
        try:
            return bool(isatty()) if isatty else False
        except ValueError:
            return False

    def on_epoch_begin(self, epoch, logs=None):
        if self.verbose:
            print(f"Epoch {epoch + 1}/{self.epochs}", file=self.stream, flush=True)
        self._start = time.perf_counter()
        self._seen = 0
        self._last = 0.0

    def on_train_batch_end(self, batch, logs=None):
        self._seen = batch + 1
        self._logs = logs
        if self.verbose == 1 and self._interactive():
            now = time.perf_counter()
            if now - self._last >= 0.1:
                self._last = now
                self._draw(logs, final=False)

    def _bar(self, done, total):
        if not total:
            return f"{done}/Unknown"
        filled = int(20 * done / total)
        return f"{done}/{total} " + "\u2501" * filled + "\u2500" * (20 - filled)

    def _draw(self, logs, final):
        elapsed = time.perf_counter() - self._start
        per_step = elapsed / max(self._seen, 1)
        total = self.steps
        if final:
            timing = f"{elapsed:.0f}s {per_step * 1e3:.0f}ms/step"
        else:
            eta = per_step * ((total or self._seen) - self._seen)
            timing = f"ETA {eta:.0f}s {per_step * 1e3:.0f}ms/step"
        line = f"{self._bar(self._seen, total)} {timing}"
        if logs:
            line += " - " + _format_logs(logs)
        end = "\n" if final else ""
        self.stream.write(("\r" if self._interactive() else "") + line + end)
        self.stream.flush()

    def on_epoch_end(self, epoch, logs=None):
        if self.verbose:
            if self.steps is None:
                self.steps = self._seen  # a dataset of unknown length: now it is known
            self._draw(logs, final=True)


class EarlyStopping(Callback):
    """Stops training when `monitor` has not improved by min_delta for `patience` epochs."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        self.monitor, self.patience, self.verbose = monitor, patience, verbose
        self.baseline, self.restore_best_weights, self.start_from_epoch = baseline, restore_best_weights, start_from_epoch
        self.min_delta = abs(min_delta)
        self.mode = _mode(mode, monitor)
        self.stopped_epoch = 0

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = math.inf if self.mode == "min" else -math.inf
        self.best_weights = None
        self.best_epoch = 0

    def _improved(self, value, reference):
        if self.mode == "min":
            return value < reference - self.min_delta
        return value > reference + self.min_delta

    def on_epoch_end(self, epoch, logs=None):
        value = (logs or {}).get(self.monitor)
        if value is None or epoch < self.start_from_epoch:
            if value is None:
                _warn(f"EarlyStopping: metric '{self.monitor}' is not in the logs ({', '.join(sorted(logs or {}))})")
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
        self.wait += 1
        if self._improved(value, self.best):
            self.best, self.best_epoch = value, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._improved(value, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose:
                    print(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by `factor` when `monitor` stops improving for `patience` epochs."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs):
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be < 1, got {factor}")
        self.monitor, self.factor, self.patience, self.verbose = monitor, factor, patience, verbose
        self.min_delta, self.cooldown, self.min_lr = min_delta, cooldown, min_lr
        self.mode = _mode(mode, monitor)

    def on_train_begin(self, logs=None):
        self.best = math.inf if self.mode == "min" else -math.inf
        self.wait = 0
        self.cooldown_counter = 0

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        logs["learning_rate"] = float(np.asarray(self.model.optimizer.learning_rate))
        value = logs.get(self.monitor)
        if value is None:
            _warn(f"ReduceLROnPlateau: metric '{self.monitor}' is not in the logs ({', '.join(sorted(logs))})")
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        better = value < self.best - self.min_delta if self.mode == "min" else value > self.best + self.min_delta
        if better:
            self.best, self.wait = value, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = float(np.asarray(self.model.optimizer.learning_rate))
                if old > self.min_lr:
                    new = max(old * self.factor, self.min_lr)
                    self.model.optimizer.learning_rate = new
                    if self.verbose:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class LearningRateScheduler(Callback):
    """Sets the learning rate at each epoch's start from schedule(epoch, lr)."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        lr = float(np.asarray(self.model.optimizer.learning_rate))
        new = float(self.schedule(epoch, lr))
        self.model.optimizer.learning_rate = new
        if self.verbose:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {new}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(np.asarray(self.model.optimizer.learning_rate))


class TerminateOnNaN(Callback):
    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(loss):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class LambdaCallback(Callback):
    """A callback from functions: on_epoch_end=lambda epoch, logs: ..., and so on."""

    def __init__(self, **hooks):
        super().__init__()
        for name, fn in hooks.items():
            if not name.startswith("on_") or not hasattr(Callback, name):
                raise TypeError(f"LambdaCallback: unknown hook {name!r}")
            setattr(self, name, fn)


class CSVLogger(Callback):
    """Writes one CSV row per epoch: epoch, then every log key in sorted order."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.sep, self.append = os.fspath(filename), separator, append
        self.keys = None

    def on_train_begin(self, logs=None):
        exists = self.append and os.path.exists(self.filename) and os.path.getsize(self.filename) > 0
        self.file = open(self.filename, "a" if self.append else "w", newline="")
        self.writer = None
        self._header_written = exists

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
        if self.writer is None:
            self.writer = csv.DictWriter(self.file, fieldnames=["epoch"] + self.keys, delimiter=self.sep)
            if not self._header_written:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update({k: logs.get(k, "NA") for k in self.keys})
        self.writer.writerow(row)
        self.file.flush()

    def on_train_end(self, logs=None):
        self.file.close()
        self.writer = None


class ModelCheckpoint(Callback):
    """Saves the model (.keras) or its weights (.weights.h5) after each epoch, or only the best one.

    `filepath` may hold format fields filled from the epoch and the logs:
    ``"ckpt-{epoch:02d}-{val_loss:.2f}.keras"``.
    """

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", initial_value_threshold=None):
        super().__init__()
        self.filepath = os.fspath(filepath)
        self.monitor, self.verbose, self.save_best_only = monitor, verbose, save_best_only
        self.save_weights_only, self.save_freq = save_weights_only, save_freq
        self.mode = _mode(mode, monitor)
        if save_weights_only and not self.filepath.endswith(".weights.h5"):
            raise ValueError(f"ModelCheckpoint: with save_weights_only=True the file name must end in .weights.h5, "
                             f"got {self.filepath!r}")
        if not save_weights_only and not self.filepath.endswith(".keras"):
            raise ValueError(f"ModelCheckpoint: the file name must end in .keras, got {self.filepath!r}")
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(f"ModelCheckpoint: save_freq must be 'epoch' or a number of batches, got {save_freq!r}")
        self.best = initial_value_threshold if initial_value_threshold is not None else (
            math.inf if self.mode == "min" else -math.inf)
        self._batches = 0

    def _save(self, epoch, logs):
        path = self.filepath.format(epoch=epoch + 1, **(logs or {}))
        if self.save_best_only:
            value = (logs or {}).get(self.monitor)
            if value is None:
                _warn(f"ModelCheckpoint: metric '{self.monitor}' is not in the logs; skipping")
                return
            better = value < self.best if self.mode == "min" else value > self.best
            if not better:
                return
            if self.verbose:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} to {value:.5f}, "
                      f"saving model to {path}")
            self.best = value
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)

    def on_train_batch_end(self, batch, logs=None):
        if isinstance(self.save_freq, int):
            self._batches += 1
            if self._batches % self.save_freq == 0:
                self._save(self._epoch, logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch, logs)


def _mode(mode, monitor):
    if mode not in ("auto", "min", "max"):
        raise ValueError(f"mode must be 'auto', 'min' or 'max', got {mode!r}")
    if mode != "auto":
        return mode
    name = monitor.replace("val_", "")
    return "max" if any(k in name for k in ("acc", "auc", "precision", "recall", "f1")) else "min"


def _warn(message):
    print(f"WARNING: {message}", file=sys.stderr)


from .tensorboard import TensorBoard  # noqa: E402,F401
