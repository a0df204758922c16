"""MLflow, imported on first use, with a clear message naming the extra when it is missing.

MLflow reports usage to its makers unless told not to; rag_judge sends no telemetry, so its
telemetry is switched off here (``MLFLOW_DISABLE_TELEMETRY``) unless the user set it. MLflow
imports litellm when it is installed, which would fetch a price list at import: it reads its
bundled copy instead, as rag_judge's own litellm backend does.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from rag_judge.core.errors import RagJudgeError

MLFLOW_EXTRA = "pip install 'rag-judge[mlflow]'"
"""How to install what this integration needs."""


class MlflowMissing(RagJudgeError):
    """MLflow is not installed: the message names the extra that brings it."""


def import_mlflow() -> ModuleType:
    """The ``mlflow`` module, telemetry off.

    Raises:
        MlflowMissing: MLflow is not installed.
    """
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        return importlib.import_module("mlflow")
    except ImportError as error:
        raise MlflowMissing(f"MLflow is not installed ({error}): {MLFLOW_EXTRA}") from error
