"""examples/notebook/scalelens.ipynb executed headless (nbclient, a real ipykernel): on a small demo
study measured here with `scalelens sweep` (the MPI example, as scripts/demo.sh does) and the shared
DLRM traces. Any cell that raises fails the test."""
import os
import subprocess

import pytest

from test_scalelens import BIN, REALDATA, SOURCE, write_study

nbclient = pytest.importorskip("nbclient") if not os.environ.get("SCALELENS_REQUIRE_NOTEBOOK") else __import__("nbclient")
import nbformat  # noqa: E402


@pytest.mark.skipif(not REALDATA, reason="SCALELENS_REALDATA is not set (CI sets it)")
def test_the_example_notebook_runs_without_an_error(tmp_path):
    study = tmp_path / "runs"
    train = os.environ.get("SCALELENS_MPI_TRAIN")
    if train:
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", TMPDIR=str(tmp_path))
        subprocess.run([BIN, "sweep", "--study", str(study), "--label", "mpi-sgd-strong", "--tasks", "1,2", "--launcher", "local",
                        "--mpi-comm", "--run-args", "--global-batch-size 256", "-q", "--", train, "--mode", "strong",
                        "--epochs", "3", "--samples", "4096"], check=True, env=env, capture_output=True)
    else:
        write_study(str(study))
    notebook_dir = os.path.join(SOURCE, "examples", "notebook")
    nb = nbformat.read(os.path.join(notebook_dir, "scalelens.ipynb"), as_version=4)
    os.environ["SCALELENS_STUDY"] = str(study)
    os.environ["SCALELENS_TRACES"] = os.path.join(REALDATA, "kineto", "dlrm-8rank-v100")
    client = nbclient.NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": notebook_dir}})
    client.execute()  # raises CellExecutionError naming the cell
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    html = [o["data"]["text/html"] for o in outputs if o.get("output_type") == "execute_result" and "text/html" in o.get("data", {})]
    assert any("configurations" in h and "<table" in h for h in html), "the study's inline summary"
    assert any("unchanged" in h for h in html), "the comparison"
