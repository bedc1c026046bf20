# Type stub of the package: the extension's names (ferrite/_ferrite.pyi, generated at build
# time from the bindings) and the ones ferrite/__init__.py adds.
from . import _ferrite as _ferrite
from ._ferrite import *
from ._ferrite import cuda as cuda, dtype, fft as fft, linalg as linalg, nn as nn, optim as optim
from ._ferrite import random as random, return_types as return_types, sparse as sparse

__version__: str
bool: dtype
float: dtype
double: dtype
half: dtype
int: dtype
long: dtype
cfloat: dtype
cdouble: dtype
