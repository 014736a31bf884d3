#!/usr/bin/env python3
"""Runs plexus-plugin-check on a GPU plugin, expecting what the machine allows.

usage: device_plugin_check.py PYTHON CHECK_REPORT TOOL PLEXUS_CLI PLUGIN DEVICE_TYPE

DEVICE_TYPE is the plugin's device type (CUDA, ROCM, XPU). Without such a
device (no GPU, or no driver) the abi section must pass and every device
section must be skipped with the reason "no devices"; with one, every check
must pass. Which case holds is read from `plexus devices`.
"""
import os
import subprocess
import sys


def main():
    python, check_report, tool, cli, plugin, device_type = sys.argv[1:7]
    env = dict(os.environ, PLEXUS_PLUGIN_PATH="")
    devices = subprocess.run([cli, "devices", "--plugin", plugin], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(devices.stdout)
    if devices.returncode != 0:
        print(f"plexus devices exited with {devices.returncode}")
        return 1
    has_device = f"device {device_type}:0" in devices.stdout
    args = [python, check_report, tool, plugin]
    if has_device:
        print(f"a {device_type} device exists: every check must pass")
        args += ["--min-cells", "50"]
    else:
        print(f"no {device_type} device: the device sections must be skipped")
        args += ["--skip", "memory.all", "streams.all", "kernels.all", "robustness.all",
                 "--detail", "memory.all=no devices"]
    return subprocess.run(args).returncode


if __name__ == "__main__":
    sys.exit(main())
