"""plexus.serve: runs plexus-serve, the model server (docs/serving.md).

    python -m plexus.serve --model_name=digits --model_base_path=/models/digits --port=8501
    python -m plexus.serve --model_config_file=models.config --grpc_port=8500

The server is a C++ program (core/serve); this module finds it and replaces
the Python process with it (``os.execv``), so signals (SIGTERM drains the
server) and the exit status are the server's own. Where it looks, in order:

1. ``$PLEXUS_SERVE_BINARY``, when set;
2. ``plexus/bin/plexus-serve`` inside this package (a wheel that ships it);
3. ``bin/plexus-serve`` of the build tree this package was staged in
   (``<build>/python/plexus`` -> ``<build>/bin``);
4. ``$PLEXUS_BUILD_DIR/bin/plexus-serve``;
5. ``plexus-serve`` on ``PATH``.

``python -m plexus.serve --print-binary`` prints the path found.
"""

from __future__ import annotations

import os
import shutil
import sys

_NAME = "plexus-serve"


def _is_program(path) -> bool:
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def candidates() -> list[str]:
    """The places looked at, in order (see the module's docstring)."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    if os.environ.get("PLEXUS_SERVE_BINARY"):
        out.append(os.environ["PLEXUS_SERVE_BINARY"])
    out.append(os.path.join(here, "bin", _NAME))
    out.append(os.path.join(os.path.dirname(os.path.dirname(here)), "bin", _NAME))
    if os.environ.get("PLEXUS_BUILD_DIR"):
        out.append(os.path.join(os.environ["PLEXUS_BUILD_DIR"], "bin", _NAME))
    on_path = shutil.which(_NAME)
    if on_path:
        out.append(on_path)
    return out


def find_binary() -> str | None:
    """The plexus-serve program, or None when there is none."""
    explicit = os.environ.get("PLEXUS_SERVE_BINARY")
    if explicit:
        # Asked for by name: that one or nothing.
        return os.path.abspath(explicit) if _is_program(explicit) else None
    for c in candidates():
        if _is_program(c):
            return os.path.abspath(c)
    return None


def _not_found_message() -> str:
    looked = "\n".join(f"  {c}" for c in candidates()) or "  (nowhere)"
    if os.environ.get("PLEXUS_SERVE_BINARY"):
        return (f"plexus.serve: PLEXUS_SERVE_BINARY={os.environ['PLEXUS_SERVE_BINARY']} is not an "
                "executable file")
    return ("plexus.serve: the plexus-serve program was not found. Looked at:\n" + looked + "\n"
            f"Build it (cmake --build BUILD --target {_NAME}) and set PLEXUS_BUILD_DIR=BUILD, put it on "
            "PATH, or set PLEXUS_SERVE_BINARY to its path.")


def main(argv=None) -> int:
    """Runs plexus-serve with `argv` (default: this process's arguments).
    Does not return when the program starts; returns 127 when it is not
    found."""
    args = list(sys.argv[1:] if argv is None else argv)
    binary = find_binary()
    if args[:1] == ["--print-binary"]:
        if binary is None:
            print(_not_found_message(), file=sys.stderr)
            return 127
        print(binary)
        return 0
    if binary is None:
        print(_not_found_message(), file=sys.stderr)
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(binary, [binary] + args)
    except OSError as e:  # exists but cannot run (wrong architecture, no permission)
        print(f"plexus.serve: cannot run {binary}: {e}", file=sys.stderr)
        return 126
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
