"""Exceptions a user can cause; the app shows their message, never a traceback. A message a person reads is a
Later (i18n.later): str(exc) says it in the language of the run that shows it."""

from i18n import Later, later

# said when shown (a Later); `in` and == read its English
REBUILD_HINT = later("Rebuild the default model with: {command}", command="python -m model.train --preset default")


class AnatomyError(Exception):
    """Base class for every error this project raises on purpose."""


class InputError(AnatomyError, ValueError):
    """The sentence or the controls cannot be used as given."""


class CheckpointError(AnatomyError):
    """A checkpoint directory is missing, incomplete, corrupt or inconsistent."""


def message(exc: BaseException) -> str:
    """What `exc` says, kept a Later when it is one, to be said in the language of whoever shows it (str(exc)
    would say it now, in this run's language)."""
    said = exc.args[0] if len(exc.args) == 1 else None
    return said if isinstance(said, Later) else str(exc)
