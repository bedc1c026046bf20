"""Writes the type stub of the built extension: make_stub.py <folder of _ferrite*.so> <out.pyi>.

nanobind's stubgen imports the module as the top-level `_ferrite`; the stub lives in the
package as ferrite/_ferrite.pyi, so its imports of the submodules become relative.
"""
import re
import subprocess
import sys

folder, out = sys.argv[1], sys.argv[2]
subprocess.run(
    [sys.executable, "-m", "nanobind.stubgen", "-q", "-i", folder, "-m", "_ferrite", "-o", out],
    check=True,
)
with open(out) as f:
    text = f.read()
text = text.replace("from _ferrite import", "from . import").replace("_ferrite.", "")
# Tensor has properties named dtype and device, which would shadow the classes inside its
# body: annotations use aliases instead.
text = re.sub(r"(:|->|\|) dtype\b(?!\()", r"\1 _DType", text)
text = re.sub(r"(:|->) device \| str\b", r"\1 _Device | str", text)
text = re.sub(r"(:|->) device\b(?![(.])", r"\1 _Device", text)
text += "\n_DType: TypeAlias = dtype\n_Device: TypeAlias = device\n"
text = text.replace("from typing import ", "from typing import TypeAlias, ", 1)
with open(out, "w") as f:
    f.write(text)
