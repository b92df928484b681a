"""A progress bar over named steps (rich's when installed and stderr is a terminal)."""
from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

if TYPE_CHECKING:
    from rich.console import Console


def _terminal_console() -> "Console | None":
    """rich's console on stderr when rich is installed and stderr is a terminal, else None.
    Not a terminal and nothing in the environment forcing one (rich's ``TTY_COMPATIBLE``,
    ``FORCE_COLOR``): rich, a slow import, is not imported."""
    try:
        terminal = sys.stderr.isatty()
    except (AttributeError, ValueError):
        terminal = False
    if not terminal and not {"TTY_COMPATIBLE", "FORCE_COLOR"} & os.environ.keys():
        return None
    try:
        from rich.console import Console  # rich, an optional extra (cli): imported where used
    except ImportError:
        return None
    console = Console(stderr=True)
    return console if console.is_terminal else None


@contextlib.contextmanager
def steps(title: str, names: Sequence[str]) -> Iterator[Callable[[str], None]]:
    """Yield a callback to call with each finished step's name; the bar advances one step."""
    console = _terminal_console()
    if console is None:
        yield lambda step: None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn  # rich, as in _terminal_console

    names = list(names)
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task(f"{title}: {names[0]}" if names else title, total=len(names))

        def advance(step: str) -> None:
            done = names.index(step) + 1 if step in names else None
            nxt = names[done] if done is not None and done < len(names) else "done"
            bar.update(task, completed=done if done is not None else None, description=f"{title}: {nxt}")

        yield advance


@contextlib.contextmanager
def busy(title: str) -> Iterator[None]:
    """A moving bar with the elapsed time for one long step (rich's, when stderr is a terminal)."""
    console = _terminal_console()
    if console is None:
        yield
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn  # rich, as in _terminal_console

    with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), console=console,
                  transient=True) as bar:
        bar.add_task(title, total=None)
        yield


@contextlib.contextmanager
def counter(title: str, total: int) -> Iterator[Callable[[int], None]]:
    """Yield a callback advancing a bar of ``total`` items by its argument (rich's, on a terminal)."""
    console = _terminal_console()
    if console is None:
        yield lambda count: None
        return
    # rich, as in _terminal_console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task(title, total=total)
        yield lambda count: bar.advance(task, count)
