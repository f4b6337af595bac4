"""dpaudit: audit and verify differentially private bandit algorithms.

Public API: :func:`audit_algorithm` (registered bandit algorithms on neighbouring reward
tables), :func:`audit_mechanism` (any ``mechanism(rng, data, n)`` on a fixed pair of inputs)
and :func:`audit_callable` (a plain Python bandit ``function(rng, data, eps)``, which may return a
:class:`~dpaudit.simulation.transcript.Transcript` per run). Each returns an
:class:`~dpaudit.verdicts.result.AuditResult`.
"""
from importlib.metadata import version as _version

__version__ = _version("dpaudit")     # one source: pyproject.toml

_API = {"audit_algorithm": "dpaudit.auditing.audit",
        "audit_mechanism": "dpaudit.auditing.mechanism",
        "audit_callable": "dpaudit.auditing.plugin",
        "AuditResult": "dpaudit.verdicts.result",
        "Transcript": "dpaudit.simulation.transcript"}
__all__ = list(_API)


def __getattr__(name: str) -> object:   # imported on first use: `import dpaudit` stays light
    if name in _API:
        import importlib
        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'dpaudit' has no attribute {name!r}")
