"""Keras 3's optimizers: names, defaults and update rules, over plexus's fused update ops.

SGD, Adam, AdamW and RMSprop use plexus's fused kernels (one op per
variable); Adagrad, Adadelta, Adamax, Nadam and Lion are written with
plain ops. All of them add Keras's options: ``weight_decay`` (decoupled,
applied before the update), ``clipnorm``, ``clipvalue`` and
``global_clipnorm``. The learning rate lives in a variable, so callbacks
that change it (ReduceLROnPlateau) take effect in an already-traced train
step; a ``LearningRateSchedule`` is computed from the step in the graph.
"""

from __future__ import annotations

import numpy as np

import plexus as px

from .. import _plexus
from .. import optimizers as _pxo
from . import _backend as B
from .variables import KerasVariable

schedules = _pxo


class _LearningRate:
    """The optimizer's learning rate: a variable, or a schedule of the step."""

    def __init__(self, value, name):
        self.schedule = value if isinstance(value, _pxo.LearningRateSchedule) or callable(value) and not \
            isinstance(value, (int, float)) else None
        self.variable = None if self.schedule else KerasVariable(
            float(value), name="learning_rate", path=f"{name}/learning_rate", trainable=False, dtype="float32")

    def __call__(self, step):
        if self.schedule is not None:
            return self.schedule(step)
        return self.variable.read_value()


class KerasOptimizerMixin:
    """Keras's options around a plexus optimizer's apply_gradients."""

    def _keras_init(self, name, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None,
                    global_clipnorm=None, loss_scale_factor=None, gradient_accumulation_steps=None, **ignored):
        unknown = set(ignored) - {"use_ema", "ema_momentum", "ema_overwrite_frequency", "jit_compile"}
        if unknown:
            raise TypeError(f"{type(self).__name__}: unrecognized arguments {sorted(unknown)}")
        if sum(x is not None for x in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(f"{type(self).__name__}: give at most one of clipnorm, clipvalue, global_clipnorm")
        self.name = name
        self._lr = _LearningRate(learning_rate, name)
        self.weight_decay = weight_decay
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        self.loss_scale_factor = loss_scale_factor
        self._exclude_from_decay: set = set()
        return self._lr

    @property
    def learning_rate(self):
        """The learning rate variable (``.assign(x)``, ``float(...)``), or the schedule."""
        return self._lr.schedule if self._lr.schedule is not None else self._lr.variable

    @learning_rate.setter
    def learning_rate(self, value):
        lr = self.__dict__.get("_lr")
        if lr is None:  # the plexus base class's constructor
            self.__dict__["_raw_lr"] = value
            return
        if isinstance(value, _pxo.LearningRateSchedule):
            raise ValueError("cannot replace a float learning rate by a schedule after the optimizer was created")
        lr.variable.assign(float(value))

    def _lr_tensor(self, step):
        return self._lr(step)

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        for v in var_list or []:
            self._exclude_from_decay.add(id(v))
        self._exclude_names = list(var_names or [])

    def _clip(self, grads):
        if self.clipvalue is not None:
            c = float(self.clipvalue)
            grads = [None if g is None else px.clip_by_value(g, -c, c) for g in grads]
        if self.clipnorm is not None:
            grads = [None if g is None else _clip_norm(g, float(self.clipnorm)) for g in grads]
        if self.global_clipnorm is not None:
            present = [g for g in grads if g is not None]
            norm = px.sqrt(px.add_n([px.reduce_sum(g * g) for g in present]))
            scale = px.minimum(B.scalar(1.0, "float32"), B.scalar(float(self.global_clipnorm), "float32") /
                               px.maximum(norm, B.scalar(1e-12, "float32")))
            grads = [None if g is None else g * B.cast(scale, g.dtype) for g in grads]
        return grads

    def _decay(self, variables):
        if not self.weight_decay:
            return
        lr = self._lr(self._step.read_value())
        names = getattr(self, "_exclude_names", [])
        for v in variables:
            if id(v) in self._exclude_from_decay or any(n in v.name for n in names):
                continue
            v.assign_sub(v.read_value() * B.cast(lr * B.scalar(float(self.weight_decay), "float32"), v.dtype))

    def apply_gradients(self, grads_and_vars):
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            return
        grads = self._clip([g for g, _ in pairs])
        variables = [v for _, v in pairs]
        if self._step is None:
            self._step = px.Variable(0.0, trainable=False, name="iterations", dtype="float32")
        self._decay(variables)
        super().apply_gradients(zip(grads, variables))
        for v in variables:
            constraint = getattr(v, "constraint", None)
            if constraint is not None:
                v.assign(constraint(v.read_value()))

    def variables(self):
        extra = [] if self._lr.variable is None else [self._lr.variable]
        return extra + super().variables()

    def _counter_variables(self):
        """State an update advances whatever the gradients, beyond variables():
        a step the LossScaleOptimizer skips must leave it as it was."""
        return []

    def get_config(self):
        lr = self.learning_rate
        return {"name": self.name, "learning_rate": float(lr.numpy()) if hasattr(lr, "numpy") else lr,
                "weight_decay": self.weight_decay, "clipnorm": self.clipnorm, "global_clipnorm": self.global_clipnorm,
                "clipvalue": self.clipvalue, **self._own_config()}

    def _own_config(self):
        return {}


def _clip_norm(g, limit):
    norm = px.sqrt(px.reduce_sum(g * g))
    scale = px.minimum(B.scalar(1.0, g.dtype), B.scalar(limit, g.dtype) / px.maximum(norm, B.scalar(1e-12, g.dtype)))
    return g * scale


class SGD(KerasOptimizerMixin, _pxo.SGD):
    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD", **kwargs):
        _pxo.SGD.__init__(self, 0.0, momentum, nesterov)
        self._keras_init(name, learning_rate, **kwargs)

    def _own_config(self):
        return {"momentum": self.momentum, "nesterov": self.nesterov}


class Adam(KerasOptimizerMixin, _pxo.Adam):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, name="adam",
                 **kwargs):
        _pxo.Adam.__init__(self, 0.0, beta_1, beta_2, epsilon)
        self._keras_init(name, learning_rate, **kwargs)
        self.amsgrad = amsgrad

    def _apply(self, g, v, h):
        if not self.amsgrad:
            return super()._apply(g, v, h)
        m, s, vhat = self._slot(v, "m"), self._slot(v, "v"), self._slot(v, "vhat")
        one = B.scalar(1.0, v.dtype)
        m_new = h["b1"] * m.read_value() + (one - h["b1"]) * g
        s_new = h["b2"] * s.read_value() + (one - h["b2"]) * g * g
        vhat_new = px.maximum(vhat.read_value(), s_new)
        lr_t = h["lr"] * px.sqrt(one - h["b2p"]) / (one - h["b1p"])
        self._assign([m, s, vhat, v], [m_new, s_new, vhat_new,
                                        v.read_value() - lr_t * m_new / (px.sqrt(vhat_new) + h["eps"])])

    def _own_config(self):
        return {"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon, "amsgrad": self.amsgrad}


class AdamW(Adam):
    """Adam with decoupled weight decay (Keras's AdamW: weight_decay=0.004 by default)."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, name="adamw", **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, name, weight_decay=weight_decay, **kwargs)


class RMSprop(KerasOptimizerMixin, _pxo.RMSprop):
    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, name="rmsprop",
                 **kwargs):
        _pxo.RMSprop.__init__(self, 0.0, rho, momentum, epsilon)
        self._keras_init(name, learning_rate, **kwargs)
        self.centered = centered

    def _apply(self, g, v, h):
        if not self.centered:
            return super()._apply(g, v, h)
        ms, mg, mom = self._slot(v, "rms"), self._slot(v, "mg"), self._slot(v, "momentum")
        one = B.scalar(1.0, v.dtype)
        ms_new = h["rho"] * ms.read_value() + (one - h["rho"]) * g * g
        mg_new = h["rho"] * mg.read_value() + (one - h["rho"]) * g
        inc = h["lr"] * g / px.sqrt(ms_new - mg_new * mg_new + h["eps"])
        mom_new = h["momentum"] * mom.read_value() + inc
        self._assign([ms, mg, mom, v], [ms_new, mg_new, mom_new, v.read_value() - mom_new])

    def _own_config(self):
        return {"rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon, "centered": self.centered}


class _Plain(KerasOptimizerMixin, _pxo.Optimizer):
    """An optimizer written with plain ops: subclasses define _update(g, v, lr, t)."""

    def __init__(self, name, learning_rate, **kwargs):
        _pxo.Optimizer.__init__(self, 0.0)
        self._keras_init(name, learning_rate, **kwargs)

    def _hyper(self, step, lr):
        return {"lr": lr, "t": step + B.scalar(1.0, "float32")}

    def _apply(self, g, v, h):
        self._update(g, v, self._cast(h["lr"], v), self._cast(h["t"], v))


class Adagrad(_Plain):
    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, name="adagrad", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.initial_accumulator_value, self.epsilon = float(initial_accumulator_value), float(epsilon)

    def _update(self, g, v, lr, t):
        key = (v.shared_name, "accumulator")
        acc = self._slots.get(key)
        if acc is None:
            acc = px.Variable(np.full(v.shape, self.initial_accumulator_value, B.dtype_name(v.dtype)),
                              trainable=False, name=f"{v.name}/accumulator")
            self._slots[key] = acc
        a = acc.read_value() + g * g
        self._assign([acc, v], [a, v.read_value() - lr * g / px.sqrt(a + B.scalar(self.epsilon, v.dtype))])


class Adadelta(_Plain):
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, name="adadelta", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.rho, self.epsilon = float(rho), float(epsilon)

    def _update(self, g, v, lr, t):
        ag, ad = self._slot(v, "accumulated_grad"), self._slot(v, "accumulated_delta_var")
        rho, eps = B.scalar(self.rho, v.dtype), B.scalar(self.epsilon, v.dtype)
        one = B.scalar(1.0, v.dtype)
        ag_new = rho * ag.read_value() + (one - rho) * g * g
        delta = -px.sqrt(ad.read_value() + eps) / px.sqrt(ag_new + eps) * g
        ad_new = rho * ad.read_value() + (one - rho) * delta * delta
        self._assign([ag, ad, v], [ag_new, ad_new, v.read_value() + lr * delta])


class Adamax(_Plain):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="adamax", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)

    def _update(self, g, v, lr, t):
        m, u = self._slot(v, "m"), self._slot(v, "u")
        b1, b2, one = B.scalar(self.beta_1, v.dtype), B.scalar(self.beta_2, v.dtype), B.scalar(1.0, v.dtype)
        m_new = b1 * m.read_value() + (one - b1) * g
        u_new = px.maximum(b2 * u.read_value(), px.abs(g))
        step = lr / (one - px.pow(b1, t)) * m_new / (u_new + B.scalar(self.epsilon, v.dtype))
        self._assign([m, u, v], [m_new, u_new, v.read_value() - step])


class Nadam(_Plain):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="nadam", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        self._u_product = None

    def _update(self, g, v, lr, t):
        m, s = self._slot(v, "m"), self._slot(v, "v")
        dt = v.dtype
        b1, b2, one = B.scalar(self.beta_1, dt), B.scalar(self.beta_2, dt), B.scalar(1.0, dt)
        decay, half = B.scalar(0.96, dt), B.scalar(0.5, dt)
        u_t = b1 * (one - half * px.pow(decay, t))
        u_t1 = b1 * (one - half * px.pow(decay, t + one))
        u_product = B.cast(self._u_now, dt)
        u_product_next = u_product * u_t1
        m_new = b1 * m.read_value() + (one - b1) * g
        s_new = b2 * s.read_value() + (one - b2) * g * g
        m_hat = u_t1 * m_new / (one - u_product_next) + (one - u_t) * g / (one - u_product)
        v_hat = s_new / (one - px.pow(b2, t))
        self._assign([m, s, v], [m_new, s_new, v.read_value() - lr * m_hat / (px.sqrt(v_hat) + B.scalar(
            self.epsilon, dt))])

    def apply_gradients(self, grads_and_vars):
        # Keras updates the running product of the momentum schedule once per
        # step, before the variables.
        if self._u_product is None:
            self._u_product = px.Variable(1.0, trainable=False, name=f"{self.name}/u_product", dtype="float32")
        if self._step is None:
            self._step = px.Variable(0.0, trainable=False, name="iterations", dtype="float32")
        t = self._step.read_value() + B.scalar(1.0, "float32")
        self._u_now = self._u_product.read_value() * B.scalar(self.beta_1, "float32") * (
            B.scalar(1.0, "float32") - B.scalar(0.5, "float32") * px.pow(B.scalar(0.96, "float32"), t))
        self._u_product.assign(self._u_now)
        super().apply_gradients(grads_and_vars)

    def _counter_variables(self):
        return [] if self._u_product is None else [self._u_product]


class Lion(_Plain):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, name="lion", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.beta_1, self.beta_2 = float(beta_1), float(beta_2)

    def _update(self, g, v, lr, t):
        m = self._slot(v, "momentum")
        b1, b2, one = B.scalar(self.beta_1, v.dtype), B.scalar(self.beta_2, v.dtype), B.scalar(1.0, v.dtype)
        mv = m.read_value()
        direction = px.sign(b1 * mv + (one - b1) * g)
        self._assign([v, m], [v.read_value() - lr * direction, b2 * mv + (one - b2) * g])


_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "adagrad": Adagrad,
            "adadelta": Adadelta, "adamax": Adamax, "nadam": Nadam, "lion": Lion}


def get(identifier):
    """An optimizer from a name ("adam"), a Keras config dict or an instance."""
    if isinstance(identifier, LossScaleOptimizer):
        return identifier
    if isinstance(identifier, _pxo.Optimizer):
        if not isinstance(identifier, KerasOptimizerMixin):
            return identifier
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier.lower())
        if cls is None:
            raise ValueError(f"unknown optimizer {identifier!r}; known: {', '.join(sorted(_BY_NAME))}")
        return cls()
    if isinstance(identifier, dict):
        cls = _BY_NAME.get(identifier["class_name"].lower())
        if cls is None:
            raise ValueError(f"unknown optimizer class {identifier['class_name']!r}")
        config = dict(identifier.get("config") or {})
        for k in ("is_legacy_optimizer", "use_ema", "ema_momentum", "ema_overwrite_frequency", "loss_scale_factor",
                  "gradient_accumulation_steps", "jit_compile"):
            config.pop(k, None)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = 0.001
        return cls(**config)
    raise ValueError(f"cannot interpret {identifier!r} as an optimizer")


class LossScaleOptimizer:
    """Dynamic loss scaling for float16 training (Keras's LossScaleOptimizer).

    The loss is multiplied by the scale before differentiation and the
    gradients divided by it; a step whose gradients are not finite is
    skipped and halves the scale; ``dynamic_growth_steps`` finite steps in
    a row double it.
    """

    def __init__(self, inner_optimizer, initial_scale=32768.0, dynamic_growth_steps=2000, name=None):
        self.inner_optimizer = get(inner_optimizer)
        self.initial_scale, self.dynamic_growth_steps = float(initial_scale), int(dynamic_growth_steps)
        self.name = name or f"loss_scale_optimizer"
        self.dynamic_scale = px.Variable(self.initial_scale, trainable=False, name="dynamic_scale", dtype="float32")
        self.step_counter = px.Variable(0.0, trainable=False, name="step_counter", dtype="float32")
        self._built = set()  # shared names of the variables whose inner state exists

    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self.inner_optimizer.learning_rate = value

    @property
    def iterations(self):
        return self.inner_optimizer.iterations

    def scale_loss(self, loss):
        return loss * B.cast(self.dynamic_scale.read_value(), loss.dtype)

    def apply_gradients(self, grads_and_vars):
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        scale = self.dynamic_scale.read_value()
        inv = B.scalar(1.0, "float32") / scale
        grads = [g * B.cast(inv, g.dtype) for g, _ in pairs]
        finite = px.reduce_all(px.stack([px.reduce_all(px.math.is_finite(B.cast(g, "float32"))) for g in grads]))
        # A step with non-finite gradients is skipped, as in Keras: the update
        # runs on zeros and then every variable it changed gets its old value
        # back (the trained variables, the step counter, the slots), so later
        # steps see the state they would have without it. The inner
        # optimizer's state is made first, so that a traced step, whose graph
        # every later call replays, restores it too.
        inner = self.inner_optimizer
        variables = [v for _, v in pairs]
        self._build_inner_state(variables)
        zero_grads = [px.where(finite, g, px.zeros_like(g)) for g in grads]
        state = list(variables) + [s for s in inner.variables() if s.trainable is False]
        state += [s for s in getattr(inner, "_counter_variables", lambda: [])() if all(s is not t for t in state)]
        before = [(s, s.read_value()) for s in state]
        inner.apply_gradients(zip(zero_grads, variables))
        for s, old in before:
            s.assign(px.where(finite, s.read_value(), old))
        count = self.step_counter.read_value()
        grow = count + B.scalar(1.0, "float32") >= B.scalar(float(self.dynamic_growth_steps), "float32")
        new_scale = px.where(finite, px.where(grow, scale * B.scalar(2.0, "float32"), scale),
                             scale * B.scalar(0.5, "float32"))
        new_count = px.where(px.logical_and(finite, px.logical_not(grow)), count + B.scalar(1.0, "float32"),
                             B.scalar(0.0, "float32"))
        self.dynamic_scale.assign(new_scale)
        self.step_counter.assign(new_count)

    def _build_inner_state(self, variables):
        """Creates the inner optimizer's step counter and slots for `variables`
        as its first update would, without running an update: the update is
        traced into a graph that is thrown away (variables are made eagerly,
        with their initial values, even while tracing)."""
        inner = self.inner_optimizer
        new = [v for v in variables if v.shared_name not in self._built]
        if not new and getattr(inner, "_step", None) is not None:
            return
        suspended = _plexus._suspend_trace()
        try:
            with _plexus.Trace("loss_scale_optimizer_build"):
                inner.apply_gradients([(px.zeros_like(v.read_value()), v) for v in new or variables])
        finally:
            _plexus._resume_trace(suspended)
        self._built.update(v.shared_name for v in variables)

    def variables(self):
        return [self.dynamic_scale, self.step_counter] + self.inner_optimizer.variables()

    def get_config(self):
        return {"name": self.name, "inner_optimizer": {"class_name": type(self.inner_optimizer).__name__,
                                                       "config": self.inner_optimizer.get_config()},
                "initial_scale": self.initial_scale, "dynamic_growth_steps": self.dynamic_growth_steps}
