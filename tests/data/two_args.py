def two(rng, data):
    """Forgets the eps argument: refused before any run."""
    return [0]
