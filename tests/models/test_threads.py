"""Thread settings before torch is imported: a prediction on ONNX Runtime never imports it, and torch imported
later (the PyTorch runtime, training) still runs on the threads asked for."""

import subprocess
import sys


def test_threads_set_before_torch_is_imported_hold_once_it_is():
    script = (
        "import sys\n"
        "from mathgraph.models.threads import configure_threads\n"
        "assert configure_threads(1) == 1\n"
        "assert 'torch' not in sys.modules\n"
        "import torch\n"
        "print(torch.get_num_threads())\n"
    )
    env_free = {k: v for k, v in __import__("os").environ.items() if k != "OMP_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env_free, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "1"
