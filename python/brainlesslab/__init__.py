"""brainlesslab: the BrainlessLab C engine from Python (docs/python.md).

Plans and records (check, run, inspect, decode, Record) run the CLI's own
command code in-process; the model API (configs, construct, ModelBatch)
steps reservoirs by hand. Arrays are NumPy arrays that own their memory or
keep their owner alive. The library is found as _native.library_path says.
"""

from ._commands import check, inspect
from ._models import (FalandaysConfig, Generator, InitialState, ModelBatch, SornConfig,
                      construct, seed_for)
from ._native import library_path
from ._records import ProbeEvents, Record, decode, merge, open_record, run

__version__ = "0.1.0"

__all__ = ["check", "construct", "decode", "FalandaysConfig", "Generator", "InitialState",
           "inspect", "library_path", "merge", "ModelBatch", "open_record", "ProbeEvents", "Record",
           "run", "seed_for", "SornConfig", "__version__"]
