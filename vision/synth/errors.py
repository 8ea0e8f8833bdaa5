"""Errors of the synthetic scene renderer: bad input is a `ValueError` with a clear message.

`SynthError` covers malformed scene descriptions, unreadable art and impossible options;
`TruthError` is raised when a truth file does not follow the schema, and names the file, the
JSON path of the offending value and the reason.
"""

from __future__ import annotations


class SynthError(ValueError):
    """A scene, option or art input the renderer cannot use; the message says what to fix."""


class TruthError(SynthError):
    """A truth file that does not follow `datasets/truth/truth.schema.json`."""
