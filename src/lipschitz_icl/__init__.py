"""lipschitz-icl: numbers you can trust for *Softmax Attention Adapts to Function Lipschitzness*."""

from .attention import Attention, AttentionLayer
from .estimate import Estimate, LossEstimate
from .problem import Problem, make_problem
from .tasks import TASK_NAMES, make_task_class
from .validation import ParameterError

__version__ = "0.1.0"

__all__ = [
    "Attention",
    "AttentionLayer",
    "Estimate",
    "LossEstimate",
    "ParameterError",
    "Problem",
    "TASK_NAMES",
    "make_problem",
    "make_task_class",
    "__version__",
]
