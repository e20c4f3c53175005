"""The lemma at the ends of the projection tail (lipschitz_icl.estimators.projection_lemma): it proves the
Dasgupta-Gupta
bound where both sides vanish, at the rate 1/2 only, and names its piece of the domain."""

import pytest

from lipschitz_icl.decision import Verdict
from lipschitz_icl.estimators.projection_lemma import DG_BOUNDS, beta_end_lemma


@pytest.mark.parametrize("form, side", [("exponential", "lower"), ("sharp", "lower"), ("sharp", "upper")])
def test_end_lemma_proves_at_rate_one_half_only(form, side):
    d, k = 6, 2
    end = 0.25 * k / d if side == "lower" else 1 - 0.25 * (1 - k / d)
    lemma = beta_end_lemma(d, k, form, side, end)
    verdict, detail = lemma.check(0.5)
    assert verdict == Verdict.PROVED and " < " in detail
    assert lemma.check(0.4)[0] == Verdict.UNDECIDED  # another rate changes the power: the argument is silent
    assert lemma.search.bound == DG_BOUNDS[form]
    assert lemma.search.domain["s"] == ([0.0, end] if side == "lower" else [end, 1.0])
