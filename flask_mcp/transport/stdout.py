"""Keeping a process's stdout for protocol output only.

stdio speaks MCP on stdout and CGI writes its response there; a tool's
``print()`` or a logging handler on stdout would corrupt either, so both run
their handlers inside :func:`stdout_to_stderr`.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import typing as t

__all__ = ["stdout_to_stderr"]


@contextlib.contextmanager
def stdout_to_stderr() -> t.Iterator[None]:
    """Send ``print()`` and stdout logging handlers to stderr, so stdout carries MCP only."""
    moved: list[tuple[logging.StreamHandler[t.Any], t.Any]] = []
    loggers = [logging.getLogger(), *(logging.getLogger(name) for name in logging.root.manager.loggerDict)]
    for each in loggers:
        for handler in getattr(each, "handlers", ()):
            if isinstance(handler, logging.StreamHandler) and handler.stream in (sys.stdout, sys.__stdout__):
                moved.append((handler, handler.setStream(sys.stderr)))
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        for handler, stream in moved:
            handler.setStream(stream)
