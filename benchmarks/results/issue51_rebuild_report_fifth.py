"""Rebuild a kit run's report.json from its job.log when the report itself did not come back.

The job logs every phase's record (without per-problem lists) and the final status; the model configs, which the
log does not hold, come from a short CPU run of the same kit (they depend on the kit only, not on training)."""

import json
import re
import sys
from pathlib import Path

log, kit, cpu_report, out = map(Path, sys.argv[1:5])
lines = log.read_text(encoding="utf-8").splitlines()
kit_json = json.loads((kit / "kit.json").read_text(encoding="utf-8"))
cpu = json.loads(cpu_report.read_text(encoding="utf-8"))
report = {
    "status": None,
    "minutes": 8.0,
    "machine": {"device": "cuda", "torch": "2.11.0", "python": "3.12.3", "gpu": "NVIDIA H200", "gpu_memory_gib": 139.8},
    "kit": {
        k: kit_json.get(k) for k in ("created", "start_model", "start_facts", "pretrain_texts", "problems", "sizes")
    },
    "job": kit_json["job"],
    "phases": {},
    "files": [],
    "reconstructed": "report.json did not come back from the GPU machine (a limit on the number of files); "
    "rebuilt from job.log, the configs from a CPU run of the same kit, machine facts from nvidia-smi and pip list",
}
for line in lines:
    m = re.match(r"^phase (\S+): (\{.*\})$", line)
    if m:
        report["phases"][m.group(1)] = json.loads(m.group(2))
    m = re.match(r"^set up in ([\d.]+) s", line)
    if m:
        report["setup_seconds"] = float(m.group(1))
    if line.startswith('{"status"'):
        final = json.loads(line)
        report.update(status=final["status"], seconds=final["seconds"], files=final["files"])
assert report["status"] == "done" and report["files"], report["status"]
report["configs"] = cpu["configs"]
out.write_text(json.dumps(report, indent=1), encoding="utf-8")
print({p: list(r)[:6] for p, r in report["phases"].items()})
