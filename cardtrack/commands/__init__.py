"""Subcommands of the `cardtrack` command line, one module each (see `cardtrack.cli`)."""
