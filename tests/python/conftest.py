# Import the installed dash_attn (pip install --no-build-isolation .); without an install, fall
# back to the source tree's python/ folder, where only the pure-Python parts (argument checks,
# fake/meta implementations) work unless the extension was built in place.
import os
import sys

try:
    import dash_attn  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
