"""Studies: a base scenario, a grid of parameter values, seeds; run resumably into
an embedded store, summarised with confidence intervals (docs/studies.md)."""

from manetlab.study.executor import DaskExecutor, LocalExecutor, code_version, metrics_of
from manetlab.study.spec import SeedHook, StudySpec, load_study
from manetlab.study.store import Store
from manetlab.study.study import RunReport, Study

__all__ = ["DaskExecutor", "LocalExecutor", "RunReport", "SeedHook", "Store", "Study", "StudySpec", "code_version", "load_study", "metrics_of"]
