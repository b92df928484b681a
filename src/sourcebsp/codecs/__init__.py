"""Lump codecs, one module per lump family."""
