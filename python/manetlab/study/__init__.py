"""Studies: a base scenario, a grid of parameter values, seeds; run resumably into
an embedded store, summarised with confidence intervals (docs/studies.md)."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # What __getattr__ below imports on first use, for type checkers.
    from manetlab.study.executor import DaskExecutor as DaskExecutor
    from manetlab.study.executor import LocalExecutor as LocalExecutor
    from manetlab.study.executor import code_version as code_version
    from manetlab.study.executor import metrics_of as metrics_of
    from manetlab.study.spec import SeedHook as SeedHook
    from manetlab.study.spec import StudySpec as StudySpec
    from manetlab.study.spec import load_study as load_study
    from manetlab.study.store import Store as Store
    from manetlab.study.store import StoreError as StoreError
    from manetlab.study.store import StudyLock as StudyLock
    from manetlab.study.store import StudyLocked as StudyLocked
    from manetlab.study.study import RunReport as RunReport
    from manetlab.study.study import Study as Study

# Imported on first use (PEP 562), so that `manetlab.study.cli` (which the CLI
# loads to build its parser) does not pull in sqlite3 and multiprocessing.
_LAZY = {
    "DaskExecutor": "executor", "LocalExecutor": "executor", "code_version": "executor", "metrics_of": "executor",
    "SeedHook": "spec", "StudySpec": "spec", "load_study": "spec", "Store": "store", "StoreError": "store", "StudyLock": "store",
    "StudyLocked": "store", "RunReport": "study", "Study": "study",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"manetlab.study.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'manetlab.study' has no attribute {name!r}")

__all__ = ["DaskExecutor", "LocalExecutor", "RunReport", "SeedHook", "Store", "StoreError", "Study", "StudyLock", "StudyLocked", "StudySpec", "code_version", "load_study", "metrics_of"]
