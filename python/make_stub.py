"""Writes the type stubs of the built extension:
make_stub.py <folder of _ferrite*.so> <out.pyi> [submodule ...]

nanobind's stubgen imports the module as the top-level `_ferrite`; the stub lives in the
package as ferrite/_ferrite.pyi, so its imports of the submodules become relative. Each
submodule named (linalg, fft, nn, ...) gets its own stub beside it (ferrite/linalg.pyi), the
package's name for it (ferrite/__init__.py registers ferrite.linalg etc.).
"""
import os
import re
import subprocess
import sys

folder, out, submodules = sys.argv[1], sys.argv[2], sys.argv[3:]


def stubgen(module, path):
    subprocess.run(
        [sys.executable, "-m", "nanobind.stubgen", "-q", "-i", folder, "-m", module, "-o", path],
        check=True,
    )
    with open(path) as f:
        return f.read()


def alias_dtype_device(text):
    """Tensor (and Generator) have properties named dtype and device, which would shadow the
    classes inside their bodies: annotations use aliases instead."""
    text = re.sub(r"(:|->|\|) dtype\b(?!\()", r"\1 _DType", text)
    text = re.sub(r"(:|->) device \| str\b", r"\1 _Device | str", text)
    return re.sub(r"(:|->) device\b(?![(.])", r"\1 _Device", text)


text = stubgen("_ferrite", out)
text = text.replace("from _ferrite import", "from . import").replace("from _ferrite.", "from .")
text = text.replace("_ferrite.", "")
text = alias_dtype_device(text)
text += "\n_DType: TypeAlias = dtype\n_Device: TypeAlias = device\n"
text = text.replace("from typing import ", "from typing import TypeAlias, ", 1)
with open(out, "w") as f:
    f.write(text)

for name in submodules:
    path = os.path.join(os.path.dirname(out), name + ".pyi")
    sub = stubgen("_ferrite." + name, path)
    # The submodule refers to the extension's classes as _ferrite.Tensor: ferrite/_ferrite.pyi.
    # (_ferrite.random.Generator resolves through _ferrite.pyi's import of random.)
    sub = re.sub(r"^import _ferrite(\.\w+)?\n", "", sub, flags=re.M)
    sub = alias_dtype_device(sub)
    header, _, body = sub.partition("\n\n")  # after the docstring
    sub = header + "\n\nfrom . import _ferrite\nfrom ._ferrite import _Device, _DType\n" + body
    if name == "nn":  # nn.functional is made in Python (ferrite/__init__.py)
        sub += "\nfrom types import ModuleType as _ModuleType\n\nfunctional: _ModuleType\n"
    with open(path, "w") as f:
        f.write(sub)
