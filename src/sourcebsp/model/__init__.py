"""What users think in: brush meshes, displacements, lightmaps (built from decoded lumps)."""
