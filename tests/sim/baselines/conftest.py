"""The baselines' tests build on the cluster model's kit, one directory up (tests/sim/sim_kit.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
