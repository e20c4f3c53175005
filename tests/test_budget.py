"""lipschitz_icl.budget: every Monte Carlo path refuses up front a request past its work budget, naming the
budget, its estimate and a cheaper setting that the same check accepts.  The times themselves (the
estimates against measured CPU time, and the default settings within 90 s) are benchmarks/bench_budget.py's."""

import math
import re

import numpy as np
import pytest

from lipschitz_icl import budget, make_problem
from lipschitz_icl.cli import main
from lipschitz_icl.loss import estimators
from lipschitz_icl.loss.fixed_draw import FixedDraw
from lipschitz_icl.loss.pairwise import pair_seconds, pairwise_terms
from lipschitz_icl.model.train import check_training_work, train
from lipschitz_icl.optimum import SECONDS_PER_BANK_POINT, wstar_mc
from lipschitz_icl.problem import mixture_problem
from lipschitz_icl.validation import ParameterError


def test_check_names_the_budget_the_estimate_and_a_cheaper_setting():
    budget.check(60.0, 60.0, name="contexts", value=5, what="x", cheaper="y")  # at the budget: accepted
    with pytest.raises(
        ParameterError, match=r"work budget of 60 s \(5 contexts: about 120 s .*cheaper setting: c"
    ) as info:
        budget.check(120.0, 60.0, name="contexts", value=5, what="5 contexts", cheaper="contexts <= 2")
    assert info.value.name == "contexts"
    with pytest.raises(ParameterError, match="memory budget of 2 GiB"):
        budget.check_memory(3 * 1024**3, name="n", value=1, what="a bank", cheaper="smaller n")
    assert budget.largest_count(60.0, 7.0) == 8 and budget.largest_count(1.0, 2.0) == 0


def _suggested(error: ParameterError, name: str) -> int:
    return int(re.search(rf"{name} <= (\d+)", str(error)).group(1))


def _refused_then_within(make_check, name, affordable: int | None = None):
    """The check refuses the request; the setting it suggests passes the same check, one more does not.  Where
    the budget ``affordable`` is below the command line's floor of contexts, the refusal suggests a smaller ``n``
    instead, and ``affordable`` is the count that passes."""
    with pytest.raises(ParameterError) as info:
        make_check(None)
    assert info.value.name == name and "work budget" in str(info.value)
    if affordable is not None and affordable < budget.MIN_CONTEXTS:
        assert "a cheaper setting: a smaller n" in str(info.value)
        largest = affordable
    else:
        largest = _suggested(info.value, name)
    make_check(largest)
    with pytest.raises(ParameterError):
        make_check(largest + 1)
    return largest


@pytest.mark.parametrize(
    "task, method, n",
    [
        ("affine", "naive", 100000),
        ("relu", "averaged", 100000),
        ("cosine", "averaged", 100000),
        ("affine", "averaged", 10**6),
    ],
)
def test_the_loss_estimators_refuse_past_the_budget(task, method, n):
    problem = make_problem(task, 5, n, 1.0, 0.5)
    model = estimators.make_attention(problem, 5.0)
    per_context = estimators.context_seconds(problem, model, method)

    def check(contexts):
        estimators.check_work(problem, 20000 if contexts is None else contexts, per_context, budget.COMMAND_SECONDS)

    affordable = math.floor(budget.COMMAND_SECONDS / per_context)
    assert _refused_then_within(check, "contexts") == affordable >= 2  # the library's floor is 2: a count

    def cli_check(contexts):  # the command line's floor: below it the refusal names a smaller n
        estimators.check_work(
            problem, 20000 if contexts is None else contexts, per_context, budget.COMMAND_SECONDS,
            floor=budget.MIN_CONTEXTS,
        )  # fmt: skip

    assert _refused_then_within(cli_check, "contexts", affordable) == affordable


def test_the_pairwise_mixture_of_the_issue_is_refused_at_the_command_line(capsys):
    """The pairwise mixture Monte Carlo at n = 1000 ran past 200 s with no budget (issue 29)."""
    argv = ["loss", "--task", "mix:affine=1,relu=1,cosine=1", "--d", "3", "--n", "1000", "--L", "1"]
    argv += ["--sigma", "0.5", "--w", "0.02", "--method", "averaged"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("lipschitz-icl: error: --contexts: must be within the work budget")
    # it affords about 70 contexts, fewer than the command line's floor of 100: the cheaper setting is a smaller n
    assert "a cheaper setting: a smaller n" in err[0] and "method 'exact'" in err[0]
    problem = mixture_problem("mix:affine=1,relu=1,cosine=1", 3, 1000, 1.0, 0.5)
    kernel = problem.task_class.kernel

    def check(contexts):
        pairwise_terms(
            kernel, 1000, 0.02, contexts=20000 if contexts is None else contexts, rng=0, budget=budget.COMMAND_SECONDS
        )

    with pytest.raises(ParameterError):
        check(None)
    largest = math.floor(budget.COMMAND_SECONDS / (1000**2 * pair_seconds(kernel)))
    assert largest < budget.MIN_CONTEXTS  # so the refusal suggested a smaller n, not this count
    with pytest.raises(ParameterError, match="work budget"):
        check(largest + 1)


def test_general_terms_and_fixed_draws_obey_the_engine_budget():
    problem = make_problem("lowrank-linear", 8, 10**6, 1.0, 0.5, rank=2)
    model = estimators.make_attention(problem, 1.0)
    with pytest.raises(ParameterError, match="work budget of 900 s"):
        estimators.general_terms(problem, [model, model], 100000, np.random.default_rng(0))
    with pytest.raises(ParameterError, match="memory budget") as info:
        FixedDraw(problem, 100000, 0)
    assert info.value.name == "contexts"


def test_the_mc_search_caps_its_contexts_and_refuses_a_bank_beyond_the_budgets():
    problem = make_problem("affine", 3, 10**5, 1.0, 0.5)
    with pytest.raises(ParameterError, match="work budget of 60 s") as info:
        wstar_mc(problem, contexts=300, budget=budget.COMMAND_SECONDS)
    largest = math.floor(budget.COMMAND_SECONDS / (10**5 * SECONDS_PER_BANK_POINT))
    assert info.value.name == "contexts" and f"a cheaper setting: contexts <= {largest} " in str(info.value)
    with pytest.raises(ParameterError, match="memory budget") as info:
        wstar_mc(make_problem("affine", 3, 10**7, 1.0, 0.5))
    assert info.value.name == "n"
    small = wstar_mc(make_problem("affine", 3, 50, 1.0, 0.5), rng=0, rel_precision=0.2, budget=0.02)
    assert (
        small.info["contexts"]
        <= small.info["contexts_within_budget"]
        == math.floor(0.02 / (50 * SECONDS_PER_BANK_POINT))
    )


def test_training_refuses_steps_past_the_budget():
    problem = make_problem("affine", 5, 2000, 1.0, 0.5)

    def check(steps):
        check_training_work(problem, 2000 if steps is None else steps, 256, budget.COMMAND_SECONDS)

    _refused_then_within(check, "steps")
    with pytest.raises(ParameterError, match="work budget") as info:
        train(problem, steps=10**5, batch=256, budget=1.0)
    assert info.value.name == "steps"


def test_the_train_command_counts_the_held_out_prompts_with_the_training(capsys):
    argv = ["train", "--task", "affine", "--d", "5", "--n", "2000", "--L", "1", "--sigma", "0.5"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--steps: must be within the work budget of 60 s" in err and "held-out" in err
    steps = int(re.search(r"steps <= (\d+)", err).group(1))
    assert 0 < steps < 2000


def test_a_refusal_never_suggests_fewer_contexts_than_the_command_line_accepts():
    """On the command line ``contexts <= k`` only where ``k`` is at least :data:`budget.MIN_CONTEXTS` (``loss
    --contexts`` refuses fewer: their normal-approximation intervals under-cover), else a smaller ``n``; the
    library, which accepts 2 contexts, still names the count."""
    floor = budget.MIN_CONTEXTS
    assert budget.fewer_contexts(5000, floor=floor) == "contexts <= 5000"
    assert budget.fewer_contexts(floor, floor=floor) == f"contexts <= {floor}"
    assert budget.fewer_contexts(floor - 1, floor=floor) == "a smaller n"
    assert budget.fewer_contexts(floor - 1) == f"contexts <= {floor - 1}"  # the library accepts from 2
    assert main(["loss", "--task", "affine", "--d", "3", "--n", "100", "--L", "1", "--sigma", "0.5", "--w", "5",
                 "--contexts", str(budget.MIN_CONTEXTS - 1)]) == 2  # fmt: skip
