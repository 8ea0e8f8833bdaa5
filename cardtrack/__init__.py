"""cardtrack: the application layer (command line) over engine, calibration, vision and server."""

__version__ = "0.1.0"
