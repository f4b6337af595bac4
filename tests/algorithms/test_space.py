"""The claim's space (dpaudit.algorithms.space): what each registered claim covers, declared
with its scope and source, and the proposals a search draws from it."""
import math

import numpy as np
import pytest

from dpaudit.algorithms import registry
from dpaudit.algorithms.space import Scale, Scope
from dpaudit.algorithms.spec import matrix_text
from dpaudit.errors import InputError

SPECS = registry.all_specs()


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_every_dimension_is_a_parameter_with_a_source_and_a_window_inside_its_range(spec):
    space = spec.space()
    assert space.algorithm == spec.name and space.claim == spec.theorem
    assert bool(spec.theorem) == spec.private     # a private algorithm cites its claim
    for a in space.axes:
        assert a.param is spec.param(a.name) and a.dim.source.strip()
        assert a.dim.scope in Scope and a.dim.scale in Scale
        if a.dim.scale == Scale.CHOICE:
            assert a.param.kind == "choice" and a.dim.scope == Scope.OPTION
            continue
        if a.dim.scale == Scale.GENERATED:
            lo, hi = a.dim.window
            assert 2 <= lo <= hi     # numbers of arms
            continue
        lo, hi = a.window()
        assert lo < hi
        for x in (lo, hi):                        # both ends are accepted values
            a.param.parse(int(x) if a.param.kind == "int" else x)


def test_the_ncb_constants_are_proof_scope_and_options_are_not_searched_unless_asked():
    space = registry.get("gdp-ncb").space()
    scopes = {a.name: a.dim.scope for a in space.axes}
    assert scopes == {"means": "theorem", "horizon": "theorem", "c": "proof",
                      "alpha_conf": "proof", "phase1_constant": "proof"}
    ldp = registry.get("ldp-ncb").space()
    assert "ldp_clip" not in [a.name for a in ldp.free()]
    assert "ldp_clip" in [a.name for a in ldp.free(include_options=True)]
    pinned = registry.get("gdp-ncb").space(pinned={"horizon", "c"})
    assert [a.name for a in pinned.free()] == ["means", "alpha_conf", "phase1_constant"]


def test_axis_values_follow_their_scale_over_the_window():
    space = {a.name: a for a in registry.get("gdp-ncb").space().axes}
    c1 = space["phase1_constant"]
    assert c1.value(0.0) == pytest.approx(1e-3) and c1.value(0.5) == pytest.approx(math.sqrt(10))
    assert c1.value(1.0) == pytest.approx(1e4, rel=1e-9)
    T = space["horizon"]
    values = [T.value(u) for u in np.linspace(0, 1, 50)]
    assert all(isinstance(v, int) and 4 <= v <= 512 for v in values)
    assert values == sorted(values) and T.value(0.5) == round(math.sqrt(4 * 512))
    beta = {a.name: a for a in registry.get("adap-tt").space().axes}["beta"]
    assert beta.value(0.25) == pytest.approx(0.3)
    means = space["means"]
    family = ((0.1, 0.2), (0.3, 0.4, 0.5))
    assert means.value(0.2, family) == family[0] and means.value(0.7, family) == family[1]


def test_features_accept_arrays_and_written_rows():
    spec = registry.get("dp-od")
    th = np.pi / 6
    A = np.array([[np.cos(th), np.sin(th)], [-np.sin(th), np.cos(th)]])
    p = spec.resolve_params({"features": A, "means": (0.6, 0.4)})
    assert p["features"] == matrix_text(A)
    assert np.array_equal(np.array([[float(x) for x in r.split(",")]
                                    for r in p["features"].split(";")]), A)   # exact
    prep = spec.prepare(1.0, p)
    assert np.allclose(prep.means, (0.6, 0.4))
    with pytest.raises(InputError, match="unequal length"):
        spec.prepare(1.0, spec.resolve_params({"features": "1,0;0", "means": "0.6,0.4"}))
    with pytest.raises(InputError, match="features=1,x;0,1 is not valid"):
        spec.prepare(1.0, spec.resolve_params({"features": "1,x;0,1", "means": "0.6,0.4"}))
