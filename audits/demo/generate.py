"""Write the demo clusters' snapshots as kubectl List JSON: python -m audits.demo.generate."""

from __future__ import annotations

from pathlib import Path

import orjson

from audits.demo.builders import kube_list
from audits.demo.clusters import DEMO_CLUSTERS

DATA_DIR = Path(__file__).resolve().parent / "data"


def snapshot_path(cluster_name: str, position: int) -> Path:
    return DATA_DIR / cluster_name / f"{position + 1:02d}.json"


def main() -> None:
    for demo in DEMO_CLUSTERS:
        for position, (_, build) in enumerate(demo.captures):
            path = snapshot_path(demo.name, position)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(orjson.dumps(kube_list(build()), option=orjson.OPT_INDENT_2) + b"\n")
            print(path.relative_to(DATA_DIR.parent.parent.parent))


if __name__ == "__main__":
    main()
