"""The regularity-law claims (registry ``claims/regularity.toml``): their rules on exact values built from
the derived law (the exact method replaced by the law itself, so each test takes seconds), the rival
powers of the registry's alternatives, and ``lipschitz-icl scaling --kernel``."""

import json
from types import SimpleNamespace

import pytest

from lipschitz_icl import decision
from lipschitz_icl.claims import regularity
from lipschitz_icl.cli import main
from lipschitz_icl.derivations import regularity as law
from lipschitz_icl.estimate import Estimate
from lipschitz_icl.optimum import WStar
from lipschitz_icl.problem import prior

MATERN = "(1 + sqrt(3)*sqrt(2-2*t))*exp(-sqrt(3)*sqrt(2-2*t))"


@pytest.fixture
def specs(group_registry):
    return group_registry("regularity")


def _reg(kernel, spec):
    return law.regularity_of_kernel(prior(kernel, 3, spec.design["kernels"], 1.0)[0])


def _exact_bias(reg, factor=1.0, power_shift=0.0):
    """A stand-in for the exact method whose bias is ``factor b w^-(beta + power_shift) (1 + k w^-q)``
    with the exact method's relative accuracy 1e-9."""

    def exact_loss(problem, w):
        value = factor * reg.b * w ** -(reg.beta + power_shift) * (1 + (reg.k or 0.0) * w**-reg.q)
        return SimpleNamespace(bias=Estimate(value, abs_error=1e-9 * value), info={"converged": True})

    return exact_loss


def _judge(spec, outcome):
    return decision.judge(outcome.decide, spec.resolutions, spec.alternatives)


@pytest.mark.parametrize("kernel", ["affine", "matern32"])  # beta = 2 (analytic) and 3/2
def test_bias_power_holds_for_the_derived_law_and_refutes_the_envelope(specs, monkeypatch, kernel):
    spec = specs["bias-power"]
    reg = _reg(kernel, spec)
    monkeypatch.setattr(regularity, "exact_loss", _exact_bias(reg))
    judged = _judge(spec, regularity.bias_power(**spec.design, kernel=kernel, d=3))
    assert judged.decision.verdict == "holds" and judged.resolved
    alternatives = {a.name: a for a in judged.alternatives}
    assert alternatives["the Lipschitz-envelope rate"].ruled_out  # beta = 1
    rough = alternatives["roughness does not matter"]  # beta = 2
    assert rough.ruled_out == (reg.beta != 2.0)
    assert ("the claim's own power" in rough.detail) == (reg.beta == 2.0)


def test_bias_power_refutes_a_bias_falling_with_another_power(specs, monkeypatch):
    spec = specs["bias-power"]
    monkeypatch.setattr(regularity, "exact_loss", _exact_bias(_reg("matern32", spec), power_shift=0.05))
    assert regularity.bias_power(**spec.design, kernel="matern32", d=3).decide().verdict == "fails"


def _exact_wstar(reg, factor=1.0):
    """A stand-in for the exact ``w*`` (and the loss there): ``factor C rho^alpha (1 + derived next
    order)`` with the exact method's relative accuracy 3e-6."""

    def law_point(problem):
        w0 = reg.C * (problem.n / problem.sigma**2) ** reg.alpha
        w = factor * w0 * (1 + reg.wstar_next_order(w0))
        result = WStar(Estimate(w, abs_error=3e-6 * w), w * (1 - 3e-6), w * (1 + 3e-6), Estimate(0.0), "exact", {})
        return result, SimpleNamespace(info={"converged": True})

    return law_point


def test_window_law_holds_for_the_derived_law_and_refutes_its_rivals(specs, monkeypatch):
    spec = specs["window-law"]
    monkeypatch.setattr(regularity, "_law_point", _exact_wstar(_reg("matern32", spec)))
    judged = _judge(spec, regularity.window_law(**spec.design, kernel="matern32", d=3))
    assert judged.decision.verdict == "holds" and all(r.resolved for r in judged.resolutions)
    assert all(a.ruled_out for a in judged.alternatives)  # 2/(d+1) and 2/(d+3) against 2/(d+2)


def test_window_law_refutes_a_constant_off_by_five_percent(specs, monkeypatch):
    spec = specs["window-law"]
    monkeypatch.setattr(regularity, "_law_point", _exact_wstar(_reg("matern32", spec), factor=1.05))
    assert regularity.window_law(**spec.design, kernel="matern32", d=3).decide().verdict == "fails"


def test_rough_window_law_never_refutes_while_its_next_order_is_not_derived(specs, monkeypatch):
    """beta = 1/2 with no derived next order: 5% off the law is inconclusive, not a refutation."""
    spec = specs["window-law-rough"]
    case = spec.cases("default")[0]
    monkeypatch.setattr(regularity, "_law_point", _exact_wstar(_reg("exponential", spec), factor=1.05))
    assert regularity.window_law_rough(**case.kwargs).decide().verdict == "inconclusive"


def test_scaling_kernel_judges_the_registry_window_law(specs, monkeypatch, capsys):
    """``scaling --kernel``: the window-law claim with the registry's design, resolutions and alternatives
    on the grid where the derived w0 is 1e3, 1e4, 1e5."""
    design = specs["window-law"].design
    monkeypatch.setattr(regularity, "_law_point", _exact_wstar(_reg("matern32", specs["window-law"])))
    assert main(["scaling", "--kernel", MATERN, "--d", "3", "--json", "--scheduler", "serial"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "holds" and out["gamma"] == pytest.approx(1.5) and out["beta"] == pytest.approx(1.5)
    assert [a["name"] for a in out["alternatives"]] == [a.name for a in specs["window-law"].alternatives]
    assert all(a["ruled_out"] for a in out["alternatives"]) and out["resolution"]["value"] is not None
    w0 = [out["C_derived"] * (n / design["sigma"] ** 2) ** out["alpha_derived"] for n in out["n_grid"]]
    assert w0 == pytest.approx(design["scaling_w0"], rel=1e-3)
