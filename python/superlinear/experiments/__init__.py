"""Reproduced figures and studies, each a declarative description run by the shared driver."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from superlinear.experiments import fig5, fig8, fig9, fig11, million_flows, scaling
from superlinear.experiments.spec import Experiment

#: name → builder(quick) of every reproducible experiment.
REGISTRY: dict[str, Callable[[bool], Experiment]] = {
    "fig5": fig5.experiment,
    "fig11": fig11.experiment,
    "cache-skew": fig11.skew_experiment,
    "cache-sensitivity": fig11.sensitivity_experiment,
    "fig8": fig8.experiment,
    "fig9": fig9.experiment,
    "scaling": scaling.experiment,
    "million-flows": million_flows.experiment,
}

#: Experiments that read data files: name → builder(quick, data folder or None).
DATA_REGISTRY: dict[str, Callable[[bool, Path | None], Experiment]] = {
    "fig8": fig8.experiment,
    "fig9": fig9.experiment,
    "scaling": scaling.experiment,
}
