"""Loading many modules at once without the cyclic garbage collector watching."""
from __future__ import annotations

import gc
from typing import Callable, TypeVar

__all__ = ["load_quietly"]

T = TypeVar("T")


def load_quietly(load: Callable[[], T]) -> T:
    """``load()`` with the collector off, its objects then moved to the oldest generation.

    Importing numpy and the codec modules makes some 20,000 tracked objects that
    live as long as the program.  The collector would scan each of them as it
    ages through the young generations, for nothing.  Made with the
    collector off, they go straight to the oldest generation instead (freeze,
    then unfreeze: nothing stays frozen; the few hundred cyclic leftovers of an
    import go with the next full collection), unless the program keeps objects
    frozen itself.  The collector is left on or off as the program had it.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return load()
    finally:
        if not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
        if collecting:
            gc.enable()
