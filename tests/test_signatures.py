"""No public function or method of dpaudit takes more than six parameters: longer lists are
value objects (dpaudit.core.request: Claim, Budget, AuditRequest; simulate.Request; ...).

Out of the rule: the keyword wrappers of the public API (each builds a request and passes it
on, which the last test checks), the fields of dataclasses (a value object's fields are not
a parameter list), compiled kernels (numba functions take arrays, not objects: the kernel
contract of dpaudit.simulation.simulate) and a paper's equation written in its notation.
"""
import dataclasses
import importlib
import inspect
import pkgutil

import pytest

from conftest import SOURCES

LIMIT = 6
KEYWORD_WRAPPERS = {
    "dpaudit.auditing.audit.audit_algorithm": "dpaudit.auditing.audit.audit_registered",
    "dpaudit.auditing.plugin.audit_callable": "dpaudit.auditing.plugin.audit_code",
    "dpaudit.auditing.mechanism.audit_mechanism": "dpaudit.auditing.mechanism.audit_inputs",
    "dpaudit.testing.assert_dp": "dpaudit.testing.assert_request",
}
# a paper's formula keeps the paper's arguments (faithful first)
EQUATIONS = {
    # c_{ε,k1,k2}(n, m, δ) with K arms and exponent s: Azize, Al Marjani, Jourdan and Basu 2023
    # (arXiv:2309.02202), eq. (4) = eq. (17), Theorem 4
    "dpaudit.algorithms.adap_tt.glr.c_eps",
}


def _functions():
    """(qualified name, function) of every public function and method of dpaudit's modules,
    and ``__init__`` of classes that are not dataclasses."""
    for package, folder in SOURCES.items():       # (dpaudit.algorithms lives in algorithms/)
        for info in pkgutil.iter_modules([str(folder)], package + "."):
            if info.name.endswith("__main__") or info.ispkg:
                continue
            yield from _members(info.name)


def _members(module_name: str):
    for name, obj in vars(importlib.import_module(module_name)).items():
        if getattr(obj, "__module__", None) != module_name or name.startswith("_"):
            continue
        if hasattr(obj, "py_func"):          # a numba kernel
            continue
        if inspect.isfunction(obj):
            yield f"{module_name}.{name}", obj
        elif inspect.isclass(obj):
            init = not dataclasses.is_dataclass(obj)     # a dataclass's are its fields
            for meth, f in vars(obj).items():
                if inspect.isfunction(f) and ((meth == "__init__" and init)
                                              or not meth.startswith("_")):
                    yield f"{module_name}.{name}.{meth}", f


def _count(f) -> int:
    return sum(p.name not in ("self", "cls") for p in inspect.signature(f).parameters.values())


def test_the_walk_sees_the_pipeline_and_the_algorithms():
    names = {n for n, _ in _functions()}
    assert {"dpaudit.auditing.audit.run_audit", "dpaudit.auditing.audit.conclude",
            "dpaudit.simulation.simulate.run_batch", "dpaudit.verdicts.verdict.decide",
            "dpaudit.algorithms.spec.AlgorithmSpec.request"} <= names
    assert len(names) > 200


def test_no_public_function_takes_more_than_six_parameters():
    long = sorted(f"{n} ({_count(f)})" for n, f in _functions()
                  if _count(f) > LIMIT and n not in KEYWORD_WRAPPERS and n not in EQUATIONS)
    assert long == []


@pytest.mark.parametrize("wrapper, target", sorted(KEYWORD_WRAPPERS.items()))
def test_keyword_wrappers_only_build_a_request_and_pass_it_on(wrapper, target, monkeypatch):
    """Each keyword wrapper calls its request-taking function once, with an AuditRequest
    carrying the arguments it was given."""
    from dpaudit.core.request import AuditRequest
    w_mod, w_name = wrapper.rsplit(".", 1)
    t_mod, t_name = target.rsplit(".", 1)
    seen = []

    def record(request, *rest):
        seen.append((request, rest))
        return "the result"
    monkeypatch.setattr(importlib.import_module(t_mod), t_name, record)
    fn = getattr(importlib.import_module(w_mod), w_name)
    if w_name == "audit_mechanism":
        out = fn(lambda rng, data, n: rng.random(n), 0, 1, eps=0.7, seed=5, alpha=0.01)
    elif w_name == "assert_dp":
        class Result:
            verdict = "pass"
        monkeypatch.setattr(importlib.import_module(t_mod), t_name,
                            lambda request, *rest: seen.append((request, rest)) or "the result")
        out = fn("adap-tt", 0.7, seed=5, alpha=0.01)
    else:
        out = fn("adap-tt" if w_name == "audit_algorithm" else "x.py:f", 0.7, seed=5,
                 alpha=0.01)
    assert out == "the result" and len(seen) == 1
    request = seen[0][0]
    assert isinstance(request, AuditRequest)
    assert (request.claim.eps, request.seed, request.budget.alpha) == (0.7, 5, 0.01)
