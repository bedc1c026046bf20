// conv2d on the CPU backend: im2col + Eigen GEMM (cpu_conv2d.cpp).
#pragma once

#include "ferrite/backend_families/conv_ops.hpp"

namespace ferrite::cpu {

void cpu_conv2d_forward(const Conv2dDesc& d, const Buffer& x, const Buffer& weight, const Buffer* bias,
                        const Buffer& out);
void cpu_conv2d_backward_input(const Conv2dDesc& d, const Buffer& grad, const Buffer& weight, const Buffer& grad_x);
void cpu_conv2d_backward_weight(const Conv2dDesc& d, const Buffer& grad, const Buffer& x, const Buffer& grad_weight);

}  // namespace ferrite::cpu
