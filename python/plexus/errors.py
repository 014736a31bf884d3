"""Exceptions raised by Plexus.

Every error from the runtime is a :class:`PlexusError` of the class matching
its status code (the codes are TensorFlow's and Abseil's). Messages name the
op, node, device or file involved. Classes also derive from the closest
built-in exception, so ``except ValueError`` catches bad arguments.
"""

from __future__ import annotations


class PlexusError(Exception):
    """Base class of every Plexus error."""

    code: int = 2

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class CancelledError(PlexusError):
    code = 1


class UnknownError(PlexusError):
    code = 2


class InvalidArgumentError(PlexusError, ValueError):
    code = 3


class DeadlineExceededError(PlexusError, TimeoutError):
    code = 4


class NotFoundError(PlexusError, LookupError):
    code = 5


class AlreadyExistsError(PlexusError):
    code = 6


class PermissionDeniedError(PlexusError, PermissionError):
    code = 7


class ResourceExhaustedError(PlexusError, MemoryError):
    code = 8


class FailedPreconditionError(PlexusError, RuntimeError):
    code = 9


class AbortedError(PlexusError):
    code = 10


class OutOfRangeError(PlexusError, IndexError):
    code = 11


class UnimplementedError(PlexusError, NotImplementedError):
    code = 12


class InternalError(PlexusError, RuntimeError):
    code = 13


class UnavailableError(PlexusError):
    code = 14


class DataLossError(PlexusError):
    code = 15


class UnauthenticatedError(PlexusError):
    code = 16


_BY_CODE = {
    cls.code: cls
    for cls in (
        CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError, NotFoundError,
        AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError, FailedPreconditionError,
        AbortedError, OutOfRangeError, UnimplementedError, InternalError, UnavailableError,
        DataLossError, UnauthenticatedError,
    )
}

__all__ = ["PlexusError"] + [cls.__name__ for cls in _BY_CODE.values()]
