"""The one exception type for mistakes a user can make (bad slug, key, type, seed range, path).

The CLI turns it into a single line on stderr and exit code 2, before anything is written.
"""


class UserError(Exception):
    """A mistake in what the user asked for; its message is one line that says what to fix."""


def from_os_error(exc: OSError, what: str = "") -> UserError:
    """A :class:`UserError` for an ``OSError`` met on a path the user gave (a folder without permission, a
    missing file): the path (escaped when it holds a control character, so the line stays one line) and
    the reason, after ``what`` (the knob or flag) when given.

    >>> str(from_os_error(PermissionError(13, "Permission denied", "locked/x"), "--results"))
    '--results: locked/x: Permission denied'
    """
    name = exc.filename
    shown = "" if name is None else str(name) if str(name).isprintable() else repr(str(name))
    reason = exc.strerror or f"{type(exc).__name__}: {exc}"
    return UserError(": ".join(part for part in (what, shown, reason) if part))
