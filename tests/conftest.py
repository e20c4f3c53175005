"""Shared test settings: Hypothesis profile with bounded example counts, no deadline (the
estimators are vectorised Monte Carlo, their run time is not what these tests measure) and
derandomised example generation, so that CI runs the same examples every time."""

from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")
