# Type stub of the package: the extension's names (ferrite/_ferrite.pyi, generated at build
# time from the bindings) and the ones ferrite/__init__.py adds.
from . import _ferrite as _ferrite
from ._ferrite import *
from ._ferrite import cuda as cuda, dtype, nn as nn

__version__: str
bool: dtype
float: dtype
double: dtype
half: dtype
int: dtype
long: dtype
cfloat: dtype
cdouble: dtype
