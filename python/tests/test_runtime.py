"""Plugins, devices and device scopes from Python: plexus.plugins(),
devices(), default_device(), plugin_load_reports(), load_plugin errors (each
naming the file, the process still working after), `with plexus.device()`
scopes, and plugin discovery through PLEXUS_PLUGIN_PATH and the
`plexus.plugins` entry point group (both in a fresh subprocess, since a
loaded plugin stays loaded for the life of the process)."""

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import plexus as px
from plexus import _plexus
from plexus import errors

# The build tree: build/python/plexus/__init__.py -> build/.
# The build tree with the test plugins: PLEXUS_BUILD_DIR (.ci/test.sh sets it
# when testing the installed package), else the tree plexus was imported from.
BUILD = pathlib.Path(os.environ.get("PLEXUS_BUILD_DIR") or pathlib.Path(px.__file__).resolve().parent.parent.parent)
TEST_PLUGINS = BUILD / "lib" / "test-plugins"
REFERENCE_PLUGIN = BUILD / "lib" / "sdk" / "libplexus_plugin_reference.so"

needs_test_plugins = pytest.mark.skipif(
    not TEST_PLUGINS.is_dir(), reason="the build tree's test plugins (lib/test-plugins) are not here")
needs_reference_plugin = pytest.mark.skipif(
    not REFERENCE_PLUGIN.is_file(), reason="the build tree's reference plugin is not here")


def _scope_restore_with_none_works():
    # Leaving the outermost `with plexus.device(...)` passes None back to
    # _set_scope_device; the extension must accept it.
    try:
        _plexus._set_scope_device(None)
        return True
    except TypeError:
        return False


# BUG (extension, python/src/module.cc): _set_scope_device takes an
# nb::handle without .none(), so nanobind refuses None: leaving the outermost
# `with plexus.device(...)` raises TypeError and leaves the scope set.
# Repro: `with plexus.device("cpu:0"): pass`
scope_bug = pytest.mark.xfail(
    not _scope_restore_with_none_works(), strict=True,
    reason="_set_scope_device(None) is refused (nb::handle without .none()): leaving the "
           "outermost plexus.device() scope raises TypeError")


def _check_op_runs():
    """An op still runs and gives the right answer."""
    r = px.constant([1.0, 2.0]) * 3.0 + 1.0
    np.testing.assert_array_equal(r.numpy(), np.array([4.0, 7.0], np.float32))


def _run_python(code, extra_env=None, timeout=60):
    env = dict(os.environ)
    env.pop("PLEXUS_PLUGIN_PATH", None)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(px.__file__).resolve().parent.parent)] +
        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    if extra_env:
        env.update(extra_env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True,
                          text=True, timeout=timeout)


# ---- plugins and devices ------------------------------------------------------


def test_plugins_lists_the_cpu_plugin():
    plugins = px.plugins()
    assert plugins, "no plugin loaded"
    by_name = {p.name: p for p in plugins}
    assert "cpu" in by_name
    cpu = by_name["cpu"]
    for key in ("name", "path", "version", "abi_version", "device_type", "num_devices"):
        assert key in cpu
    assert cpu.num_devices >= 1
    assert os.path.isfile(cpu.path)
    major, minor = cpu.abi_version.split(".")
    assert major.isdigit() and minor.isdigit()
    assert "cpu" in repr(cpu)


def test_devices_include_the_host():
    devices = px.devices()
    names = [d.name for d in devices]
    assert "CPU:0" in names
    cpu = devices[names.index("CPU:0")]
    assert cpu.type == "CPU"
    assert cpu.ordinal == 0
    assert cpu.plugin == "cpu"
    assert cpu.host_accessible is True
    assert isinstance(cpu.description, str)
    assert "CPU:0" in repr(cpu)


def test_default_device_is_a_present_device():
    d = px.default_device()
    assert d in [x.name for x in px.devices()]
    # A fresh tensor lives on the host.
    assert px.constant(1.0).device == "CPU:0"


def test_plugin_load_reports():
    reports = px.plugin_load_reports()
    assert reports
    for r in reports:
        assert set(r) >= {"path", "loaded", "message"}
    loaded = [r for r in reports if r["loaded"]]
    assert any("cpu" in r["message"] for r in loaded), reports
    # Each loaded plugin has a report.
    loaded_paths = {os.path.realpath(r["path"]) for r in loaded}
    for p in px.plugins():
        assert os.path.realpath(p.path) in loaded_paths


# ---- load_plugin errors ----------------------------------------------------------


def test_load_plugin_missing_file(tmp_path):
    path = tmp_path / "libnot_there.so"
    with pytest.raises(errors.PlexusError) as info:
        px.load_plugin(path)  # a PathLike is fine
    assert isinstance(info.value, errors.NotFoundError)
    assert str(path) in str(info.value)
    _check_op_runs()


def test_load_plugin_not_a_shared_library(tmp_path):
    path = tmp_path / "libjunk.so"
    path.write_text("this is not an ELF file\n")
    with pytest.raises(errors.PlexusError) as info:
        px.load_plugin(str(path))
    assert str(path) in str(info.value)
    # The failure is reported too.
    assert any(r["path"] == str(path) and not r["loaded"] for r in px.plugin_load_reports())
    _check_op_runs()


@needs_test_plugins
def test_load_plugin_library_without_probe():
    path = str(TEST_PLUGINS / "libpx_test_plugin_no_probe.so")
    with pytest.raises(errors.InvalidArgumentError) as info:
        px.load_plugin(path)
    msg = str(info.value)
    assert path in msg
    assert "PX_PluginProbe" in msg and "not a Plexus plugin" in msg
    _check_op_runs()


@needs_test_plugins
def test_load_plugin_wrong_abi():
    path = str(TEST_PLUGINS / "libpx_test_plugin_wrong_major.so")
    before = [p.name for p in px.plugins()]
    with pytest.raises(errors.FailedPreconditionError) as info:
        px.load_plugin(path)
    msg = str(info.value)
    assert path in msg
    assert "ABI 99" in msg and "major versions differ" in msg
    assert isinstance(info.value, RuntimeError)
    assert [p.name for p in px.plugins()] == before
    assert "wrong_major" not in [p.name for p in px.plugins()]
    _check_op_runs()


@needs_test_plugins
def test_load_plugin_missing_slot():
    path = str(TEST_PLUGINS / "libpx_test_plugin_missing_slot.so")
    with pytest.raises(errors.PlexusError) as info:
        px.load_plugin(path)
    assert path in str(info.value)
    assert "memcpy_d2h" in str(info.value)
    _check_op_runs()


@needs_test_plugins
def test_load_plugin_init_fails():
    path = str(TEST_PLUGINS / "libpx_test_plugin_init_fails.so")
    with pytest.raises(errors.PlexusError) as info:
        px.load_plugin(path)
    assert path in str(info.value)
    assert "initialize" in str(info.value)
    assert [d.name for d in px.devices()].count("CPU:0") == 1
    _check_op_runs()


@needs_test_plugins
def test_load_good_plugin_in_subprocess():
    # The good test plugin brings a TESTDEV device; loaded in a subprocess so
    # that it does not become this process's default device.
    path = str(TEST_PLUGINS / "libpx_test_plugin_good.so")
    r = _run_python(f"""
        import plexus as px
        info = px.load_plugin({path!r})
        assert info.name == "good", info
        assert info.num_devices == 1, info
        assert "TESTDEV:0" in [d.name for d in px.devices()], px.devices()
        # Loading the same file again is harmless.
        px.load_plugin({path!r})
        assert [p.name for p in px.plugins()].count("good") == 1
        print("OK")
    """)
    assert r.returncode == 0, r.stderr
    assert "OK" in r.stdout


# ---- device scopes --------------------------------------------------------------------


@scope_bug
def test_device_scope_sets_and_restores():
    assert _plexus._scope_device() is None
    with px.device("cpu:0"):
        assert _plexus._scope_device() == "CPU:0"
        t = px.constant([1.0]) + 1.0
        assert t.device == "CPU:0"
    assert _plexus._scope_device() is None


@scope_bug
def test_device_scope_nested():
    with px.device("CPU:0"):
        with px.device(None):
            assert _plexus._scope_device() is None
            with px.device("cpu:0"):
                assert _plexus._scope_device() == "CPU:0"
            assert _plexus._scope_device() is None
        assert _plexus._scope_device() == "CPU:0"
    assert _plexus._scope_device() is None


@scope_bug
def test_device_scope_restored_after_exception():
    with pytest.raises(ZeroDivisionError):
        with px.device("cpu:0"):
            1 / 0
    assert _plexus._scope_device() is None
    with px.device("cpu:0"):
        with pytest.raises(errors.InvalidArgumentError):
            with px.device("cpu:0"):
                px.matmul(px.constant([[1.0, 2.0]]), px.constant([[1.0, 2.0]]))
        assert _plexus._scope_device() == "CPU:0"
    assert _plexus._scope_device() is None
    _check_op_runs()


def test_device_scope_unknown_device():
    before = _plexus._scope_device()
    with pytest.raises(errors.NotFoundError) as info:
        with px.device("gpu:7"):
            pytest.fail("the block must not run")
    msg = str(info.value)
    assert "gpu:7" in msg
    # The message names the devices there are.
    for d in px.devices():
        assert d.name in msg
    assert isinstance(info.value, LookupError)
    assert _plexus._scope_device() == before
    _check_op_runs()


def test_device_scope_is_per_thread():
    import threading
    seen = []
    try:
        _plexus._set_scope_device("cpu:0")
        t = threading.Thread(target=lambda: seen.append(_plexus._scope_device()))
        t.start()
        t.join()
        assert _plexus._scope_device() == "CPU:0"
    finally:
        try:
            _plexus._set_scope_device(None)
        except TypeError:  # the scope bug above; clear it some other way
            pass
    assert seen == [None]


# ---- discovery: PLEXUS_PLUGIN_PATH and entry points -------------------------------------

_REF_CHECK = textwrap.dedent("""
    import plexus as px
    import numpy as np
    from plexus import _plexus
    names = [d.name for d in px.devices()]
    assert "REF:0" in names and "CPU:0" in names, names
    assert "reference" in [p.name for p in px.plugins()], px.plugins()
    ref_reports = [r for r in px.plugin_load_reports() if "reference" in r["path"]]
    assert ref_reports and ref_reports[0]["loaded"], px.plugin_load_reports()
    # Ops scoped to the reference device run there (set directly: see the
    # scope bug above).
    x = px.constant([1.0, 2.0])
    _plexus._set_scope_device("ref:0")
    y = x * 2.0 + 1.0
    assert y.device == "REF:0", y.device
    np.testing.assert_array_equal(y.numpy(), [3.0, 5.0])
    _plexus._set_scope_device("cpu:0")
    z = x * 2.0
    assert z.device == "CPU:0", z.device
""")

_SCOPE_CHECK = textwrap.dedent("""
    # Scopes: ops of the block run on the scope's device; nesting and
    # exceptions restore the outer scope.
    from plexus import _plexus
    with px.device("ref:0"):
        a = px.constant([1.0, 2.0]) + 1.0
        assert a.device == "REF:0", a.device
        with px.device("cpu:0"):
            b = px.constant([1.0, 2.0]) + 1.0
            assert b.device == "CPU:0", b.device
        c = px.constant([1.0]) + 1.0
        assert c.device == "REF:0", c.device
        try:
            with px.device("cpu:0"):
                raise KeyError("boom")
        except KeyError:
            pass
        assert _plexus._scope_device() == "REF:0", _plexus._scope_device()
        try:
            with px.device("nosuch:3"):
                pass
        except px.errors.NotFoundError as e:
            assert "REF:0" in str(e) and "CPU:0" in str(e), str(e)
        else:
            raise AssertionError("no error for an unknown device")
        assert _plexus._scope_device() == "REF:0"
    assert _plexus._scope_device() is None, _plexus._scope_device()
""")


@needs_reference_plugin
def test_plugin_path_environment_variable():
    r = _run_python(_REF_CHECK + "print('OK')\n",
                    {"PLEXUS_PLUGIN_PATH": str(REFERENCE_PLUGIN), "PLEXUS_NO_ENTRY_POINTS": "1"})
    assert r.returncode == 0, r.stderr
    assert "OK" in r.stdout


@needs_reference_plugin
def test_plugin_path_environment_variable_folder(tmp_path):
    # A folder on the path: every plugin in it loads.
    (tmp_path / REFERENCE_PLUGIN.name).symlink_to(REFERENCE_PLUGIN)
    r = _run_python(_REF_CHECK + "print('OK')\n",
                    {"PLEXUS_PLUGIN_PATH": os.pathsep.join([str(tmp_path / "missing_dir"), str(tmp_path)]),
                     "PLEXUS_NO_ENTRY_POINTS": "1"})
    assert r.returncode == 0, r.stderr
    assert "OK" in r.stdout


_UNSCOPED_CHECK = textwrap.dedent("""
    import plexus as px
    assert px.default_device() == "CPU:0", px.default_device()
    y = px.constant([1.0, 2.0]) + 1.0
    print("UNSCOPED", y.device)
""")


@needs_reference_plugin
def test_plugin_path_plugin_does_not_take_over_unscoped_ops():
    # Without a scope, eager ops on host tensors run on the best host device
    # (the cpu plugin), whatever order plugins were loaded in.
    r = _run_python(_UNSCOPED_CHECK,
                    {"PLEXUS_PLUGIN_PATH": str(REFERENCE_PLUGIN), "PLEXUS_NO_ENTRY_POINTS": "1"})
    assert r.returncode == 0, r.stderr
    if "UNSCOPED REF:0" in r.stdout:
        # BUG (core, Runtime::HostDevice): it returns the first
        # host-accessible device in load order; plugins on
        # PLEXUS_PLUGIN_PATH load before the cpu plugin, so with the
        # reference plugin there every unscoped eager op runs on its plain
        # loops (REF:0) although default_device() says CPU:0.
        pytest.xfail("Runtime::HostDevice() is the first host-accessible device loaded: with the "
                     "reference plugin on PLEXUS_PLUGIN_PATH unscoped ops run on REF:0")
    assert "UNSCOPED CPU:0" in r.stdout, r.stdout


@needs_reference_plugin
@scope_bug
def test_device_scope_with_two_devices():
    r = _run_python("import plexus as px\n" + _SCOPE_CHECK + "print('OK')\n",
                    {"PLEXUS_PLUGIN_PATH": str(REFERENCE_PLUGIN), "PLEXUS_NO_ENTRY_POINTS": "1"})
    assert r.returncode == 0, r.stderr
    assert "OK" in r.stdout


def _fake_vendor_package(root, target):
    """A fake installed distribution declaring a plexus.plugins entry point."""
    dist = root / "fakevendor-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fakevendor\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[plexus.plugins]\nref = fakevendor:plugin_path\n")
    (dist / "RECORD").write_text("")
    (root / "fakevendor.py").write_text(f"plugin_path = {target!r}\n")


@needs_reference_plugin
def test_entry_point_plugin(tmp_path):
    _fake_vendor_package(tmp_path, str(REFERENCE_PLUGIN))
    r = _run_python(_REF_CHECK + "print('OK')\n",
                    {"PYTHONPATH": os.pathsep.join([str(tmp_path),
                                                    str(pathlib.Path(px.__file__).resolve().parent.parent)])})
    assert r.returncode == 0, r.stderr
    assert "OK" in r.stdout


@needs_reference_plugin
def test_entry_point_plugins_can_be_disabled(tmp_path):
    _fake_vendor_package(tmp_path, str(REFERENCE_PLUGIN))
    r = _run_python("""
        import plexus as px
        assert "REF:0" not in [d.name for d in px.devices()], px.devices()
        print("OK")
    """, {"PYTHONPATH": os.pathsep.join([str(tmp_path), str(pathlib.Path(px.__file__).resolve().parent.parent)]),
          "PLEXUS_NO_ENTRY_POINTS": "1"})
    assert r.returncode == 0, r.stderr
    assert "OK" in r.stdout


def test_broken_entry_point_warns_but_import_works(tmp_path):
    # An entry point naming a file that is not a plugin: `import plexus`
    # warns (naming the entry point) and goes on.
    _fake_vendor_package(tmp_path, str(tmp_path / "libnothing.so"))
    r = _run_python("""
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import plexus as px
        msgs = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        assert any("'ref'" in m and "libnothing.so" in m for m in msgs), msgs
        r = px.constant([1.0, 2.0]) + 1.0
        assert r.numpy().tolist() == [2.0, 3.0]
        print("OK")
    """, {"PYTHONPATH": os.pathsep.join([str(tmp_path), str(pathlib.Path(px.__file__).resolve().parent.parent)])})
    assert r.returncode == 0, r.stderr
    assert "OK" in r.stdout
