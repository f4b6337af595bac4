"""dpaudit: audit and verify differentially private bandit algorithms."""
__version__ = "0.1.0"
