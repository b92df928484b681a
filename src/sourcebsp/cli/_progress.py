"""A progress bar over named steps (rich's when installed and stderr is a terminal)."""
from __future__ import annotations

import contextlib
from typing import Callable, Iterator, Sequence


@contextlib.contextmanager
def steps(title: str, names: Sequence[str]) -> Iterator[Callable[[str], None]]:
    """Yield a callback to call with each finished step's name; the bar advances one step."""
    try:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:
        yield lambda step: None
        return
    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda step: None
        return
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
    try:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:
        yield
        return
    console = Console(stderr=True)
    if not console.is_terminal:
        yield
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), console=console,
                  transient=True) as bar:
        bar.add_task(title, total=None)
        yield
