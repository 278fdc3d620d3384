"""The one exception type for mistakes a user can make (bad slug, key, type, seed range, path).

The CLI turns it into a single line on stderr and exit code 2, before anything is written.
"""


class UserError(Exception):
    """A mistake in what the user asked for; its message is one line that says what to fix."""
