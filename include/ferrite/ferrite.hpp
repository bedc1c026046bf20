// Everything a user of ferrite needs.
#pragma once

#include "ferrite/backend.hpp"
#include "ferrite/config.hpp"
#include "ferrite/cuda.hpp"
#include "ferrite/device.hpp"
#include "ferrite/dtype.hpp"
#include "ferrite/elementwise.hpp"
#include "ferrite/error.hpp"
#include "ferrite/factories.hpp"
#include "ferrite/half.hpp"
#include "ferrite/inplace.hpp"
#include "ferrite/matmul.hpp"
#include "ferrite/operators.hpp"
#include "ferrite/print.hpp"
#include "ferrite/reduction.hpp"
#include "ferrite/shape.hpp"
#include "ferrite/tensor.hpp"
