"""Errors raised by the calibration package for malformed input.

Every problem with a file the user gave (a profile, a lens file, a layout, a folder of frames)
or with what the camera saw (no markers found, too few board corners) is a `CalibrationError`,
a `ValueError`, so the command line prints it as one clean line. Each message names the file
and the field at fault and says what to do about it.
"""

from __future__ import annotations


class CalibrationError(ValueError):
    """A calibration input (file, frames, option) that cannot be used, with what to do."""


class ProfileError(CalibrationError):
    """A table profile or lens file that is missing, unreadable or inconsistent."""


class LayoutError(CalibrationError):
    """A zone layout that does not hold together (overlap, off the table, unknown kind...)."""


class DetectionError(CalibrationError):
    """The camera frames do not show enough markers or board corners to calibrate."""
