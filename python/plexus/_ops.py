"""One Python function per registered op, generated at import.

`raw_ops.<OpName>(*inputs, **attrs)` takes the op's inputs positionally (or
by their OpDef names) and its attributes as keyword-only arguments with their
defaults. Type attributes that the inputs determine (T, Tidx, ...) default to
None, meaning "from the inputs"; count and type-list attributes of list
inputs (N, Tlist) are set from the list passed. `name` is accepted for
TensorFlow compatibility and ignored.

Each function is compiled from generated source, so a call does no generic
argument processing: attributes left at their default are not sent at all,
and an op called with no attributes passes None to `_plexus.execute`.

The public names of _names.py (and the hand-written functions of _api.py,
which override generated ones of the same name) are installed into the
namespace modules (plexus.nn, plexus.math, ...) by `_populate`, and into the
top-level package by the lead's __init__ through `public_namespace()`.
"""

import collections
import keyword
import linecache
import sys

from plexus import _plexus
from plexus import _names

_execute = _plexus.execute

# Attribute types as Python spells them in docstrings and stubs.
_ATTR_PY_TYPES = {
    "int": "int",
    "float": "float",
    "bool": "bool",
    "string": "str",
    "type": "DType",
    "shape": "shape",
    "tensor": "tensor",
    "func": "function",
}


def _dtype_name(dt):
    return getattr(dt, "name", str(dt))


class _OpInfo:
    """What the generated function of one op needs, computed once."""

    def __init__(self, d):
        self.name = d["name"]
        self.inputs = d["inputs"]
        self.outputs = d["outputs"]
        self.attrs = d["attrs"]
        self.is_stateful = d.get("is_stateful", False)
        attr_by_name = {a["name"]: a for a in self.attrs}
        self.attr_by_name = attr_by_name
        # Attributes set from list inputs (never arguments) and attributes
        # inferred from inputs (optional arguments, default None).
        self.hidden = set()
        self.inferred = set()
        for arg in self.inputs:
            if arg["number_attr"]:
                self.hidden.add(arg["number_attr"])
            if arg["type_list_attr"]:
                self.hidden.add(arg["type_list_attr"])
            if arg["type_attr"]:
                if attr_by_name.get(arg["type_attr"], {}).get("type") == "list(type)":
                    self.hidden.add(arg["type_attr"])
                else:
                    self.inferred.add(arg["type_attr"])
        self.inferred -= self.hidden
        taken = {"name"}
        self.input_params = []  # (python name, input spec)
        for arg in self.inputs:
            self.input_params.append((_param_name(arg["name"], taken), arg))
        self.attr_params = []  # (python name, attr spec, default, required)
        for a in self.attrs:
            if a["name"] in self.hidden:
                continue
            pname = _param_name(a["name"], taken)
            if a["has_default"]:
                default = a["default"]
                if isinstance(default, list):
                    default = tuple(default)
                required = False
            elif a["name"] in self.inferred:
                default, required = None, False
            else:
                default, required = None, True
            self.attr_params.append((pname, a, default, required))

    def is_list_input(self, arg):
        return bool(arg["number_attr"] or arg["type_list_attr"]) or (
            arg["type_attr"] in self.hidden)

    def is_list_output(self, arg):
        return bool(arg["number_attr"] or arg["type_list_attr"]) or (
            self.attr_by_name.get(arg["type_attr"], {}).get("type") == "list(type)")


def _param_name(name, taken):
    p = name
    while keyword.iskeyword(p) or p in taken:
        p += "_"
    taken.add(p)
    return p


def _as_list(value, op, arg):
    if isinstance(value, list):
        return value
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"{op}: input '{arg}' takes a list of tensors, got "
                    f"{type(value).__name__}")


def _type_list(values):
    """The list's tensors (Python values converted) and their dtypes."""
    out, types = [], []
    for v in values:
        dt = getattr(v, "dtype", None)
        if dt is None or not hasattr(v, "shape") or not _is_tensor(v):
            v = _plexus.constant(v)
            dt = v.dtype
        out.append(v)
        types.append(dt)
    return out, types


def _is_tensor(v):
    return isinstance(v, _TENSOR_TYPES)


_TENSOR_TYPES = tuple(t for t in (getattr(_plexus, "Tensor", None),
                                  getattr(_plexus, "GraphTensor", None)) if t)


def _split(flat, counts):
    """Groups the flat outputs: a count of None means one tensor, an int a list."""
    out, i = [], 0
    unknown = [k for k, c in enumerate(counts) if c == -1]
    if unknown:
        fixed = sum(1 if c is None else c for c in counts if c != -1)
        counts = list(counts)
        counts[unknown[0]] = len(flat) - fixed
    for c in counts:
        if c is None:
            out.append(flat[i])
            i += 1
        else:
            out.append(list(flat[i:i + c]))
            i += c
    return out


def _generate(info, fname):
    """Source of the function named `fname` for one op, and its globals."""
    op = info.name
    g = {"_ex": _execute, "_as_list": _as_list, "_type_list": _type_list,
         "_split": _split}
    params = [p for p, _ in info.input_params]
    kw = []
    for pname, a, default, required in info.attr_params:
        if required:
            kw.append(pname)
        else:
            g["_d_" + pname] = default
            kw.append(f"{pname}=_d_{pname}")
    kw.append("name=None")
    sig = ", ".join(params + ["*"] + kw)
    body = []
    flat = []
    has_list = False
    needs_dict = False
    for pname, arg in info.input_params:
        if info.is_list_input(arg):
            has_list = True
            needs_dict = True
            body.append(f"{pname} = _as_list({pname}, {op!r}, {arg['name']!r})")
            if arg["number_attr"]:
                body.append(f"_a[{arg['number_attr']!r}] = len({pname})")
                flat.append("*" + pname)
            else:
                tl = arg["type_list_attr"] or arg["type_attr"]
                body.append(f"{pname}, _a[{tl!r}] = _type_list({pname})")
                flat.append("*" + pname)
        else:
            flat.append(pname)
    inputs_expr = "[" + ", ".join(flat) + "]"
    required = [(p, a) for p, a, _, r in info.attr_params if r]
    optional = [(p, a) for p, a, _, r in info.attr_params if not r]
    if required:
        needs_dict = True
    lines = []
    if needs_dict:
        lines.append("_a = {" + ", ".join(f"{a['name']!r}: {p}" for p, a in required) + "}")
        lines.extend(body)
        for p, a in optional:
            lines.append(f"if {p} is not _d_{p}: _a[{a['name']!r}] = {p}")
        call = f"_ex({op!r}, {inputs_expr}, _a)"
    elif optional:
        cond = " and ".join(f"{p} is _d_{p}" for p, _ in optional)
        lines.append(f"if {cond}:")
        lines.append(f"    _a = None")
        lines.append("else:")
        lines.append("    _a = {}")
        for p, a in optional:
            lines.append(f"    if {p} is not _d_{p}: _a[{a['name']!r}] = {p}")
        call = f"_ex({op!r}, {inputs_expr}, _a)"
    else:
        call = f"_ex({op!r}, {inputs_expr}, None)"
    outs = info.outputs
    if not outs:
        lines.append(call)
        lines.append("return None")
    elif len(outs) == 1:
        if info.is_list_output(outs[0]):
            lines.append(f"return {call}")
        else:
            lines.append(f"return {call}[0]")
    else:
        fields = [o["name"] for o in outs]
        g["_NT"] = collections.namedtuple(op, fields, rename=True)
        if any(info.is_list_output(o) for o in outs):
            counts = []
            for o in outs:
                if o["number_attr"]:
                    counts.append(_count_expr(info, o["number_attr"], False))
                elif o["type_list_attr"] or info.is_list_output(o):
                    counts.append(_count_expr(info, o["type_list_attr"] or o["type_attr"], True))
                else:
                    counts.append("None")
            if not needs_dict:
                lines.append("_a = _a or {}" if optional else "_a = {}")
            lines.append(f"return _NT._make(_split({call}, [{', '.join(counts)}]))")
        else:
            lines.append(f"return _NT._make({call})")
    src = f"def {fname}({sig}):\n" + "".join("    " + ln + "\n" for ln in lines)
    return src, g


def _count_expr(info, attr, is_type_list):
    """The number of tensors of a list output, read from the attributes sent
    (-1 when not sent: _split then gives it the outputs left over)."""
    if is_type_list:
        return f"(len(_a[{attr!r}]) if {attr!r} in _a else -1)"
    return f"_a.get({attr!r}, -1)"


def _doc(info):
    """The docstring of an op's function: inputs, attributes, outputs."""
    attrs = info.attr_by_name

    def type_of(arg):
        if arg["fixed_type"] is not None:
            t = _dtype_name(arg["fixed_type"])
        elif arg["type_attr"]:
            t = arg["type_attr"]
        else:
            t = arg["type_list_attr"]
        if arg["number_attr"]:
            t = f"list of {arg['number_attr']} {t}"
        elif arg["type_list_attr"] or (arg["type_attr"] and
                                       attrs.get(arg["type_attr"], {}).get("type") == "list(type)"):
            t = f"list of tensors, dtypes {arg['type_list_attr'] or arg['type_attr']}"
        if arg["is_ref"]:
            t = f"ref {t}"
        return t

    lines = [f"TensorFlow op `{info.name}`" + (" (stateful)." if info.is_stateful else "."), ""]
    if info.inputs:
        lines.append("Args:")
        for pname, arg in info.input_params:
            lines.append(f"  {pname}: {type_of(arg)}")
    else:
        lines.append("Args: none (the op has no inputs).")
    if info.attr_params:
        lines.append("")
        lines.append("Attributes (keyword-only):")
        for pname, a, default, required in info.attr_params:
            desc = f"  {pname}: {_ATTR_PY_TYPES.get(a['type'], a['type'])}"
            if a["type"].startswith("list("):
                desc = f"  {pname}: list of {_ATTR_PY_TYPES.get(a['type'][5:-1], a['type'][5:-1])}"
            if required:
                desc += ", required"
            elif a["name"] in info.inferred and not a["has_default"]:
                desc += ", default: from the inputs"
            elif a["name"] in info.inferred:
                desc += (f", default: from the inputs, else "
                         f"{_fmt_default(a['default'])}")
            else:
                desc += f", default {_fmt_default(a['default'])}"
            if a["allowed_types"]:
                desc += "; one of " + ", ".join(_dtype_name(t) for t in a["allowed_types"])
            if a["minimum"] is not None:
                desc += f"; at least {a['minimum']}"
            lines.append(desc)
    hidden = sorted(info.hidden)
    if hidden:
        lines.append("")
        lines.append("Set from the list inputs: " + ", ".join(hidden) + ".")
    lines.append("  name: ignored (TensorFlow compatibility).")
    lines.append("")
    outs = info.outputs
    if not outs:
        lines.append("Returns: None (the op has no outputs).")
    elif len(outs) == 1:
        kind = "a list of tensors" if info.is_list_output(outs[0]) else "a Tensor"
        lines.append(f"Returns: {kind}, `{outs[0]['name']}` ({type_of(outs[0])}).")
    else:
        lines.append(f"Returns: a named tuple `{info.name}`:")
        for o in outs:
            lines.append(f"  {o['name']}: {type_of(o)}")
    return "\n".join(lines)


def _fmt_default(v):
    if hasattr(v, "name") and hasattr(v, "itemsize"):
        return v.name
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt_default(x) for x in v) + "]"
    if isinstance(v, float):
        return "%.7g" % v  # attribute floats are float32
    return repr(v)


def _make(info, fname, module, doc):
    src, g = _generate(info, fname)
    filename = f"<plexus op {info.name}: {fname}>"
    code = compile(src, filename, "exec")
    # Tracebacks through the generated function show its source.
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(code, g)
    fn = g[fname]
    fn.__module__ = module
    fn.__qualname__ = fname
    fn.__doc__ = doc
    fn._op_name = info.name
    fn._source = src
    return fn


# ---------------------------------------------------------------------------
# The registry's ops.

OP_INFO = {d["name"]: _OpInfo(d) for d in _plexus.op_defs()}
_DOCS = {name: _doc(info) for name, info in OP_INFO.items()}

# raw[OpName] = function named after the op, module plexus.raw_ops.
raw = {name: _make(info, name, "plexus.raw_ops", _DOCS[name])
       for name, info in OP_INFO.items()}


def _generated_namespaces():
    """{namespace: {name: function}} from _names.NAMES (ops present only)."""
    spaces = {ns: {} for ns in _names.NAMESPACES}
    for op, names in _names.NAMES.items():
        info = OP_INFO.get(op)
        if info is None:
            continue
        for q in names:
            ns, name = _names.split_name(q)
            module = "plexus" + ("." + ns if ns else "")
            doc = f"`{module}.{name}`: " + _DOCS[op] + f"\n\nSee also plexus.raw_ops.{op}."
            spaces.setdefault(ns, {})[name] = _make(info, name, module, doc)
    return spaces


NAMESPACE_FUNCTIONS = _generated_namespaces()

# The hand-written functions override generated ones of the same name.
from plexus import _api  # noqa: E402  (needs `raw` above)

for _q, _fn in _api.EXPORTS.items():
    _ns, _name = _names.split_name(_q)
    NAMESPACE_FUNCTIONS.setdefault(_ns, {})[_name] = _fn
del _q, _fn, _ns, _name


def _populate(module_name):
    """Fills the namespace module `plexus.<ns>` (or plexus.raw_ops)."""
    mod = sys.modules[module_name]
    if module_name == "plexus.raw_ops":
        funcs = raw
    else:
        funcs = NAMESPACE_FUNCTIONS.get(module_name[len("plexus."):], {})
    for k, v in funcs.items():
        setattr(mod, k, v)
    mod.__all__ = sorted(funcs)


def public_namespace():
    """The top-level names `plexus/__init__.py` should export: {name: function}.

    Many shadow Python builtins inside the package's namespace (abs, round,
    pow, range, slice): __init__.py should install them last.
    """
    return dict(NAMESPACE_FUNCTIONS[""])


# Top-level names, for __init__.py's __all__.
PUBLIC_NAMES = sorted(NAMESPACE_FUNCTIONS[""])
# Namespace modules this package has (plexus.<name>).
SUBMODULES = ("raw_ops",) + tuple(ns for ns in _names.NAMESPACES if ns)
# `from plexus._ops import *` (plexus/__init__.py) exports the top-level names.
__all__ = list(PUBLIC_NAMES)


def __getattr__(name):
    # The top-level functions, for `from plexus._ops import *`; kept out of
    # this module's globals so that they do not shadow builtins here.
    try:
        return NAMESPACE_FUNCTIONS[""][name]
    except KeyError:
        raise AttributeError(f"module 'plexus._ops' has no attribute {name!r}") from None
