"""Python functions in Keras configs: a Lambda layer's function, saved as marshalled bytecode.

Keras writes a lambda as ``{"class_name": "__lambda__", "config": {"code":
base64 of marshal.dumps(code), "defaults", "closure"}}`` and a named
function as ``{"class_name": "function", "config": name, "module": ...}``.
Bytecode runs only on the Python version that wrote it, and loading it runs
code from the file, so it needs ``safe_mode=False``.
"""

from __future__ import annotations

import builtins
import codecs
import importlib
import marshal
import types


class UnsafeConfigError(ValueError):
    pass


def dump_function(fn):
    """Keras's serialized form of a Python function or lambda."""
    if getattr(fn, "__name__", "<lambda>") != "<lambda>" and "<locals>" not in getattr(fn, "__qualname__", "<"):
        return {"module": fn.__module__, "class_name": "function", "config": fn.__name__,
                "registered_name": "function"}
    code = codecs.encode(marshal.dumps(fn.__code__), "base64").decode("ascii")
    closure = tuple(c.cell_contents for c in fn.__closure__) if fn.__closure__ else None
    return {"class_name": "__lambda__", "config": {"code": code, "defaults": fn.__defaults__, "closure": closure}}


def _cell(value):
    return (lambda: value).__closure__[0]


def load_function(entry, custom_objects, safe_mode, where):
    """The function a Keras config names; lambdas only with safe_mode=False."""
    if callable(entry):
        return entry
    if not isinstance(entry, dict):
        return entry
    kind, config = entry.get("class_name"), entry.get("config")
    if kind == "function":
        if custom_objects and config in custom_objects:
            return custom_objects[config]
        from .. import activations
        fn = getattr(activations, str(config), None)
        if fn is not None and not (entry.get("module") or "").startswith("__main__"):
            return fn
        if safe_mode:
            raise UnsafeConfigError(f"{where}: the function '{config}' from module '{entry.get('module')}' is not "
                                    "known; pass it in custom_objects, or load with safe_mode=False to import it")
        try:
            return getattr(importlib.import_module(entry["module"]), config)
        except (ImportError, AttributeError, KeyError) as e:
            raise ValueError(f"{where}: cannot import the function '{config}': {e}") from e
    if kind != "__lambda__":
        return entry
    if safe_mode:
        raise UnsafeConfigError(f"{where}: the Lambda layer holds a Python lambda as bytecode, which runs code from "
                                "the file; load it with safe_mode=False if you trust the file")
    code = config["code"] if isinstance(config, dict) else config
    defaults = config.get("defaults") if isinstance(config, dict) else None
    closure = config.get("closure") if isinstance(config, dict) else None
    if isinstance(code, (list, tuple)):
        code, defaults, closure = code
    try:
        code = marshal.loads(codecs.decode(code.encode("ascii"), "base64"))
    except (ValueError, EOFError, TypeError) as e:
        raise ValueError(f"{where}: the lambda's bytecode cannot be read by this Python version: {e}") from e
    import plexus
    globs = {"__builtins__": builtins, "plexus": plexus, "px": plexus}
    globs.update(custom_objects or {})
    return types.FunctionType(code, globs, name=code.co_name, argdefs=tuple(defaults) if defaults else None,
                              closure=tuple(_cell(c) for c in closure) if closure else None)
