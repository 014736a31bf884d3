"""Optimizers (SGD with momentum, Adam, AdamW, RMSprop) and learning-rate schedules.

Each update is one fused op per variable (``_PlexusApplyAdam`` and friends,
with cpu and reference kernels): it reads the variable and its slots and
returns their new values, which are assigned back. Hyperparameters are
scalars computed on the host. Eager code and traced functions use the same
code: inside a ``plexus.function`` the updates become graph nodes.
"""

from __future__ import annotations

import math

from . import _plexus
from .variables import Variable

_ex = _plexus.execute


# ---- learning-rate schedules -------------------------------------------------
#
# A schedule maps the step (a float32 scalar tensor: the number of updates
# applied before this one) to a learning rate, with plexus ops, so it works
# eagerly and inside traced train steps alike.

def _f(x):
    return _plexus.constant(float(x), _plexus.float32)


class LearningRateSchedule:
    """A learning rate as a function of the step (0-based count of updates)."""

    def __call__(self, step):
        raise NotImplementedError


class ExponentialDecay(LearningRateSchedule):
    """initial * decay_rate ** (step / decay_steps) (the exponent floored with staircase=True)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False):
        self.initial, self.decay_steps, self.decay_rate, self.staircase = (
            float(initial_learning_rate), int(decay_steps), float(decay_rate), staircase)

    def __call__(self, step):
        p = _ex("RealDiv", [step, _f(self.decay_steps)])[0]
        if self.staircase:
            p = _ex("Floor", [p])[0]
        return _ex("Mul", [_f(self.initial), _ex("Pow", [_f(self.decay_rate), p])[0]])[0]


class InverseTimeDecay(LearningRateSchedule):
    """initial / (1 + decay_rate * step / decay_steps)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate):
        self.initial, self.decay_steps, self.decay_rate = (
            float(initial_learning_rate), int(decay_steps), float(decay_rate))

    def __call__(self, step):
        p = _ex("Mul", [_f(self.decay_rate / self.decay_steps), step])[0]
        return _ex("RealDiv", [_f(self.initial), _ex("AddV2", [_f(1.0), p])[0]])[0]


class PiecewiseConstantDecay(LearningRateSchedule):
    """values[i] while step <= boundaries[i] (values has one more entry than boundaries)."""

    def __init__(self, boundaries, values):
        if len(values) != len(boundaries) + 1:
            raise ValueError("PiecewiseConstantDecay: values must have one more entry than boundaries")
        self.boundaries, self.values = [float(b) for b in boundaries], [float(v) for v in values]

    def __call__(self, step):
        lr = _f(self.values[-1])
        for b, v in reversed(list(zip(self.boundaries, self.values))):
            lr = _ex("SelectV2", [_ex("LessEqual", [step, _f(b)])[0], _f(v), lr])[0]
        return lr


# ---- optimizers ------------------------------------------------------------------

class Optimizer:
    """Base class: slots per variable, the step counter and apply_gradients."""

    def __init__(self, learning_rate):
        self.learning_rate = learning_rate
        self._step = None  # float32 Variable: updates applied so far
        self._slots: dict = {}

    @property
    def iterations(self) -> int:
        """Updates applied so far."""
        return 0 if self._step is None else int(self._step.numpy())

    def _slot(self, var, name):
        key = (var.shared_name, name)
        s = self._slots.get(key)
        if s is None:
            s = Variable(lambda: _ex("ZerosLike", [var._handle_value()])[0], trainable=False,
                         name=f"{var.name}/{name}")
            self._slots[key] = s
        return s

    def variables(self):
        """The optimizer's own variables: the step counter and the slots (for checkpoints)."""
        return ([] if self._step is None else [self._step]) + list(self._slots.values())

    def apply_gradients(self, grads_and_vars):
        """Applies one update: grads_and_vars is an iterable of (gradient, Variable); None gradients are skipped."""
        if self._step is None:
            self._step = Variable(0.0, trainable=False, name="iterations", dtype="float32")
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        step = self._step.read_value()
        lr = self._lr_tensor(step)
        hyper = self._hyper(step, lr)
        for g, v in pairs:
            if not isinstance(v, Variable):
                raise TypeError(f"apply_gradients: {v!r} is not a plexus.Variable")
            self._apply(g, v, {k: self._cast(x, v) for k, x in hyper.items()})
        # The new count is computed from the read above, so in a traced step
        # the read happens before the assignment.
        self._step.assign(_ex("AddV2", [step, _f(1.0)])[0])

    def _lr_tensor(self, step):
        """The learning rate of this update (a float32 scalar tensor)."""
        return self.learning_rate(step) if callable(self.learning_rate) else _f(self.learning_rate)

    def _hyper(self, step, lr):
        return {"lr": lr}

    @staticmethod
    def _cast(x, var):
        if x.dtype == var.dtype:
            return x
        return _ex("Cast", [x], {"DstT": var.dtype})[0]

    def minimize(self, loss_fn, var_list):
        from .autodiff import GradientTape
        with GradientTape() as tape:
            loss = loss_fn()
        grads = tape.gradient(loss, list(var_list))
        self.apply_gradients(zip(grads, var_list))
        return loss

    def _assign(self, variables, values):
        for var, value in zip(variables, values):
            _ex("AssignVariableOp", [var.handle, value], {"dtype": var.dtype})


class SGD(Optimizer):
    """Gradient descent, with optional momentum (PyTorch's and TensorFlow's ApplyMomentum) and Nesterov."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False):
        super().__init__(learning_rate)
        self.momentum, self.nesterov = float(momentum), nesterov

    def _hyper(self, step, lr):
        return {"lr": lr, "momentum": _f(self.momentum)}

    def _apply(self, g, v, h):
        if self.momentum == 0.0:
            self._assign([v], _ex("_PlexusApplyGradientDescent", [v.read_value(), h["lr"], g]))
            return
        accum = self._slot(v, "momentum")
        new = _ex("_PlexusApplyMomentum", [v.read_value(), accum.read_value(), h["lr"], g, h["momentum"]],
                  {"use_nesterov": self.nesterov})
        self._assign([v, accum], new)


class Adam(Optimizer):
    """Adam with TensorFlow's update (epsilon added to sqrt(v), the step bias-corrected)."""

    _apply_op = "_PlexusApplyAdam"

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
        super().__init__(learning_rate)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)

    def _hyper(self, step, lr):
        t = _ex("AddV2", [step, _f(1.0)])[0]
        return {"b1p": _ex("Pow", [_f(self.beta_1), t])[0], "b2p": _ex("Pow", [_f(self.beta_2), t])[0],
                "lr": lr, "b1": _f(self.beta_1), "b2": _f(self.beta_2), "eps": _f(self.epsilon)}

    def _apply(self, g, v, h):
        m, s = self._slot(v, "m"), self._slot(v, "v")
        args = [v.read_value(), m.read_value(), s.read_value(), h["b1p"], h["b2p"], h["lr"], h["b1"], h["b2"],
                h["eps"]]
        if "wd" in h:
            args.append(h["wd"])
        self._assign([v, m, s], _ex(self._apply_op, args + [g]))


class AdamW(Adam):
    """AdamW (decoupled weight decay) with PyTorch's update."""

    _apply_op = "_PlexusApplyAdamW"

    def __init__(self, learning_rate=0.001, weight_decay=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-8):
        super().__init__(learning_rate, beta_1, beta_2, epsilon)
        self.weight_decay = float(weight_decay)

    def _hyper(self, step, lr):
        return {**super()._hyper(step, lr), "wd": _f(self.weight_decay)}


class RMSprop(Optimizer):
    """RMSprop with TensorFlow's ApplyRMSProp update (epsilon inside the square root)."""

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7):
        super().__init__(learning_rate)
        self.rho, self.momentum, self.epsilon = float(rho), float(momentum), float(epsilon)

    def _hyper(self, step, lr):
        return {"lr": lr, "rho": _f(self.rho), "momentum": _f(self.momentum), "eps": _f(self.epsilon)}

    def _apply(self, g, v, h):
        ms, mom = self._slot(v, "rms"), self._slot(v, "momentum")
        new = _ex("_PlexusApplyRMSProp", [v.read_value(), ms.read_value(), mom.read_value(), h["lr"], h["rho"],
                                          h["momentum"], h["eps"], g])
        self._assign([v, ms, mom], new)
