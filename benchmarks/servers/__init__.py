"""The benchmarked servers: one module per implementation, same tool ``add(a, b)``."""
