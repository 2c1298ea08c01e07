"""Studies: a base scenario, a grid of parameter values, seeds; run resumably into
an embedded store, summarised with confidence intervals (docs/studies.md)."""

# Imported on first use (PEP 562), so that `manetlab.study.cli` (which the CLI
# loads to build its parser) does not pull in sqlite3 and multiprocessing.
_LAZY = {
    "DaskExecutor": "executor", "LocalExecutor": "executor", "code_version": "executor", "metrics_of": "executor",
    "SeedHook": "spec", "StudySpec": "spec", "load_study": "spec", "Store": "store", "StoreError": "store", "StudyLock": "store",
    "StudyLocked": "store", "RunReport": "study", "Study": "study",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"manetlab.study.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'manetlab.study' has no attribute {name!r}")

__all__ = ["DaskExecutor", "LocalExecutor", "RunReport", "SeedHook", "Store", "StoreError", "Study", "StudyLock", "StudyLocked", "StudySpec", "code_version", "load_study", "metrics_of"]
