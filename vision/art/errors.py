"""Errors for card art: bad render options, malformed art packs, impossible print layouts.

All derive from `ValueError`, so the command line reports them as one clean line, and every
message names the file, face or option at fault and says what to do.
"""

from __future__ import annotations


class ArtError(ValueError):
    """A render, pack or print request that cannot be carried out as given."""


class PackError(ArtError):
    """An art pack folder or `pack.json` that does not hold together."""


class PrintLayoutError(ArtError):
    """Cards that cannot be laid out on the requested paper."""
