"""Log epochs and steps into the run folder of `scalelens run` (standard library only).

The same module as `scalelens.log` (python/scalelens/log.py), for training scripts that put this
folder on sys.path and `import scalelens_log as sl` without the package or its compiled part.
"""
import importlib.util as _util
import os as _os
import sys as _sys

_spec = _util.spec_from_file_location("scalelens_log_impl", _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "scalelens", "log.py"))
_impl = _util.module_from_spec(_spec)
_spec.loader.exec_module(_impl)
_sys.modules[__name__].__dict__.update({k: v for k, v in _impl.__dict__.items() if not k.startswith("__")})
