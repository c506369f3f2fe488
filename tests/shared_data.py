"""Where the shared graph collection lies: ``$METRICOPT_DATA``, else ``../shared/data``
beside the repository (as CI lays it out). Tests that need it skip when it is absent."""

import os
from pathlib import Path

#: The shared data directory (may not exist).
SHARED_DATA = Path(os.environ.get("METRICOPT_DATA",
                                  Path(__file__).resolve().parents[2] / "shared" / "data"))
