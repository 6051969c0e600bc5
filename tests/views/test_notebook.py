"""docs/notebook.ipynb runs: executed cell by cell in a Jupyter kernel of this environment (nbclient), from the
project's root as a clone's user would start it, and stored without outputs."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "docs" / "notebook.ipynb"

pytestmark = pytest.mark.slow


def test_the_notebook_is_stored_without_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code
    assert all(not cell.outputs and cell.execution_count is None for cell in code)


def test_the_notebook_runs_and_draws_every_page_it_opens():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    shown = [output for output in outputs if output.output_type in ("display_data", "execute_result")]
    pages = [output for output in shown if "text/html" in output.get("data", {})]  # a PageView's own HTML
    figures = [output for output in shown if "application/vnd.plotly.v1+json" in output.get("data", {})]
    assert len(pages) >= 1 and len(figures) >= 3
    printed = "".join(output.get("text", "") for output in outputs if output.output_type == "stream")
    assert "Paris" in printed  # SmolLM2's answer
