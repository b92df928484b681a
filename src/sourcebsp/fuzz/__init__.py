"""Fuzzing sourcebsp: entry points, an isolated runner, a structure-aware mutator.

* :mod:`.entry_points` -- every public way into a map (open, decode, entities,
  pakfile, queries, geometry, brushes, lightmaps, converters, save).
* :mod:`.runner` -- runs them on one map in a child process under a memory
  limit and a deadline, and says which kept the promise (success or a
  :class:`~sourcebsp.errors.BspError`).
* :mod:`.mutate` -- mutations that know the BSP layout (directory fields,
  lump versions, counts and indices inside lumps, LZMA headers, zip records,
  entity text), seeded from the package's example map.
* ``python -m sourcebsp.fuzz`` -- a long fuzzing run (see :mod:`.__main__`).
"""
