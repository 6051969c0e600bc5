"""Exceptions a user can cause; the app shows their message, never a traceback."""

REBUILD_HINT = "Rebuild the default model with: python -m model.train --preset default"


class AnatomyError(Exception):
    """Base class for every error this project raises on purpose."""


class InputError(AnatomyError, ValueError):
    """The sentence or the controls cannot be used as given."""


class CheckpointError(AnatomyError):
    """A checkpoint directory is missing, incomplete, corrupt or inconsistent."""
