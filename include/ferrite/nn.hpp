// Neural-network ops (issue #17), one header per group.
#pragma once

#include "ferrite/nn_conv.hpp"
