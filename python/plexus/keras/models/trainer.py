"""Model.compile, fit, evaluate and predict: Keras 3's training loop over traced steps.

The train step (forward pass, loss, gradients, optimizer update, metric
updates) is traced once per input signature with ``plexus.function`` and
runs as one graph per batch; so are the test and predict steps. Metric
state lives in variables updated by the step's graph; the logs of a step
are the metrics' results, read back as floats.
"""

from __future__ import annotations

import numpy as np

import plexus as px

from .. import _backend as B
from .. import callbacks as C
from .. import losses as L
from .. import metrics as M
from .. import optimizers as O
from . import data_adapter as D


def _flat(structure):
    return D._flat(structure)


class CompileState:
    """The losses and metrics given to compile(), matched to the model's outputs at the first batch."""

    def __init__(self, loss, loss_weights, metrics, weighted_metrics):
        self.loss, self.loss_weights = loss, loss_weights
        self.metrics_arg, self.weighted_metrics_arg = metrics, weighted_metrics
        self.built = False
        self.loss_tracker = M.Mean(name="loss")
        self.output_loss_trackers = []
        self.entries = []  # (output index, loss object, weight)
        self.metrics = []  # (output index, metric, weighted)
        for item in D._flat(loss if not isinstance(loss, dict) else list(loss.values())):
            L.get(item)  # an unknown name fails at compile, not at the first batch

    def build(self, output_names, y_true, y_pred):
        ps = _flat(y_pred)
        n = len(ps)
        names = list(y_pred) if isinstance(y_pred, dict) else list(output_names or [f"output_{i}" for i in range(n)])
        self.names = names
        ys = self.targets(y_true)
        losses = self._per_output(self.loss, names, n, "loss")
        weights = self._per_output(self.loss_weights, names, n, "loss_weights", default=1.0)
        for i, (loss, w) in enumerate(zip(losses, weights)):
            if loss is not None:
                self.entries.append((i, L.get(loss), 1.0 if w is None else float(w)))
        if n > 1 and len(self.entries) > 1:
            self.output_loss_trackers = [(i, M.Mean(name=f"{names[i]}_loss")) for i, _, _ in self.entries]
        for arg, weighted in ((self.metrics_arg, False), (self.weighted_metrics_arg, True)):
            per_output = self._per_output(arg, names, n, "metrics", nested=True)
            for i, ms in enumerate(per_output):
                for m in ms or []:
                    loss = next((e[1] for e in self.entries if e[0] == i), None)
                    metric = M.get(m, loss=getattr(loss, "fn", loss), y_true=ys[i] if i < len(ys) else None,
                                   y_pred=ps[i])
                    if n > 1:
                        metric.name = f"{names[i]}_{metric.name}"
                    self.metrics.append((i, metric, weighted))
        self.built = True

    @staticmethod
    def _per_output(arg, names, n, what, default=None, nested=False):
        if arg is None:
            return [default] * n
        if isinstance(arg, dict):
            unknown = set(arg) - set(names)
            if unknown:
                raise ValueError(f"compile({what}=...): no output named {sorted(unknown)}; outputs: {names}")
            return [arg.get(k, default) for k in names]
        if nested:
            if isinstance(arg, (list, tuple)) and n > 1 and arg and all(
                    isinstance(a, (list, tuple)) or a is None for a in arg):
                if len(arg) != n:
                    raise ValueError(f"compile({what}=...): {len(arg)} lists for {n} outputs")
                return list(arg)
            return [list(arg) if isinstance(arg, (list, tuple)) else [arg]] * n if n == 1 else \
                [list(arg) if isinstance(arg, (list, tuple)) else [arg] for _ in range(n)]
        if isinstance(arg, (list, tuple)):
            if len(arg) != n:
                raise ValueError(f"compile({what}=...): {len(arg)} entries for {n} outputs")
            return list(arg)
        return [arg] * n

    def targets(self, y_true):
        """The targets in output order (a dict of targets is matched by output name)."""
        if isinstance(y_true, dict):
            missing = [k for k in self.names if k not in y_true]
            if missing:
                raise ValueError(f"the targets have no entry for outputs {missing} (they have {sorted(y_true)})")
            return [y_true[k] for k in self.names]
        return _flat(y_true)

    def all_metrics(self):
        return [self.loss_tracker] + [t for _, t in self.output_loss_trackers] + [m for _, m, _ in self.metrics]


class Trainer:
    """The training API of Model (mixed into it)."""

    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None, weighted_metrics=None,
                run_eagerly=False, steps_per_execution=1, jit_compile="auto", auto_scale_loss=True):
        opt = O.get(optimizer)
        if auto_scale_loss and self.dtype_policy.compute_dtype == "float16" and not isinstance(
                opt, O.LossScaleOptimizer):
            opt = O.LossScaleOptimizer(opt)
        self.optimizer = opt
        self.loss = loss
        self._compile_state = CompileState(loss, loss_weights, metrics, weighted_metrics)
        self.run_eagerly = run_eagerly
        self.steps_per_execution = steps_per_execution
        self._reset_steps()
        self.compiled = True

    def _reset_steps(self):
        self._train_fn = self._test_fn = self._predict_fn = None

    @property
    def metrics(self):
        state = getattr(self, "_compile_state", None)
        return [] if state is None else state.all_metrics()

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    def reset_metrics(self):
        for m in self.metrics:
            m.reset_state()

    def _check_compiled(self, what):
        if getattr(self, "_compile_state", None) is None:
            raise RuntimeError(f"{what}: call model.compile(optimizer, loss, ...) first")

    # -- steps ---------------------------------------------------------------------
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The total loss of a batch: the compiled losses (weighted) plus the layers' regularization losses."""
        state = self._compile_state
        if not state.built:
            state.build(getattr(self, "output_names", None), y, y_pred)
        ys, ps = state.targets(y), _flat(y_pred)
        total = None
        for k, (i, loss_fn, weight) in enumerate(state.entries):
            if i >= len(ys):
                raise ValueError(f"the model has {len(ps)} outputs but the data has {len(ys)} targets")
            value = loss_fn(ys[i], ps[i], sample_weight)
            if state.output_loss_trackers:
                state.output_loss_trackers[k][1].update_state(value)
            term = value * B.scalar(weight, value.dtype) if weight != 1.0 else value
            total = term if total is None else total + term
        extra = [B.cast(l, "float32") for l in self.losses]
        if extra:
            reg = px.add_n(extra) if len(extra) > 1 else extra[0]
            total = reg if total is None else total + reg
        if total is None:
            raise ValueError("no loss to minimize: compile with a loss, or add losses with add_loss")
        return total

    def _update_metrics(self, x, y, y_pred, sample_weight, loss):
        state = self._compile_state
        batch = B.cast(B.dim(_flat(x)[0], 0), "float32")
        state.loss_tracker.update_state(loss, sample_weight=batch)
        ys, ps = state.targets(y), _flat(y_pred)
        for i, metric, weighted in state.metrics:
            metric.update_state(ys[i], ps[i], sample_weight if weighted else None)
        return {m.name: m.result() for m in state.all_metrics()}

    def train_step(self, data):
        x, y, sample_weight = D.unpack(data)
        opt = self.optimizer
        with px.GradientTape() as tape:
            with B.training_scope(True):
                y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight)
            scaled = opt.scale_loss(loss) if isinstance(opt, O.LossScaleOptimizer) else loss
        variables = self.trainable_weights
        grads = tape.gradient(scaled, variables)
        opt.apply_gradients(zip(grads, variables))
        return self._update_metrics(x, y, y_pred, sample_weight, loss)

    def test_step(self, data):
        x, y, sample_weight = D.unpack(data)
        with B.training_scope(False):
            y_pred = self(x, training=False)
        loss = self.compute_loss(x, y, y_pred, sample_weight, training=False)
        return self._update_metrics(x, y, y_pred, sample_weight, loss)

    def predict_step(self, data):
        x, _, _ = D.unpack(data)
        with B.training_scope(False):
            return self(x, training=False)

    def _step_fn(self, kind):
        attr = f"_{kind}_fn"
        fn = getattr(self, attr, None)
        if fn is None:
            step = getattr(self, f"{kind}_step")
            fn = step if self.run_eagerly else px.function(step)
            setattr(self, attr, fn)
        return fn

    def _train_graph_def(self):
        fn = self._train_fn
        if isinstance(fn, px.function) and fn._cache:
            return next(iter(fn._cache.values())).graph_def()
        return None

    # -- loops -----------------------------------------------------------------------
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_batch_size=None, validation_freq=1):
        """Trains for `epochs` epochs; returns the History (loss and metrics per epoch)."""
        self._check_compiled("fit")
        if validation_split and validation_data is None:
            if D.is_dataset(x):
                raise ValueError("validation_split is not supported with a dataset; give validation_data")
            (x, y, sample_weight), validation_data = D.split_validation(x, y, sample_weight, validation_split)
        train = D.make_batches(x, y, sample_weight, batch_size, shuffle, class_weight, steps_per_epoch)
        val = None
        if validation_data is not None:
            vx, vy, vsw = D.unpack(tuple(validation_data)) if isinstance(validation_data, (list, tuple)) \
                else (validation_data, None, None)
            val = D.make_batches(vx, vy, vsw, validation_batch_size or batch_size, False, None, validation_steps)
        verbose = 1 if verbose == "auto" else verbose
        cbs = callbacks if isinstance(callbacks, C.CallbackList) else C.CallbackList(
            callbacks, add_history=True, add_progbar=verbose != 0, model=self, verbose=verbose, epochs=epochs,
            steps=train.num_batches)
        self.stop_training = False
        train_fn = self._step_fn("train")
        cbs.on_train_begin()
        logs = {}
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            cbs.on_epoch_begin(epoch)
            step_logs = None
            for step, batch in enumerate(train):
                cbs.on_train_batch_begin(step)
                step_logs = train_fn(batch)
                cbs.on_train_batch_end(step, _floats(step_logs))
                if self.stop_training:
                    break
            if step_logs is None:
                raise ValueError("fit: the training data yielded no batch")
            logs = _floats(step_logs)
            if val is not None and (epoch + 1) % validation_freq == 0:
                val_logs = self._evaluate_batches(val, None)
                logs.update({f"val_{k}": v for k, v in val_logs.items()})
            cbs.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        cbs.on_train_end(logs)
        return cbs.history

    def _evaluate_batches(self, batches, cbs):
        self.reset_metrics()
        test_fn = self._step_fn("test")
        logs = None
        for step, batch in enumerate(batches):
            if cbs:
                cbs.on_test_batch_begin(step)
            logs = test_fn(batch)
            if cbs:
                cbs.on_test_batch_end(step, _floats(logs))
        if logs is None:
            raise ValueError("evaluate: the data yielded no batch")
        return _floats(logs)

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, return_dict=False):
        """The loss and metrics over the data: a float, a list [loss, metrics...] or a dict."""
        self._check_compiled("evaluate")
        batches = D.make_batches(x, y, sample_weight, batch_size, False, None, steps)
        cbs = C.CallbackList(callbacks, model=self, verbose=0, steps=batches.num_batches)
        cbs.on_test_begin()
        logs = self._evaluate_batches(batches, cbs)
        cbs.on_test_end(logs)
        if return_dict:
            return logs
        values = [logs[m.name] for m in self.metrics if m.name in logs]
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """The model's outputs for every sample, as NumPy arrays (concatenated over batches)."""
        batches = D.make_batches(x, None, None, batch_size, False, None, steps)
        fn = self._step_fn("predict")
        cbs = C.CallbackList(callbacks, model=self, verbose=0)
        cbs.on_predict_begin()
        outputs = []
        for step, batch in enumerate(batches):
            cbs.on_predict_batch_begin(step)
            out = fn(batch)
            outputs.append(D._map(out, lambda t: t.numpy()))
            cbs.on_predict_batch_end(step, {"outputs": out})
        cbs.on_predict_end()
        if not outputs:
            raise ValueError("predict: the data yielded no batch")
        return _concat(outputs)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        self._check_compiled("train_on_batch")
        batch = next(iter(D.make_batches(x, y, sample_weight, len(_flat(D._map(x, D._to_numpy))[0]), False,
                                         class_weight)))
        logs = _floats(self._step_fn("train")(batch))
        return logs if return_dict else _as_list(logs, self)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        self._check_compiled("test_on_batch")
        self.reset_metrics()
        batch = next(iter(D.make_batches(x, y, sample_weight, len(_flat(D._map(x, D._to_numpy))[0]))))
        logs = _floats(self._step_fn("test")(batch))
        return logs if return_dict else _as_list(logs, self)

    def predict_on_batch(self, x):
        out = self._step_fn("predict")((D._map(x, B.convert), None, None))
        return D._map(out, lambda t: t.numpy())


def _floats(logs):
    return {k: float(np.asarray(v.numpy() if hasattr(v, "numpy") else v)) for k, v in logs.items()}


def _as_list(logs, model):
    values = [logs[m.name] for m in model.metrics if m.name in logs]
    return values[0] if len(values) == 1 else values


def _concat(outputs):
    first = outputs[0]
    if isinstance(first, dict):
        return {k: _concat([o[k] for o in outputs]) for k in first}
    if isinstance(first, (list, tuple)):
        return type(first)(_concat([o[i] for o in outputs]) for i in range(len(first)))
    return np.concatenate(outputs, axis=0)
